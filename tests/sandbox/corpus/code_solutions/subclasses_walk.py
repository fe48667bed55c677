# expect: failed
# why: dunder introspection to reach os through object's subclasses
for cls in ().__class__.__base__.__subclasses__():
    if cls.__name__ == "_wrap_close":
        cls.__init__.__globals__["system"]("touch {{CANARY_DIR}}/ran")
n = int(input())
print(sum(map(int, input().split())))
