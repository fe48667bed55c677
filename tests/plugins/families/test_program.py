"""A program's shape read from its AST without running it: the environment classes, their bases,
methods and imports, the one leaf environment class, the static problems (each saying what would
be right), and the environment class found among the names a program defined."""

from __future__ import annotations

import pytest

from plugins.families.program import (find_env_class, leaf_env_classes, program_shape,
                                      static_problems)

GOOD = ("import random\nfrom typing import Any\n\n"
        "class HelperEnv:\n    def reset(self, seed=None):\n        return '', {}\n"
        "class GameEnv(HelperEnv):\n    def step(self, action):\n        pass\n"
        "    def solution(self):\n        return '1'\n"
        "class Notes:\n    pass\n")


def test_the_shape_lists_env_classes_bases_methods_and_imports():
    shape = program_shape(GOOD)
    assert shape.env_classes == ("HelperEnv", "GameEnv")
    assert shape.bases["GameEnv"] == ("HelperEnv",)
    assert shape.methods["GameEnv"] == ("step", "solution")
    assert shape.imports == ("random", "typing")
    assert leaf_env_classes(shape) == ["GameEnv"]
    with pytest.raises(SyntaxError):
        program_shape("class XEnv(:\n")


def test_static_problems_say_what_would_be_right():
    assert static_problems(GOOD) == []
    assert static_problems("class XEnv(\n")[0].startswith("line 1: syntax error")
    assert "no environment class" in static_problems("class Game:\n    pass\n")[0]
    assert "several environment classes (AEnv, BEnv)" in static_problems(
        "class AEnv:\n    pass\nclass BEnv:\n    pass\n")[0]
    assert static_problems("class XEnv:\n    def reset(self, seed=None):\n        pass\n") == [
        "class XEnv lacks step, solution(): an environment needs reset(seed=None), step(action) "
        "and solution()"]
    # An injected base provides its methods, and is not itself the environment.
    assert static_problems("class XEnv(BaseEnv):\n    def solution(self):\n        pass\n",
                           base_classes={"BaseEnv": ("reset", "step")}) == []


def test_the_env_class_is_found_among_defined_names_leaving_out_injected_ones():
    class BaseEnv:
        pass

    class GameEnv(BaseEnv):
        pass

    namespace = {"BaseEnv": BaseEnv, "GameEnv": GameEnv, "limit": 3}
    assert find_env_class(namespace, injected=["BaseEnv"]) is GameEnv
    with pytest.raises(LookupError):
        find_env_class({"limit": 3})
