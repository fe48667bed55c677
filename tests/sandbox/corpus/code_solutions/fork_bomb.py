# expect: failed
# why: os is not importable; RLIMIT_NPROC would stop the forks anyway
import os
while True:
    os.fork()
