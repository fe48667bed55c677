import random
import re


class ClockAddEnv:
    def __init__(self):
        self.hour = 0
        self.minute = 0
        self.delta = 0

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.hour = rng.randint(0, 23)
        self.minute = rng.randint(0, 59)
        self.delta = rng.randint(1, 2000)
        return (f"A 24-hour clock shows {self.hour:02d}:{self.minute:02d}. What time does it show "
                f"{self.delta} minutes later? Answer as \\boxed{{HH:MM}}."), {}

    def _result(self):
        total = (self.hour * 60 + self.minute + self.delta) % (24 * 60)
        return f"{total // 60:02d}:{total % 60:02d}"

    def step(self, action):
        match = re.search(r"\\boxed\{(\d{1,2}):(\d{2})\}", action)
        if match and f"{int(match.group(1)):02d}:{match.group(2)}" == self._result():
            return "Correct time.", 1.0, True, False, {}
        return "Incorrect time.", 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{" + self._result() + "}"]
