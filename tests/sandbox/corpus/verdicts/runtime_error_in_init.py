# expect: runtime_error
class CrashyEnv:
    def __init__(self):
        self.table = {}
        self.first = self.table["missing"]

    def reset(self, seed=None):
        return "x", {}
