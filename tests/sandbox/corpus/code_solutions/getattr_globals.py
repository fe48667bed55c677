# expect: forbidden
# why: input() is a function of the scorer: its __globals__ would reach the scorer's modules
scorer = getattr(input, "__globals__")
scorer["_sys"].modules["os"].system("touch {{CANARY_DIR}}/ran")
n = int(input())
print(sum(map(int, input().split())))
