# expect: interface
class Game:
    def reset(self, seed=None):
        return "hi", {}
