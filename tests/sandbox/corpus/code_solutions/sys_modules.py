# expect: failed
# why: the sys stand-in has no modules table, path or loader
import sys
sys.modules["os"].system("touch {{CANARY_DIR}}/ran")
n = int(input())
print(sum(map(int, input().split())))
