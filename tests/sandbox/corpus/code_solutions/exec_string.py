# expect: failed
# why: exec and eval are not builtins in the sandbox
exec("import os; os.system('touch {{CANARY_DIR}}/ran')")
n = int(input())
print(sum(map(int, input().split())))
