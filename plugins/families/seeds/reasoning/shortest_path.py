"""Algorithmic, single turn: the length of the shortest route in a small weighted road map."""

import random


class ShortestPathEnv:
    """A connected undirected graph with positive weights; the agent reports the shortest
    distance between two towns (Dijkstra, or careful enumeration)."""

    def __init__(self, max_turns=3, **kwargs):
        self.max_turns = max_turns
        self.turn_count = 0
        self.towns = []
        self.roads = []
        self.start = self.goal = ""
        self.distance = 0
        self.reset()

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.turn_count = 0
        letters = "ABCDEFGHIJ"
        count = rng.randint(6, 8)
        self.towns = list(letters[:count])
        order = self.towns[:]
        rng.shuffle(order)
        edges = {}
        for i in range(1, count):
            a, b = order[i], order[rng.randrange(i)]
            edges[tuple(sorted((a, b)))] = rng.randint(2, 20)
        while len(edges) < count + 4:
            a, b = rng.sample(self.towns, 2)
            edges.setdefault(tuple(sorted((a, b))), rng.randint(2, 20))
        self.roads = sorted((a, b, w) for (a, b), w in edges.items())
        self.start, self.goal = rng.sample(self.towns, 2)
        self.distance = self.shortest(self.start, self.goal)
        return self.task(), {}

    def shortest(self, source, target):
        best = {t: None for t in self.towns}
        best[source] = 0
        done = set()
        while len(done) < len(self.towns):
            current = None
            for t in self.towns:
                if t not in done and best[t] is not None and (
                        current is None or best[t] < best[current]):
                    current = t
            if current is None:
                break
            done.add(current)
            for a, b, w in self.roads:
                if current in (a, b):
                    other = b if current == a else a
                    candidate = best[current] + w
                    if best[other] is None or candidate < best[other]:
                        best[other] = candidate
        return best[target]

    def task(self):
        roads = "\n".join(f"  {a} - {b}: {w} km" for a, b, w in self.roads)
        return (f"Roads (two-way):\n{roads}\nWhat is the length of the shortest route from "
                f"{self.start} to {self.goal}? Answer as \\boxed{{km}}.")

    def solution(self):
        return str(self.distance)

    def step(self, action):
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        given = extract_boxed(action)
        if given is None:
            return "Answer with \\boxed{km}.\n" + self.task(), 0.0, False, truncated, {}
        value = parse_number(given.replace("km", ""))
        if value is not None and value == self.distance:
            return "Correct!", 1.0, True, False, {}
        if truncated:
            return f"Wrong. The shortest route is {self.distance} km.", 0.0, False, True, {}
        hint = "shorter" if value is not None and value > self.distance else "different"
        return (f"Not the shortest: a {hint} route exists.\n" + self.task(), 0.0, False, False, {})

    def close(self):
        pass
