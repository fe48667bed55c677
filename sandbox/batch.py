"""Batched calls: many sessions' ``reset``/``step`` in one request frame per worker.

``reset_many``/``step_many`` group their items by worker. A worker gets its calls in ONE
``batch`` request and answers them all in ONE reply frame (the replies' own frames laid end to
end, so each keeps its own size check); the requests to different workers are all sent first and
their replies collected with one ``poll`` loop, so the workers run concurrently. Results come
back in input order; failures are ``SandboxError`` values in the list, never raised.

Time limits stay per call and per instance, and count the worker's CPU time (the wall clock is
only a backstop, ``sandbox/cpu_clock.py``): each batched call carries its own limit, which the
worker enforces with a CPU-time timer (a call past it ends the worker, as a timeout does
unbatched). The timer cannot interrupt C code, so the host enforces each call's limit too: the
worker sends a progress marker (with its CPU time) between two calls once ``PROGRESS_SECONDS``
have passed since the batch began or its last marker, and the host kills the worker when it has
used ``PROGRESS_SECONDS`` + the largest call limit + ``SLACK_SECONDS`` of CPU since the last
marker without one (never more than the sum of the calls' limits), or at the wall backstop.
Loading several instances works the same way. Each instance's episode budget is charged the
CPU time of its own calls (each reply carries the worker's CPU time at its end).
"""

from __future__ import annotations

import select
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from spade_core.errors import SandboxError
from spade_core.records import StepResult

from sandbox.cpu_clock import CallClock, charged
from sandbox.limits import Limits
from sandbox.process_session import ProcessSession, WorkerLink
from sandbox.protocol import PROGRESS_SECONDS, FrameError, decode, encode, split_bodies
from sandbox.worker_replies import BadReply, frame_verdict, parse_reset, parse_step, reply_verdict

#: Room for a batched reply's envelope (its timing field) beyond one unbatched reply.
_ENVELOPE = 64
#: What the host adds to a call's limit, beyond the marker interval, before it kills a worker
#: whose batch (or multi-instance load) went silent: the worker's own timer answers first.
SLACK_SECONDS = 0.5
#: CPU seconds a batch must have used before its wall time is shared out by CPU time.
_DIVISIBLE = 0.01


def stage_seconds(limit: float) -> float:
    """How much CPU time a worker running several calls (each at most ``limit`` CPU seconds) in
    one request may use between two progress markers. Between a marker and the start of the
    running call the worker ran calls of less than ``PROGRESS_SECONDS`` (else it would have
    sent another marker), so this bounds the running call by its limit plus the slack."""
    return PROGRESS_SECONDS + limit + SLACK_SECONDS


@dataclass
class _Call:
    """One item of a batch: which session, the request, its limit and how to read the reply."""

    pos: int
    session: ProcessSession
    what: str
    message: dict[str, Any]
    seconds: float
    parse: Callable[[dict[str, Any], Limits], Any]
    allowed: float = 0.0
    by_episode: bool = False


@dataclass
class _Exchange:
    """The request frame to one worker and what came back."""

    link: WorkerLink
    calls: list[_Call]
    message: dict[str, Any]
    span: float
    limit: int
    #: Most CPU time between two progress markers (``span`` for a single call).
    stage: float = 0.0
    clock: CallClock | None = None
    begun: float = 0.0
    elapsed: float = 0.0
    body: bytes | None = None
    reply: dict[str, Any] | None = None
    error: FrameError | None = None

    @property
    def single(self) -> bool:
        return len(self.calls) == 1


def _build(link: WorkerLink, calls: list[_Call]) -> _Exchange:
    for call in calls:
        call.allowed, call.by_episode = call.session.budget(call.seconds)
    if len(calls) == 1:
        call = calls[0]
        message = link.address(call.session, dict(call.message))
        return _Exchange(link, calls, message, call.allowed, link.limits.max_frame_bytes,
                         call.allowed)
    batch = [dict(call.message, i=call.session.index, limit=call.allowed) for call in calls]
    span = sum(call.allowed for call in calls)
    return _Exchange(link, calls, {"op": "batch", "calls": batch}, span,
                     len(calls) * (link.limits.max_frame_bytes + _ENVELOPE + 4),
                     min(span, stage_seconds(max(call.allowed for call in calls))))


