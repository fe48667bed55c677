"""A reasoning-gym program whose config puts a payload into an expression that
basic_arithmetic's generator eval()s. Guarded: the generator's eval takes arithmetic only, so
reset fails with an error instead of running it."""
# expect: runtime_error


class HostileArithmeticEnv(ReasoningGymEnv):
    dataset = "basic_arithmetic"
    config = {"operators": ("+", "*__import__('os').kill(__import__('os').getpid(), 9)*")}
