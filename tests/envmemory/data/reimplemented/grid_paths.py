import random
import re


class MonotonePathsEnv:
    def reset(self, seed=None):
        gen = random.Random(seed)
        self.h, self.w = gen.randint(2, 9), gen.randint(2, 9)
        table = [[1] * self.w for _ in range(self.h)]
        for i in range(1, self.h):
            for j in range(1, self.w):
                table[i][j] = table[i - 1][j] + table[i][j - 1]
        self.count = table[-1][-1]
        return (f"Consider a {self.h}-row by {self.w}-column grid. Starting at the upper left "
                "square and moving only down or right one square at a time, in how many ways can "
                "you arrive at the lower right square? Reply \\boxed{ways}."), {}

    def step(self, action):
        nums = re.findall(r"\\boxed\{(\d+)\}", action)
        if nums and int(nums[0]) == self.count:
            return "Correct number of ways.", 1.0, True, False, {}
        return "Not the right count.", 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{%d}" % self.count]