def _start(ex: _Exchange) -> None:
    """Start ``ex``'s clock: from now, and from the worker's CPU time at its last reply."""
    factor = ex.link.limits.wall_factor
    if ex.single:
        ex.clock = CallClock(ex.link.channel, ex.link.cpu, ex.span, factor,
                             wall_left=ex.calls[0].session.wall_left())
    else:
        ex.clock = CallClock(ex.link.channel, ex.link.cpu, ex.span, factor, stage=ex.stage)
    ex.begun = ex.clock.begun


def _multiplexed(exchanges: list[_Exchange]) -> bool:
    return all(callable(getattr(ex.link.channel, name, None))
               for ex in exchanges for name in ("send_bytes", "fileno", "pump"))


def _exchange_all(exchanges: list[_Exchange]) -> None:
    """Send every worker its frame, then collect the replies as they come (one poll loop)."""
    if not _multiplexed(exchanges):
        for ex in exchanges:  # channels that cannot be polled (e.g. remote ones): in turn
            _start(ex)
            assert ex.clock is not None
            try:
                if ex.single:
                    clock = ex.clock
                    ex.reply = ex.link.request(ex.message, ex.limit, clock.deadline(),
                                               lambda: clock)  # its CPU time: noted below
                else:  # no CPU checks between markers here: the stage counts wall seconds
                    ex.body = ex.link.channel.request_body(ex.message, ex.begun + ex.span,
                                                           ex.limit, stage=ex.stage)
            except FrameError as exc:
                ex.error = exc
            ex.elapsed = time.monotonic() - ex.begun
        return
    poller = select.poll()
    waiting: dict[int, _Exchange] = {}
    for ex in exchanges:
        _start(ex)
        try:
            ex.link.channel.send_bytes(encode(ex.message))
        except FrameError as exc:
            ex.error = exc
            continue
        fd = ex.link.channel.fileno()
        poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
        waiting[fd] = ex
    while waiting:
        now = time.monotonic()
        for fd, ex in list(waiting.items()):
            assert ex.clock is not None
            if now >= ex.clock.deadline():
                ex.error = ex.clock.expired(now)
                if ex.error is None:  # CPU time left: the deadline has moved on
                    continue
                ex.elapsed = time.monotonic() - ex.begun
                poller.unregister(fd)
                del waiting[fd]
        if not waiting:
            break
        now = time.monotonic()
        wait = min(ex.clock.deadline() for ex in waiting.values() if ex.clock) - now
        for fd, _event in poller.poll(max(1, int(wait * 1000 + 0.999))):
            ex = waiting.get(fd)
            if ex is None:
                continue
            try:
                ex.body = ex.link.channel.pump(ex.limit)
            except FrameError as exc:
                ex.error = exc
            if ex.body is not None or ex.error is not None:
                ex.elapsed = time.monotonic() - ex.begun
                poller.unregister(fd)
                del waiting[fd]


def _outcome(call: _Call, reply: dict[str, Any]) -> Any:
    """The value or ``SandboxError`` for one call's reply (the same checks as unbatched)."""
    session = call.session
    if session.failure is not None:  # ended earlier in this batch
        return SandboxError(session.failure)
    if not reply.get("ok"):
        return session.reply_failure(reply, call.what,
                                     session.budget_text(call.seconds, call.by_episode))
    try:
        return call.parse(reply, session.limits)
    except BadReply as exc:
        return session.fail(exc.category, str(exc))


def _fail_exchange(ex: _Exchange, results: list[Any], category: str, message: str,
                   cause: ProcessSession | None = None, line: int | None = None) -> None:
    ex.link.fail_all(cause, category, message, line)
    for call in ex.calls:  # every call's session was live, so each now holds its verdict
        results[call.pos] = SandboxError(call.session.failure)


def _describe(ex: _Exchange) -> tuple[str, str]:
    if ex.single:
        call = ex.calls[0]
        return call.what, call.session.budget_text(call.seconds, call.by_episode)
    if ex.clock is None or ex.clock.ended_by != "limit":
        return (f"a batch of {len(ex.calls)} calls",
                f"time limit of the call it was running (at most "
                f"{max(call.allowed for call in ex.calls):g} s of CPU)")
    return (f"a batch of {len(ex.calls)} calls",
            f"sum of its calls' time limits ({ex.span:g} s of CPU)")


