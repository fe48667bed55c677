"""Reading an untrusted worker's replies: categories checked against the known ones, a step held
to the core's contract and the size limit, and a worker's death described by its signal."""

from __future__ import annotations

import pytest

from sandbox.limits import Limits
from sandbox.worker_replies import (BadReply, parse_reset, parse_step, refusal, reply_verdict,
                                    status_verdict)
from spade_core.errors import SandboxError
from spade_core.records import StepResult, Verdict


def test_deaths_are_described_by_their_signal():
    assert status_verdict(None, "step()") == ("crash", "step(): the worker died without a reply")
    assert status_verdict({"signal": "SIGXCPU"}, "step()")[0] == "timeout"
    assert status_verdict({"signal": "SIGSEGV"}, "load") == \
        ("crash", "load: the worker crashed (SIGSEGV)")
    assert "was killed" in status_verdict({"signal": "SIGKILL"}, "x")[1]
    assert status_verdict({"signal": None, "code": 3}, "x")[1].endswith("exited with status 3")


def test_a_reported_failure_is_checked_not_trusted():
    assert reply_verdict({"category": "../../etc", "message": "m"}) == ("crash", "m", None, True)
    assert reply_verdict({"category": "runtime_error", "message": "m", "line": 7}) == \
        ("runtime_error", "m", 7, False)
    category, message, line, fatal = reply_verdict(
        {"category": "memory", "message": "x" * 5000, "line": "7"})
    assert (category, len(message), line, fatal) == ("memory", 2000, None, True)
    assert reply_verdict({"category": "runtime_error", "fatal": 1})[3] is True


def test_steps_meet_the_contract_and_the_size_limit():
    good = {"observation": "o", "reward": 1, "terminated": True, "truncated": False,
            "info": {"k": 1}}
    result = parse_step(good, Limits())
    assert isinstance(result, StepResult) and result.reward == 1.0 and result.terminated
    for change, category in (({"reward": float("nan")}, "interface"),
                             ({"info": [1]}, "interface"),
                             ({"observation": "x" * 300}, "output_limit")):
        with pytest.raises(BadReply) as bad:
            parse_step({**good, **change}, Limits(max_observation_chars=256))
        assert bad.value.category == category
    assert parse_reset({"observation": "hi", "info": {}}, Limits()) == ("hi", {})
    with pytest.raises(BadReply):
        parse_reset({"observation": 3, "info": {}}, Limits())


def test_a_failed_or_closed_session_is_refused_before_any_call():
    verdict = Verdict(valid=False, category="timeout", message="slow")
    assert refusal(None, False) is None
    error = refusal(verdict, True)
    assert isinstance(error, SandboxError) and error.verdict is verdict
    assert refusal(None, True).verdict.category == "crash"
