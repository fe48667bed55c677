# expect: failed
# why: import os and delete a host file
import os
os.remove("{{CANARY_DIR}}/victim")
n = int(input())
print(sum(map(int, input().split())))
