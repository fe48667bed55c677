"""The actor side of the ``ray`` sandbox as a plain object (no Ray): programs and families cached
by hash (an unknown hash asks for the text), sessions addressed by id, and calls on a session this
actor does not hold answered ``lost``."""

from __future__ import annotations

import pytest

from sandbox.ray_host import FamilySources, SandboxHost
from spade_core.records import StepResult

PROGRAM = '''
class CountEnv:
    def reset(self, seed=None):
        self.n = 0
        return f"seed {seed}", {}
    def step(self, action):
        self.n += 1
        return action, 0.5, self.n >= 2, False, {}
'''


@pytest.fixture(scope="module")
def host():
    made = SandboxHost({"workers": 1})
    yield made
    made.shutdown()


@pytest.mark.timeout(120)
def test_programs_arrive_once_and_sessions_answer_by_id(host):
    assert host.open_many("sha-a", None, None, None, 1, None) == ("missing", "program")
    status, opened = host.open_many("sha-a", PROGRAM, None, None, 2, None)
    assert status == "ok" and [env for _sid, env in opened] == ["CountEnv", "CountEnv"]
    status, more = host.open_many("sha-a", None, None, None, 1, None)  # the hash is enough now
    assert status == "ok" and len({sid for sid, _ in opened + more}) == 3
    assert host.stats()["received"] == {"sha-a": 1} and host.stats()["sessions"] == 3
    first, second = opened[0][0], opened[1][0]
    assert host.call(first, "reset", 3) == ("ok", ("seed 3", {}))
    host.call(second, "reset", 4)
    replies = host.step_many([(first, "a"), (999, "b"), (second, "c")])
    assert [kind for kind, _ in replies] == ["ok", "lost", "ok"]
    assert isinstance(replies[0][1], StepResult) and replies[2][1].observation == "c"
    host.close_sessions([first, second, more[0][0]])
    kind, reason = host.call(first, "step", "x")
    assert kind == "lost" and host.epoch in reason


@pytest.mark.timeout(120)
def test_unknown_families_and_refused_programs(host):
    assert host.open_many("sha-a", PROGRAM, "fam", None, 1, None) == ("missing", "family")
    family = FamilySources(prelude="GREETING = 'hi'\n")
    status, opened = host.open_many("sha-g", "class GEnv:\n    def reset(self, seed=None):\n"
                                    "        return GREETING, {}\n    def step(self, a):\n"
                                    "        return a, 0.0, True, False, {}\n",
                                    "fam", family, 1, None)
    assert status == "ok"
    assert host.call(opened[0][0], "reset", 1) == ("ok", ("hi", {}))
    host.close_sessions([opened[0][0]])
    kind, verdict = host.open_many("sha-bad", "import os\n", None, None, 1, None)
    assert kind == "error" and verdict.category == "forbidden"
