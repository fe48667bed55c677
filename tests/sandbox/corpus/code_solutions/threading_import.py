# expect: failed
# why: threading is not importable; RLIMIT_NPROC=1 allows no thread anyway
import threading
threading.Thread(target=print).start()
n = int(input())
print(sum(map(int, input().split())))
