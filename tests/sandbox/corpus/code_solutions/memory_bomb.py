# expect: failed
# why: a list far past RLIMIT_AS is a MemoryError inside the worker
blocks = [bytearray(1 << 30) for _ in range(64)]
n = int(input())
print(sum(map(int, input().split())))
