# expect: failed
# why: raises the recursion limit past the cap and recurses without end
import sys
sys.setrecursionlimit(10 ** 9)


def down(n):
    return down(n + 1)


down(0)
