"""The compile policy, in-process (no OS isolation needed to test the filter): ordinary
environment code is accepted, forbidden constructs are named with their line."""

from __future__ import annotations

import pytest

from fakes.restricted import run_restricted as run

from sandbox.policy import CompileFailure, compile_program


ACCEPTED = {
    "private_attributes_and_augassign": """
class CounterEnv:
    def __init__(self):
        self._state = {"n": 0}
        self.steps = 0
        self.grid = [[0, 0], [0, 0]]
    def bump(self):
        self.steps += 1
        self._state["n"] += 2
        self.grid[1][0] -= 3
        self.grid[0][0:2] += []
        return self.steps, self._state["n"], self.grid[1][0]
RESULT = CounterEnv().bump()
""",
    "name_mangling": """
class Vault:
    def __init__(self):
        self.__secret = 41
    def peek(self):
        self.__secret += 1
        return self.__secret
RESULT = Vault().peek()
""",
    "dataclass_enum_typing": """
from dataclasses import dataclass, field
from enum import Enum, auto
from typing import List, Optional
class Colour(Enum):
    RED = auto()
    BLUE = auto()
@dataclass
class Card:
    colour: Colour
    value: int = 0
    tags: List[str] = field(default_factory=list)
    nxt: Optional["Card"] = None
card = Card(Colour.BLUE, 3)
card.value += 1
RESULT = (card.colour.name, card.value, Colour.RED.value)
""",
    "fstrings_comprehensions_generators_lambda": """
def gen(n):
    for i in range(n):
        yield i * i
squares = [x for x in gen(4) if x % 2 == 0]
table = {k: v for k, v in zip("ab", (1, 2))}
key = lambda pair: -pair[1]
RESULT = f"{squares!r}|{sorted(table.items(), key=key)}|{3.14159:.2f}|{'x':>3}"
""",
    "try_except_and_raise": """
class GameError(Exception):
    pass
def risky():
    try:
        raise GameError("bad move")
    except GameError as exc:
        return str(exc)
    finally:
        pass
RESULT = risky()
""",
    "random_seeding": """
import random
random.seed(5)
a = random.random()
rng = random.Random(5)
RESULT = (a == rng.random(), random.Random(1).randint(1, 6) == random.Random(1).randint(1, 6))
""",
    "allowed_modules": """
import json, re, math, cmath, itertools, functools, collections, heapq, bisect, fractions
import decimal, statistics, copy, textwrap, datetime, string
from collections import Counter, deque, namedtuple
from functools import lru_cache, reduce
Point = namedtuple("Point", "x y")
p = Point(1, 2)._replace(x=5)
RESULT = (json.dumps({"a": 1}), re.sub("a", "b", "aa"), math.isqrt(17), list(itertools.pairwise("abc"))[0],
          reduce(lambda a, b: a + b, [1, 2, 3]), Counter("aab").most_common(1), heapq.nsmallest(1, [3, 1]),
          bisect.bisect([1, 3], 2), str(fractions.Fraction(1, 3)), str(decimal.Decimal("1.5")),
          statistics.mean([1, 3]), copy.deepcopy([1]), textwrap.shorten("a b c d e f", 9),
          datetime.date(2024, 1, 1).isoformat(), string.ascii_lowercase[:3], p.x,
          "{} {name}".format(1, name="n"), "{a[0]}".format_map({"a": [7]}))
""",
    "properties_classmethods_super": """
class Base:
    def __init__(self, n):
        self.n = n
    def __eq__(self, other):
        return isinstance(other, Base) and self.n == other.n
    def __hash__(self):
        return hash(self.n)
class Child(Base):
    def __init__(self):
        super().__init__(2)
    @property
    def double(self):
        return self.n * 2
    @classmethod
    def make(cls):
        return cls()
    @staticmethod
    def name():
        return type(Child()).__name__
RESULT = (Child.make().double, Child.name(), Child() == Child(), len({Child(), Child()}))
""",
    "main_guard_and_print": """
def show():
    print("hello", 1)
    return printed
RESULT = show()
if __name__ == "__main__":
    RESULT = "not main"
""",
    "annotated_attributes_and_walrus": """
class S:
    def __init__(self):
        self.items: list = []
        self.count: int
    def add(self, x):
        if (n := len(self.items)) < 3:
            self.items.append(x)
        return n
s = S()
RESULT = [s.add(i) for i in range(5)]
""",
}

EXPECTED = {
    "private_attributes_and_augassign": (1, 2, -3),
    "name_mangling": 42,
    "dataclass_enum_typing": ("BLUE", 4, 1),
    "fstrings_comprehensions_generators_lambda": "[0, 4]|[('b', 2), ('a', 1)]|3.14|  x",
    "try_except_and_raise": "bad move",
    "random_seeding": (True, True),
    "properties_classmethods_super": (4, "Child", True, 1),
    "main_guard_and_print": "hello 1\n",
    "annotated_attributes_and_walrus": [0, 1, 2, 3, 3],
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_ordinary_code_is_accepted(name):
    env = run(ACCEPTED[name])
    if name in EXPECTED:
        assert env["RESULT"] == EXPECTED[name]


REFUSED_AT_COMPILE = {
    "x = ().__class__": "__class__",
    "f = lambda: 0\ng = f.__globals__": "__globals__",
    "g = (i for i in [])\nf = g.gi_frame": "gi_frame",
    "import os": "os",
    "from os import path": "os",
    "import importlib": "importlib",
    "from random import _inst": "_inst",
    "from . import thing": "relative",
    "def f(_getattr_=None):\n    pass": "_getattr_",
    "x = __builtins__": "__builtins__",
    "eval('1')": "Eval",
    "async def f():\n    pass": "AsyncFunctionDef",
    "class A(metaclass=type):\n    pass": "metaclass",
    "class A:\n    def __getattribute__(self, name):\n        return 1": "__getattribute__",
    "class A:\n    def __reduce__(self):\n        return 1": "__reduce__",
}


@pytest.mark.parametrize("source", sorted(REFUSED_AT_COMPILE))
def test_forbidden_constructs_are_named_with_their_line(source):
    failure = compile_program("\n" * 2 + source)
    assert isinstance(failure, CompileFailure)
    assert failure.category == "forbidden"
    assert REFUSED_AT_COMPILE[source] in failure.message
    assert failure.line is not None and failure.line >= 3


def test_syntax_errors_are_syntax():
    failure = compile_program("def broken(:\n    pass\n")
    assert isinstance(failure, CompileFailure) and failure.category == "syntax"
    assert failure.line == 1
    deep = compile_program("x = " + "(" * 300 + "1" + ")" * 300)
    assert isinstance(deep, CompileFailure) and deep.category == "syntax"
    huge = compile_program("x = 1\n" * 100_000)
    assert isinstance(huge, CompileFailure) and "limit" in huge.message

