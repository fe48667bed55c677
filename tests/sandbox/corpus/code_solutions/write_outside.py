# expect: failed
# why: write a file on the host through open()
with open("{{CANARY_DIR}}/ran", "w") as handle:
    handle.write("escaped")
n = int(input())
print(sum(map(int, input().split())))