def _settle(ex: _Exchange, results: list[Any]) -> None:
    calls = ex.calls
    if ex.error is not None:
        for call in calls:
            call.session.charge(ex.elapsed / len(calls), ex.elapsed / len(calls))
        what, budget = _describe(ex)
        category, message = frame_verdict(ex.link.channel, ex.error, what, budget)
        _fail_exchange(ex, results, category, message, calls[0].session if ex.single else None)
        return
    cpu_start = ex.clock.cpu_start if ex.clock is not None else ex.link.cpu
    if ex.single:
        try:
            reply = ex.reply if ex.reply is not None else decode(ex.body or b"")
        except FrameError as exc:
            calls[0].session.charge(ex.elapsed, ex.elapsed)
            what, budget = _describe(ex)
            _fail_exchange(ex, results, *frame_verdict(ex.link.channel, exc, what, budget),
                           cause=calls[0].session)
            return
        calls[0].session.charge(charged(cpu_start, ex.link.note_cpu(reply), ex.elapsed),
                                ex.elapsed)
        results[calls[0].pos] = _outcome(calls[0], reply)
        return
    try:
        replies = [decode(body) for body in split_bodies(
            ex.body or b"", ex.link.limits.max_frame_bytes + _ENVELOPE)]
    except FrameError as exc:
        what, budget = _describe(ex)
        _fail_exchange(ex, results, *frame_verdict(ex.link.channel, exc, what, budget))
        return
    _charge_batch(ex, cpu_start, replies)
    if len(replies) > len(calls):
        _fail_exchange(ex, results, "crash", f"the worker sent {len(replies)} replies to a "
                       f"batch of {len(calls)} calls")
        return
    # In order: an instance that failed earlier in this batch keeps its verdict; a fatal reply
    # ends every instance, and the calls after it (which the worker did not run) get that.
    for call, reply in zip(calls, replies):
        if call.session.failure is not None:
            results[call.pos] = SandboxError(call.session.failure)
        else:
            results[call.pos] = _outcome(call, reply)
    if len(replies) < len(calls):
        if not ex.link.ended:
            ex.link.fail_all(None, "crash", f"the worker answered {len(replies)} of "
                             f"{len(calls)} batched calls")
        for call in calls[len(replies):]:
            results[call.pos] = SandboxError(call.session.failure)


def _charge_batch(ex: _Exchange, cpu_start: float, replies: list[dict[str, Any]]) -> None:
    """Charge each instance of a batch the CPU time of its own call (the worker's CPU time at
    the end of the previous reply to the end of its own), and the batch's wall time in the same
    shares (equal shares while the batch's CPU time is too small to divide: the worker's CPU
    clock advances in scheduler ticks of a few ms while ``RLIMIT_CPU`` is armed). Replies
    without CPU times (or calls the worker never answered): equal shares of the wall time. The
    CPU charged is never more than the batch's wall time."""
    calls = ex.calls
    ends = [ex.link.note_cpu(reply) for reply in replies[:len(calls)]]
    if len(ends) == len(calls) and None not in ends:
        spent, at = [], cpu_start
        for end in ends:
            assert end is not None
            spent.append(max(end - at, 0.0))
            at = max(at, end)
        total = sum(spent)
        scale = min(1.0, ex.elapsed / total) if total > 0 else 0.0
        for call, cpu in zip(calls, spent):
            share = cpu / total if total >= _DIVISIBLE else 1 / len(calls)
            call.session.charge(cpu * scale, ex.elapsed * share)
        return
    for call in calls:
        call.session.charge(ex.elapsed / len(calls), ex.elapsed / len(calls))


def _run(calls: list[_Call], results: list[Any]) -> None:
    groups: dict[int, tuple[WorkerLink, list[_Call]]] = {}
    for call in calls:
        link = call.session.link
        groups.setdefault(id(link), (link, []))[1].append(call)
    ordered = sorted(groups.values(), key=lambda group: group[0].order)
    with ExitStack() as stack:
        for link, _ in ordered:  # a fixed lock order: concurrent batches never deadlock
            stack.enter_context(link.lock)
        exchanges = []
        for link, group in ordered:
            live = []
            for call in group:
                error = call.session.refused()
                if error is None and call.session.budget(call.seconds)[0] <= 0:
                    # The episode budget is spent: a timeout, as the unbatched call would get.
                    error = call.session.fail(
                        "timeout", f"{call.what}: no answer within the "
                        f"{call.session.budget_text(call.seconds, True)}", worker=True)
                if error is not None:
                    results[call.pos] = error
                else:
                    live.append(call)
            for call in live:  # a spent budget above ended the whole worker
                if call.session.failure is not None:
                    results[call.pos] = SandboxError(call.session.failure)
            live = [call for call in live if call.session.failure is None]
            if live:
                exchanges.append(_build(link, live))
        _exchange_all(exchanges)
        for ex in exchanges:
            _settle(ex, results)


