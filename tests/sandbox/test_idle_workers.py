"""A worker whose instances have all closed waits for a later ``open_many`` of the same program
(``idle_workers``, sandbox/idle_workers.py): fresh instances, the same verdicts, never a worker
that failed, never another program's worker, and at most ``idle_workers`` of them kept."""

from __future__ import annotations

import time

import pytest

from sandbox.idle_workers import REUSE_INSTANCES
from spade_core.errors import SandboxError
from spade_core.validation import validate

#: Module-level state: every instance runs the module afresh, so each first reset says n=1.
COUNTER = '''
SEEN = [0]

class CounterEnv:
    def reset(self, seed=None):
        SEEN[0] += 1
        return "n=" + str(SEEN[0]), {}

    def step(self, action):
        if action == "spin":
            while True:
                pass
        if action == "raise":
            raise ValueError("no")
        return "ok", 1.0, True, False, {}

    def solution(self):
        return "done"
'''


@pytest.fixture(scope="module")
def box():
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    sandbox = build_sandbox(ProcessSandboxOptions(workers=1, idle_workers=2, step_seconds=1.0))
    yield sandbox
    sandbox.close()


def _close(sessions):
    for session in sessions:
        session.close()


def _worker(sessions):
    return sessions[0].link.channel


def test_a_closed_worker_serves_the_next_open_of_its_program(box):
    box.idle.clear()
    first = box.open_many(COUNTER, 3)
    assert [s.reset(1)[0] for s in first] == ["n=1"] * 3
    _close(first)
    assert len(box.idle) == 1
    second = box.open_many(COUNTER, 5)
    assert _worker(second) is _worker(first)  # no fork: the same worker
    assert [s.index for s in second] == [3, 4, 5, 6, 7]
    # fresh instances: their own module globals, as in a new worker
    assert [o for o, _ in box.reset_many([(s, 2) for s in second])] == ["n=1"] * 5
    assert [r.reward for r in box.step_many([(s, "go") for s in second])] == [1.0] * 5
    with pytest.raises(SandboxError):
        first[0].reset(1)  # the first lease's sessions stay closed
    _close(second)


def test_another_program_gets_a_worker_of_its_own(box):
    box.idle.clear()
    first = box.open_many(COUNTER, 2)
    _close(first)
    other = box.open_many(COUNTER.replace("n=", "m="), 2)
    assert _worker(other) is not _worker(first)
    assert other[0].reset(1)[0] == "m=1"
    _close(other)


@pytest.mark.parametrize(("action", "category", "kept"), [
    ("spin", "timeout", False),       # a worker-wide failure: the worker is killed
    ("raise", "runtime_error", True),  # a program error ends only its instance
], ids=["worker-failed", "program-error"])
def test_a_worker_is_kept_only_when_it_did_not_fail(box, action, category, kept):
    box.idle.clear()
    sessions = box.open_many(COUNTER, 2)
    sessions[0].reset(1)
    with pytest.raises(SandboxError) as failed:
        sessions[0].step(action)
    assert failed.value.verdict.category == category
    _close(sessions)
    assert len(box.idle) == int(kept)
    again = box.open_many(COUNTER, 2)
    assert (_worker(again) is _worker(sessions)) is kept
    assert again[1].reset(1)[0] == "n=1"
    _close(again)


def test_at_most_idle_workers_are_kept(box):
    box.idle.clear()
    opened = [box.open_many(COUNTER.replace("n=", f"p{i}="), 2) for i in range(3)]
    for sessions in opened:
        _close(sessions)
    assert len(box.idle) == 2  # the first program's worker was ended
    again = box.open_many(COUNTER.replace("n=", "p0="), 2)
    assert _worker(again) is not _worker(opened[0])
    reused = box.open_many(COUNTER.replace("n=", "p2="), 2)
    assert _worker(reused) is _worker(opened[2])
    _close(again)
    _close(reused)


def test_a_worker_killed_while_idle_is_replaced(box):
    box.idle.clear()
    first = box.open_many(COUNTER, 2)
    _close(first)
    channel = _worker(first)
    channel.kill()
    deadline = time.monotonic() + 10
    while channel.exit_status(0.1) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    again = box.open_many(COUNTER, 2)
    assert _worker(again) is not channel
    assert again[0].reset(1)[0] == "n=1"
    _close(again)


def test_a_worker_is_reused_up_to_its_cap(box):
    box.idle.clear()
    first = box.open_many(COUNTER, REUSE_INSTANCES - 2)
    _close(first)
    past_cap = box.open_many(COUNTER, 3)  # 62 + 3 > the cap: a fresh worker
    assert _worker(past_cap) is not _worker(first)
    assert len(box.idle) == 0
    _close(past_cap)


def test_validation_then_plays_give_the_verdicts_and_results_of_fresh_workers(box):
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    fresh = build_sandbox(ProcessSandboxOptions(workers=1, idle_workers=0, step_seconds=1.0))
    try:
        programs = [COUNTER, COUNTER.replace('return "done"', 'return "nope"')]
        assert [v.category for v in validate(box, programs)] == \
            [v.category for v in validate(fresh, programs)]
        for sandbox in (box, fresh):
            sessions = sandbox.open_many(COUNTER, 4)
            assert [o for o, _ in sandbox.reset_many([(s, 3) for s in sessions])] == ["n=1"] * 4
            _close(sessions)
        assert len(fresh.idle) == 0
    finally:
        fresh.close()
