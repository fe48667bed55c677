import datetime
import random
import re


class AddMinutesEnv:
    def reset(self, seed=None):
        rng = random.Random(seed)
        self.start = datetime.datetime(2024, 1, 1, rng.randint(0, 23), rng.randint(0, 59))
        self.minutes = rng.randint(1, 2000)
        self.end = self.start + datetime.timedelta(minutes=self.minutes)
        return (f"The time is {self.start:%H:%M} (24-hour format). Add {self.minutes} minutes. "
                "What does the clock read now? Format \\boxed{HH:MM}."), {}

    def step(self, action):
        m = re.search(r"\\boxed\{\s*(\d+):(\d\d)\s*\}", action)
        if m and (int(m.group(1)), int(m.group(2))) == (self.end.hour, self.end.minute):
            return "That is the right time.", 1.0, True, False, {}
        return "That is not the right time.", 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{" + self.end.strftime("%H:%M") + "}"]
