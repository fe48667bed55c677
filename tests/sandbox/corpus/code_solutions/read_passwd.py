# expect: failed
# why: open() reaches only stdin (fd 0); any path is a PermissionError
print(open("/etc/passwd").read())
n = int(input())
print(sum(map(int, input().split())))
