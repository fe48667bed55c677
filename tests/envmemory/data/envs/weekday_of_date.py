import datetime
import random
import re


class WeekdayOfDateEnv:
    def __init__(self):
        self.date = datetime.date(2000, 1, 1)

    def reset(self, seed=None):
        rng = random.Random(seed)
        start = datetime.date(1900, 1, 1)
        self.date = start + datetime.timedelta(days=rng.randint(0, 60000))
        text = (f"On which day of the week did {self.date.strftime('%B %d, %Y')} fall? "
                "Answer with the English weekday name, e.g. \\boxed{Monday}.")
        return text, {}

    def _weekday(self):
        return self.date.strftime("%A")

    def step(self, action):
        match = re.search(r"\\boxed\{([A-Za-z]+)\}", action)
        if match and match.group(1).capitalize() == self._weekday():
            return "Correct weekday.", 1.0, True, False, {}
        return "Wrong weekday.", 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{" + self._weekday() + "}"]
