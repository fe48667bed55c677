"""Shop-keeping game using json, copy, datetime, bisect, generators, properties and classmethods."""

import bisect
import copy
import json
from datetime import date, timedelta


class Ledger:
    def __init__(self, items):
        self._items = dict(items)
        self.__audit = []

    @property
    def total(self):
        return sum(self._items.values())

    @classmethod
    def empty(cls):
        return cls({})

    @staticmethod
    def normalise(name):
        return name.strip().lower()

    def add(self, name, qty):
        key = self.normalise(name)
        self._items[key] = self._items.get(key, 0)
        self._items[key] += qty
        self.__audit.append((key, qty))
        return len(self.__audit)

    def names(self):
        for name in sorted(self._items):
            yield name


class InventoryEnv:
    PRICES = [1, 5, 10, 20, 50]

    def __init__(self):
        self.ledger = Ledger.empty()
        self._target = {}
        self._turn = 0

    def reset(self, seed=None):
        seed = seed or 0
        self.ledger = Ledger({"apple": 1})
        self._target = {"apple": 1 + seed % 3, "pear": 2}
        self._turn = 0
        snapshot = copy.deepcopy(self._target)
        day = date(2024, 1, 1) + timedelta(days=seed % 30)
        tier = bisect.bisect(self.PRICES, seed % 60)
        return (f"{day.isoformat()} tier {tier}. Stock to reach: {json.dumps(snapshot, sort_keys=True)}. "
                "Actions: \\boxed{add NAME QTY}."), {"target": snapshot}

    def step(self, action):
        self._turn += 1
        inner = action.strip()[7:-1] if action.startswith("\\boxed{") else ""
        parts = inner.split()
        if len(parts) == 3 and parts[0] == "add" and parts[2].isdigit():
            self.ledger.add(parts[1], int(parts[2]))
        have = {name: self.ledger._items[name] for name in self.ledger.names()}
        done = have == self._target
        return (json.dumps(have, sort_keys=True), 1.0 if done else 0.0, done,
                self._turn >= 8, {"total": self.ledger.total})

    def solution(self):
        actions = []
        for name, qty in sorted(self._target.items()):
            need = qty - self.ledger._items.get(name, 0)
            if need > 0:
                actions.append(f"\\boxed{{add {name} {need}}}")
        return actions