def _others(items: list[tuple[Any, Any]], results: list[Any],
            call: Callable[[Any, Any], Any]) -> None:
    """Sessions of other sandboxes: one call each."""
    for pos, (session, arg) in enumerate(items):
        if results[pos] is None and not isinstance(session, ProcessSession):
            try:
                results[pos] = call(session, arg)
            except SandboxError as exc:
                results[pos] = exc


def reset_many(items: Sequence[tuple[ProcessSession, int | None]]
               ) -> list[tuple[str, dict[str, Any]] | SandboxError]:
    """``reset(seed)`` of each session; see the module docstring."""
    items = list(items)
    results: list[Any] = [None] * len(items)
    calls = []
    for pos, (session, seed) in enumerate(items):
        if seed is not None and not isinstance(seed, int):
            raise TypeError(f"reset_many: item {pos}: seed must be an int or None")
        if isinstance(session, ProcessSession):
            calls.append(_Call(pos, session, f"reset(seed={seed})", {"op": "reset", "seed": seed},
                               session.limits.reset_seconds, parse_reset))
    _run(calls, results)
    for call in calls:
        value = results[call.pos]
        if not isinstance(value, SandboxError) and not call.session.first_observation:
            call.session.first_observation = value[0]
    _others(items, results, lambda session, seed: session.reset(seed))
    return results


def step_many(items: Sequence[tuple[ProcessSession, str]]) -> list[StepResult | SandboxError]:
    """``step(action)`` of each session; see the module docstring."""
    items = list(items)
    results: list[Any] = [None] * len(items)
    calls = []
    for pos, (session, action) in enumerate(items):
        if not isinstance(action, str):
            raise TypeError(f"step_many: item {pos}: action must be a str")
        if isinstance(session, ProcessSession):
            calls.append(_Call(pos, session, "step()", {"op": "step", "action": action},
                               session.limits.step_seconds, parse_step))
    _run(calls, results)
    _others(items, results, lambda session, action: session.step(action))
    return results


def load_instances(link: WorkerLink, message: dict[str, Any] | None = None) -> None:
    """Wait for a multi-instance worker's ready reply (or, with ``message``, send a reused
    worker its ``more`` request and wait for that reply) and record each instance's outcome."""
    sessions, limits, count = link.sessions, link.limits, link.count
    with link.lock:
        each = min(limits.load_seconds, limits.episode_seconds)
        clock = CallClock(link.channel, link.cpu, each * count, limits.wall_factor,
                          stage=stage_seconds(each))
        try:
            reply = link.request(message, limits.max_frame_bytes + count * 4096,
                                 clock.deadline(), lambda: clock, markers=True)
        except FrameError as exc:
            wall = time.monotonic() - clock.begun
            for session in sessions:
                session.charge(wall / count, wall / count)
            budget = f"load time limit ({limits.load_seconds:g} s of CPU per instance)"
            link.fail_all(None, *frame_verdict(link.channel, exc, "loading the program", budget))
            return
        wall = time.monotonic() - clock.begun
        # From the worker's CPU time at its fork, or at its last reply if it is reused.
        cpu = charged(clock.cpu_start, link.note_cpu(reply), wall)
        for session in sessions:
            session.charge(cpu / count, wall / count)
        if not reply.get("ok"):
            category, message, line, _fatal = reply_verdict(reply)
            link.fail_all(None, category, message, line)
            return
        entries = reply.get("instances")
        if not isinstance(entries, list) or len(entries) != count \
                or not all(isinstance(e, dict) for e in entries):
            link.fail_all(None, "crash", "loading the program: malformed ready reply")
            return
        for session, entry in zip(sessions, entries):
            if entry.get("ok"):
                name = entry.get("env_class")
                session.env_class = name if isinstance(name, str) else None
                session.closes = entry.get("closes") is not False
                continue
            category, message, line, fatal = reply_verdict(entry)
            if fatal:
                link.fail_all(None, category, message, line)
                return
            session.set_failure(category, message, line)
        link.retire()
