# expect: interface
class FirstEnv:
    def reset(self, seed=None):
        return "a", {}


class SecondEnv:
    def reset(self, seed=None):
        return "b", {}
