# expect: failed
# why: __import__ is a dunder name (refused when compiled)
__import__("os").system("touch {{CANARY_DIR}}/ran")
n = int(input())
print(sum(map(int, input().split())))
