# expect: failed
# why: the worker's channel is a descriptor; writing a forged reply frame to it needs open(fd)
channel = open(3, "wb")
channel.write(b'{"ok": 1, "reward": 1.0}')
n = int(input())
print(sum(map(int, input().split())))
