"""Logic, single turn: knights always tell the truth, knaves always lie; name every knight."""

import random

NAMES = ["Ada", "Ben", "Cleo", "Dov", "Eli"]


def statement_holds(kind, target, value, roles):
    """Whether a statement is true under ``roles`` (dict name -> True for knight)."""
    if kind == "is_knight":
        return roles[target] == value
    if kind == "same":
        a, b = target
        return (roles[a] == roles[b]) == value
    if kind == "count":
        return sum(1 for v in roles.values() if v) == value
    return False


def describe(kind, target, value):
    if kind == "is_knight":
        return f"{target} is a {'knight' if value else 'knave'}."
    if kind == "same":
        a, b = target
        return f"{a} and {b} are {'the same kind' if value else 'different kinds'}."
    return f"Exactly {value} of us {'is a knight' if value == 1 else 'are knights'}."


class KnightsAndKnavesEnv:
    """Three or four islanders each make one statement; exactly one assignment of roles is
    consistent, and the agent names the knights."""

    def __init__(self, max_turns=2, **kwargs):
        self.max_turns = max_turns
        self.turn_count = 0
        self.people = []
        self.statements = []
        self.knights = []
        self.reset()

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.turn_count = 0
        while True:
            count = rng.choice([3, 4])
            self.people = NAMES[:count]
            truth = {p: rng.random() < 0.5 for p in self.people}
            self.statements = []
            for speaker in self.people:
                kind = rng.choice(["is_knight", "same", "count"])
                others = [p for p in self.people if p != speaker]
                if kind == "is_knight":
                    target = rng.choice(others)
                    fact = truth[target]
                elif kind == "same":
                    target = tuple(rng.sample(self.people, 2))
                    fact = truth[target[0]] == truth[target[1]]
                else:
                    target = None
                    fact = sum(1 for v in truth.values() if v)
                if kind == "count":
                    value = fact if truth[speaker] else rng.choice(
                        [n for n in range(count + 1) if n != fact])
                else:
                    value = fact if truth[speaker] else not fact
                self.statements.append((speaker, kind, target, value))
            solutions = []
            for mask in range(2 ** count):
                roles = {p: bool(mask >> i & 1) for i, p in enumerate(self.people)}
                if all(statement_holds(k, t, v, roles) == roles[s]
                       for s, k, t, v in self.statements):
                    solutions.append(roles)
            if len(solutions) == 1 and 0 < sum(solutions[0].values()) < count:
                break
        self.knights = [p for p in self.people if solutions[0][p]]
        return self.task(), {}

    def task(self):
        lines = [f"{s}: \"{describe(k, t, v)}\"" for s, k, t, v in self.statements]
        return ("On this island knights always tell the truth and knaves always lie.\n"
                + "\n".join(lines)
                + "\nWho are the knights? Answer with their names separated by commas, "
                  "e.g. \\boxed{Ada, Ben}.")

    def solution(self):
        return ", ".join(self.knights)

    def step(self, action):
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        given = extract_boxed(action)
        if given is None:
            return "Answer with \\boxed{names}.\n" + self.task(), 0.0, False, truncated, {}
        named = sorted(n.strip().lower() for n in given.replace(" and ", ",").split(",")
                       if n.strip())
        if named == sorted(k.lower() for k in self.knights):
            return "Correct!", 1.0, True, False, {}
        if truncated:
            return f"Wrong. The knights were {self.solution()}.", 0.0, False, True, {}
        return ("That assignment contradicts at least one statement.\n" + self.task(),
                0.0, False, False, {})

    def close(self):
        pass
