"""Reading a worker's replies: the verdict for a failed call, the checked value of a good one.

The worker is untrusted, so nothing it sends is taken on faith: categories are checked against the
known ones, a step must meet the core's contract (``spade_core.validation.typed_step``: finite,
bounded reward, bool flags), observations and ``info`` must have the right types and sizes.
Shared by single calls (``process_session.py``) and batched ones (``batch.py``).
"""

from __future__ import annotations

from typing import Any

from spade_core.errors import SandboxError
from spade_core.records import StepResult, Verdict
from spade_core.validation import Invalid, typed_step

from sandbox.executors import WorkerChannel
from sandbox.limits import Limits
from sandbox.protocol import FrameError

#: Verdict categories a worker may report.
CATEGORIES = frozenset({"syntax", "forbidden", "interface", "runtime_error", "timeout", "memory",
                        "output_limit", "crash"})
#: Failures that end every instance of a worker (see ``worker.WORKER_FATAL``).
WORKER_FATAL = frozenset({"timeout", "memory", "forbidden", "crash"})


class BadReply(Exception):
    """A reply that breaks the contract (wrong types, out of bounds): ends its instance."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category


def refusal(failure: Verdict | None, closed: bool) -> SandboxError | None:
    """The error a call on a session gets without reaching any worker: its recorded failure, or
    a ``crash`` once it is closed; ``None`` when the call may go ahead."""
    if failure is not None:
        return SandboxError(failure)
    if closed:
        return SandboxError(Verdict(valid=False, category="crash", message="the session is closed"))
    return None


def status_verdict(status: dict[str, Any] | None, what: str) -> tuple[str, str]:
    """Category and message for a worker that ended with ``status`` (from the fork server)."""
    if status is None:
        return "crash", f"{what}: the worker died without a reply"
    sig = status.get("signal")
    if sig == "SIGXCPU":
        return "timeout", f"{what}: the CPU-time limit was exceeded"
    if sig in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE"):
        return "crash", f"{what}: the worker crashed ({sig})"
    if sig == "SIGKILL":
        return "crash", f"{what}: the worker was killed"
    if sig:
        return "crash", f"{what}: the worker ended by {sig}"
    return "crash", f"{what}: the worker exited with status {status.get('code')}"


def frame_verdict(channel: WorkerChannel, exc: FrameError, what: str,
                  budget: str) -> tuple[str, str]:
    """Category and message for a channel failure (no reply in time, too large, malformed, the
    worker gone); each of these ends the whole worker."""
    if exc.kind == "timeout":
        detail = f": {exc.detail}" if exc.detail else ""
        return "timeout", f"{what}: no answer within the {budget}{detail}"
    if exc.kind == "too_large":
        return "output_limit", f"{what}: {exc}"
    if exc.kind == "malformed":
        return "crash", f"{what}: {exc}"
    channel.close()
    return status_verdict(channel.exit_status(), what)


def reply_verdict(reply: dict[str, Any]) -> tuple[str, str, int | None, bool]:
    """Category, message, line and whether it ends the worker, for a failure the worker
    reported (its category is checked against the known ones: the worker is untrusted)."""
    category = reply.get("category")
    if category not in CATEGORIES:
        category = "crash"
    line = reply.get("line") if isinstance(reply.get("line"), int) else None
    message = str(reply.get("message", ""))[:2000]
    return category, message, line, category in WORKER_FATAL or bool(reply.get("fatal"))


def _observation(reply: dict[str, Any], limits: Limits, what: str) -> str:
    obs = reply.get("observation")
    if not isinstance(obs, str):
        raise BadReply("interface", f"{what}: the observation is not a str")
    if len(obs) > limits.max_observation_chars:
        raise BadReply("output_limit", f"{what}: observation of {len(obs)} characters")
    return obs


def _info(reply: dict[str, Any], what: str) -> dict[str, Any]:
    info = reply.get("info")
    if not isinstance(info, dict):
        raise BadReply("interface", f"{what}: info is not a dict")
    return info


def parse_reset(reply: dict[str, Any], limits: Limits) -> tuple[str, dict[str, Any]]:
    """``(observation, info)`` of a good ``reset`` reply, or ``BadReply``."""
    return _observation(reply, limits, "reset()"), _info(reply, "reset()")


def parse_step(reply: dict[str, Any], limits: Limits) -> StepResult:
    """The :class:`StepResult` of a good ``step`` reply, or ``BadReply``: the step contract is
    the core's (:func:`spade_core.validation.typed_step`), plus this sandbox's size limit."""
    try:
        result = typed_step((reply.get("observation"), reply.get("reward"),
                             reply.get("terminated"), reply.get("truncated"), reply.get("info")))
    except Invalid as exc:
        raise BadReply(exc.category, str(exc)) from None
    _observation(reply, limits, "step()")
    return result


def parse_solution(reply: dict[str, Any], limits: Limits) -> Any:
    """What the program's ``solution()`` returned (JSON-decoded; the worker capped its size)."""
    return reply.get("value")
