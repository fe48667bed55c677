"""The host side of a session against a fake worker channel that sends whatever a compromised
worker could send: every bad reply becomes a verdict, never another exception. And the session
API on the real sandbox: a failure is final."""

from __future__ import annotations

import pytest

from sandbox.limits import Limits
from sandbox.protocol import FrameError
from sandbox.process_session import ProcessSession
from spade_core.errors import SandboxError


class FakeChannel:
    """A fake ``WorkerChannel``: replies from a script, records kills."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.killed = False
        self.closed = False

    def wait_ready(self, deadline, limit, stage=None):
        return self._next()

    def request(self, message, deadline, limit):
        return self._next()

    def _next(self):
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def kill(self):
        self.killed = True

    def exit_status(self, timeout=1.0):
        return {"signal": "SIGSEGV", "code": None}

    def close(self):
        self.closed = True


READY = {"ok": 1, "env_class": "FakeEnv"}
RESET = {"ok": 1, "observation": "hello", "info": {}}


def step_reply(**changes):
    reply = {"ok": 1, "observation": "o", "reward": 0.5, "terminated": False,
             "truncated": False, "info": {}}
    reply.update(changes)
    return reply


def session_with(*replies):
    session = ProcessSession(FakeChannel([READY, RESET, *replies]), Limits())
    session.load()
    session.reset(1)
    return session


@pytest.mark.parametrize("reply, category", [
    (step_reply(reward=10 ** 400), "interface"),
    (step_reply(reward=float("nan")), "interface"),
    (step_reply(reward="1.0"), "interface"),
    (step_reply(reward=11.0), "interface"),
    (step_reply(reward=True), "interface"),
    (step_reply(terminated=1), "interface"),
    (step_reply(observation=["not", "text"]), "interface"),
    (step_reply(observation="x" * 40_000), "output_limit"),
    (step_reply(info=[1, 2]), "interface"),
    ({"ok": 0, "category": "../../etc", "message": "m"}, "crash"),
    ({"ok": 0, "category": "memory", "message": "m", "line": "7"}, "memory"),
    (FrameError("big", "too_large"), "output_limit"),
    (FrameError("late", "timeout"), "timeout"),
    (FrameError("bad", "malformed"), "crash"),
    (FrameError("gone", "closed"), "crash"),
])
def test_every_bad_reply_is_a_verdict(reply, category):
    session = session_with(reply)
    with pytest.raises(SandboxError) as failed:
        session.step("a")
    assert failed.value.verdict.category == category
    assert failed.value.verdict.observation == "hello"
    assert session.channel.killed
    with pytest.raises(SandboxError):
        session.step("again")


def test_a_good_reply_is_a_step_result():
    result = session_with(step_reply(reward=1, terminated=True, info={"k": [1]})).step("a")
    assert (result.reward, result.terminated, result.info) == (1.0, True, {"k": [1]})


def test_signal_deaths_are_described():
    session = session_with(FrameError("gone", "closed"))
    with pytest.raises(SandboxError) as failed:
        session.step("a")
    assert "SIGSEGV" in failed.value.verdict.message


class SlowChannel(FakeChannel):
    """Replies after a delay, as a busy worker would."""

    def request(self, message, deadline, limit):
        import time

        time.sleep(0.05)
        if time.monotonic() > deadline:
            raise FrameError("late", "timeout")
        return self._next()


def test_the_episode_budget_counts_time_in_calls_not_between_them():
    import time

    limits = Limits(episode_seconds=0.12)
    session = ProcessSession(SlowChannel([READY, RESET, step_reply(), step_reply()]), limits)
    session.load()
    session.reset(1)          # 0.05 s of the budget
    time.sleep(0.2)           # the agent thinks: not counted
    session.step("a")         # 0.10 s used
    with pytest.raises(SandboxError) as failed:
        session.step("b")     # would pass 0.12 s
    assert failed.value.verdict.category == "timeout"
    assert "episode" in failed.value.verdict.message


@pytest.fixture
def sandbox(limited_sandbox):
    return limited_sandbox


@pytest.mark.timeout(120)
def test_session_api_and_failure_is_final(sandbox):
    program = '''
class EchoEnv:
    def reset(self, seed=None):
        self.n = 0
        return f"seed={seed}", {"seed": seed}
    def step(self, action):
        self.n += 1
        if action == "boom":
            raise ValueError("boom")
        return action.upper(), 0.5, self.n >= 2, False, {"n": self.n}
    def solution(self):
        return ["a", "b"]
'''
    session = sandbox.open(program)
    assert session.reset(3) == ("seed=3", {"seed": 3})
    result = session.step("hi")
    assert (result.observation, result.reward, result.terminated, result.truncated,
            result.info) == ("HI", 0.5, False, False, {"n": 1})
    assert session.solution() == ["a", "b"]
    with pytest.raises(SandboxError) as failed:
        session.step("boom")
    assert failed.value.verdict.category == "runtime_error"
    assert failed.value.verdict.line == 9  # the source starts with a blank line
    with pytest.raises(SandboxError):
        session.step("again")
    session.close()
