"""The ``ray`` sandbox: the ``process`` sandbox run by Ray actors spread over a cluster.

Each actor (:class:`~sandbox.ray_host.SandboxHost`) runs the process sandbox on its node; the
driver holds :class:`RaySession` proxies that route every call to their actor. ``open_many``
places a program's instances on the least loaded actor (one worker there); ``reset_many`` and
``step_many`` send ONE call per actor, all actors served concurrently. A program text goes to
an actor once; later opens send its hash.

Faults: Ray restarts a lost actor (``max_restarts``), or the sandbox starts a new one in its slot
when it does not come back. A session whose actor was lost is re-opened on a live actor and its
episode replayed from the seed (the calls since its last ``reset``, their answers checked), then
the interrupted call is made once; a session that cannot be replayed fails with the reason.
Nothing is lost silently and no call's result is returned twice.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ray
from ray.exceptions import ObjectLostError, RayActorError, RayError

from spade_core.errors import SandboxError
from spade_core.interfaces.sandbox import Sandbox, SandboxSession
from spade_core.records import StepResult, Verdict

from sandbox.limits import Limits
from sandbox.process_sandbox import MAX_INSTANCES
from sandbox.ray_host import FamilySources
from sandbox.ray_slots import ActorSlots, Slot
from sandbox.worker_replies import refusal

if TYPE_CHECKING:
    from spade_core.interfaces.family import EnvFamily

#: Errors of a call that mean its actor (or the node holding its reply) was lost.
LOST = (RayActorError, ObjectLostError)

#: Closes sent but not yet reaped before the sandbox reaps the finished ones.
CLOSES_PENDING = 256

#: Attempts of one call across actor losses before the session fails (each loss also counts
#: against the session's ``max_replays``).
CALL_ATTEMPTS = 6


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RaySession(SandboxSession):
    """A driver-side proxy of one session hosted by an actor; it remembers the current episode
    (the calls since the last ``reset`` and their answers) so it can be replayed elsewhere."""

    def __init__(self, sandbox: "RaySandbox", slot: Slot, epoch: str, sid: int,
                 env_class: str | None, opening: tuple[str, str, str | None,
                                                       FamilySources | None, Limits | None]
                 ) -> None:
        self.sandbox = sandbox
        self.slot = slot
        self.epoch = epoch
        self.sid = sid
        self.env_class = env_class
        self.opening = opening
        self.history: list[tuple[str, Any, Any]] = []
        self.failure: Verdict | None = None
        self.closed = False
        self.replays = 0
        self.started = time.monotonic()

    def refused(self) -> SandboxError | None:
        return refusal(self.failure, self.closed)

    def fail(self, category: str, message: str) -> SandboxError:
        self.failure = Verdict(valid=False, category=category, message=message[:2000],
                               seconds=time.monotonic() - self.started)
        return SandboxError(self.failure)

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        if seed is not None and not isinstance(seed, int):
            raise TypeError("seed must be an int or None")
        return self.sandbox.call(self, "reset", seed)

    def step(self, action: str) -> StepResult:
        if not isinstance(action, str):
            raise TypeError("action must be a str")
        return self.sandbox.call(self, "step", action)

    def solution(self) -> Any:
        return self.sandbox.call(self, "solution", None)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.sandbox.release(self)

    def __enter__(self) -> "RaySession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _same(op: str, seen: Any, again: Any) -> bool:
    """Whether a replayed call answered as the original did (observations and rewards)."""
    if op == "reset":
        return again[0] == seen[0]
    if op == "step":
        return (again.observation, again.reward, again.terminated, again.truncated) == \
            (seen.observation, seen.reward, seen.terminated, seen.truncated)
    return again == seen


class RaySandbox(Sandbox):
    """The ``process`` sandbox on Ray actors (see the module docstring)."""

    def __init__(self, options: Any) -> None:
        """``options``: a :class:`sandbox.options.RaySandboxOptions` (not imported here:
        that module's factory imports this one)."""
        self.options = options
        #: Counters of what recovery did (also in ``isolation()["ray"]``).
        self.recovered = 0
        self.failed_recoveries = 0
        self._closing: list[Any] = []
        self._closing_lock = threading.Lock()
        self.actors = ActorSlots(options)
        self._local: Any = None

    @property
    def slots(self) -> list[Slot]:
        """The actor slots, each with its current actor."""
        return self.actors.slots

    # -- opening ------------------------------------------------------------------------------
    @staticmethod
    def _family(family: "EnvFamily | None") -> tuple[str | None, FamilySources | None]:
        if family is None:
            return None, None
        sources = FamilySources(family.prelude or "", dict(family.modules),
                                tuple(family.preload_imports))
        key = json.dumps([sources.prelude, sources.modules, list(sources.preload_imports)],
                         sort_keys=True)
        return _sha(key), sources

    def _open_on(self, slot: Slot, opening: tuple, count: int) -> tuple[str, Any, str]:
        """Open ``count`` instances on ``slot``'s actor: (status, value, epoch). Raises
        ``RayActorError`` when the actor is lost."""
        sha, program, family_sha, family, limits = opening
        epoch = slot.epoch
        owns_program, program_sent = self.actors.claim(slot, sha)
        owns_family, family_sent = self.actors.claim(slot, family_sha) if family_sha \
            else (False, None)
        send_program, send_family = owns_program, owns_family
        try:
            if not send_program:
                program_sent.wait(self.options.recover_seconds)
            if family_sent is not None and not send_family:
                family_sent.wait(self.options.recover_seconds)
            for _ in range(3):
                status, value = ray.get(slot.handle.open_many.remote(
                    sha, program if send_program else None, family_sha,
                    family if send_family else None, count, limits))
                if status != "missing":
                    return status, value, epoch
                # The actor restarted or evicted it since: send the text again.
                send_program, send_family = value == "program", value == "family"
            raise RuntimeError("the actor keeps losing the program's text")
        finally:
            if owns_program:
                program_sent.set()
            if owns_family and family_sent is not None:
                family_sent.set()

    def open(self, program: str, *, family: "EnvFamily | None" = None,
             limits: Limits | None = None) -> RaySession:
        return self.open_many(program, 1, family=family, limits=limits)[0]

    def open_many(self, program: str, count: int, *, family: "EnvFamily | None" = None,
                  limits: Limits | None = None) -> list[RaySession]:
        """``count`` instances of ``program`` on the least loaded actor (one worker there)."""
        if type(count) is not int or not 1 <= count <= MAX_INSTANCES:
            raise ValueError(f"open_many: count must be an int from 1 to {MAX_INSTANCES}, "
                             f"not {count!r}")
        family_sha, sources = self._family(family)
        opening = (_sha(program), program, family_sha, sources, limits)
        error: Exception | None = None
        for _ in range(CALL_ATTEMPTS):
            slot = self.actors.pick()
            epoch = slot.epoch
            try:
                status, value, epoch = self._open_on(slot, opening, count)
            except LOST as exc:
                error = exc
                self.actors.release_slot(slot, epoch)
                self.actors.heal_quietly(slot, epoch)
                continue
            except (RuntimeError, RayError) as exc:
                error = exc
                self.actors.release_slot(slot, epoch)
                continue
            if status == "error":
                self.actors.release_slot(slot, epoch)
                raise SandboxError(value)
            self.actors.occupy(slot, count - 1)
            return [RaySession(self, slot, epoch, sid, env_class, opening)
                    for sid, env_class in value]
        raise SandboxError(Verdict(valid=False, category="crash",
                                   message=f"could not open the program on a Ray actor: {error}"))

    # -- recovery ----------------------------------------------------------------------------------
    def _recover(self, session: RaySession) -> None:
        """Re-open ``session`` on a live actor and replay its episode; raises ``SandboxError``
        (and the session is failed) when that cannot be done faithfully."""
        lost = f"lost its Ray actor (slot {session.slot.index}, node {session.slot.host})"
        if session.replays >= self.options.max_replays:
            self.failed_recoveries += 1
            raise session.fail("crash", f"the session {lost} {session.replays + 1} times "
                               f"(max_replays={self.options.max_replays})")
        if any(op == "reset" and arg is None for op, arg, _ in session.history):
            self.failed_recoveries += 1
            raise session.fail("crash", f"the session {lost}, and its episode cannot be "
                               "replayed: it was reset without a seed")
        session.replays += 1
        slot = self.actors.pick()
        try:
            status, value, epoch = self._open_on(slot, session.opening, 1)
        except (RayError, RuntimeError) as exc:
            self.actors.release_slot(slot, slot.epoch)
            self.failed_recoveries += 1
            raise session.fail("crash", f"the session {lost} and could not be re-opened: "
                               f"{exc}") from None
        if status == "error":
            self.actors.release_slot(slot, epoch)
            self.failed_recoveries += 1
            raise session.fail(value.category, f"the session {lost}; re-opening it failed: "
                               f"{value.message}")
        session.slot, session.epoch, session.sid = slot, epoch, value[0][0]
        for position, (op, arg, seen) in enumerate(session.history):
            try:
                status, again = ray.get(slot.handle.call.remote(session.sid, op, arg))
            except LOST:
                self.actors.heal_quietly(slot, epoch)
                return self._recover(session)  # lost again: counts as another replay
            except RayError as exc:
                self.failed_recoveries += 1
                raise session.fail("crash", f"the session {lost}; replaying its episode "
                                   f"failed: {exc}") from None
            if status == "lost":
                self.actors.heal_quietly(slot, epoch)
                return self._recover(session)
            if status == "error":
                self.failed_recoveries += 1
                raise session.fail(again.category, f"the session {lost}; replaying its episode "
                                   f"failed at call {position} ({op}): {again.message}")
            if not _same(op, seen, again):
                self.failed_recoveries += 1
                raise session.fail("nondeterministic", f"the session {lost}; replaying its "
                                   f"episode from the seed diverged at call {position} ({op})")
        self.recovered += 1
        return None

    def _ensure(self, session: RaySession) -> None:
        """Recover ``session`` first if its actor was replaced or restarted since it opened."""
        if session.epoch != session.slot.epoch:
            self._recover(session)

    # -- calls -------------------------------------------------------------------------------------
    def _settle(self, session: RaySession, op: str, arg: Any, status: str, value: Any) -> Any:
        """A call's answer: remembered for replays, or the session's failure raised."""
        if status == "error":
            session.failure = value
            raise SandboxError(value)
        if op == "reset":
            session.history = [(op, arg, value)]
        else:
            session.history.append((op, arg, value))
        return value

    def call(self, session: RaySession, op: str, arg: Any) -> Any:
        """One call of ``session`` on its actor, recovering the session if the actor is lost."""
        for _ in range(CALL_ATTEMPTS):
            error = session.refused()
            if error is not None:
                raise error
            self._ensure(session)
            slot, epoch = session.slot, session.epoch
            try:
                status, value = ray.get(slot.handle.call.remote(session.sid, op, arg))
            except LOST:
                self.actors.heal_quietly(slot, epoch)
                continue
            except RayError as exc:
                raise session.fail("crash", f"the Ray actor failed the call: {exc}") from None
            if status == "lost":
                self.actors.heal_quietly(slot, epoch)
                session.epoch = f"stale:{epoch}"
                continue
            return self._settle(session, op, arg, status, value)
        raise session.fail("crash", f"the session's Ray actor kept failing ({CALL_ATTEMPTS} "
                           "attempts)")

    def _many(self, op: str, method: str, items: Sequence[tuple[RaySession, Any]]
              ) -> list[Any]:
        results: list[Any] = [None] * len(items)
        pending = list(enumerate(items))
        for _ in range(CALL_ATTEMPTS):
            if not pending:
                break
            groups: dict[Slot, list[tuple[int, RaySession, Any, str]]] = defaultdict(list)
            for pos, (session, arg) in pending:
                if not isinstance(session, RaySession):
                    raise TypeError(f"{method}: not a session of this sandbox: {session!r}")
                error = session.refused()
                if error is None:
                    try:
                        self._ensure(session)
                    except SandboxError as exc:
                        error = exc
                if error is not None:
                    results[pos] = error
                    continue
                groups[session.slot].append((pos, session, arg, session.epoch))
            refs = {slot: getattr(slot.handle, method).remote([(s.sid, a) for _, s, a, _ in group])
                    for slot, group in groups.items()}
            pending = []
            for slot, ref in refs.items():
                group = groups[slot]
                try:
                    replies = ray.get(ref)
                except LOST:
                    self.actors.heal_quietly(slot, group[0][3])
                    pending.extend((pos, (session, arg)) for pos, session, arg, _ in group)
                    continue
                except RayError as exc:
                    for pos, session, _arg, _epoch in group:
                        results[pos] = session.fail("crash", "the Ray actor failed the batched "
                                                    f"call: {exc}")
                    continue
                for (pos, session, arg, epoch), (status, value) in zip(group, replies,
                                                                       strict=True):
                    if status == "lost":
                        self.actors.heal_quietly(slot, epoch)
                        session.epoch = f"stale:{epoch}"
                        pending.append((pos, (session, arg)))
                        continue
                    try:
                        results[pos] = self._settle(session, op, arg, status, value)
                    except SandboxError as exc:
                        results[pos] = exc
        for pos, (session, _arg) in pending:
            results[pos] = session.fail("crash", "the session's Ray actor kept failing "
                                        f"({CALL_ATTEMPTS} attempts)")
        return results

    def reset_many(self, items: Sequence[tuple[RaySession, int | None]]
                   ) -> list[tuple[str, dict[str, Any]] | SandboxError]:
        """``reset(seed)`` of each session: one call per actor, the actors concurrently."""
        for _session, seed in items:
            if seed is not None and not isinstance(seed, int):
                raise TypeError("seed must be an int or None")
        return self._many("reset", "reset_many", items)

    def step_many(self, items: Sequence[tuple[RaySession, str]]
                  ) -> list[StepResult | SandboxError]:
        """``step(action)`` of each session: one call per actor, the actors concurrently."""
        return self._many("step", "step_many", items)

    def release(self, session: RaySession) -> None:
        """A proxy closed: close its session on the actor (unless that actor was lost)."""
        slot = session.slot
        if session.epoch != slot.epoch:
            return
        self.actors.release_slot(slot, session.epoch)
        # Not waited for (a close's errors are the program's last word, ignored by callers):
        # closing a batch of sessions costs no round trips. Collected later, quietly.
        with self._closing_lock:
            self._closing.append(slot.handle.close_sessions.remote([session.sid]))
            if len(self._closing) >= CLOSES_PENDING:
                self._collect(0.0)

    def _collect(self, timeout: float) -> None:
        """Reap finished closes (all of them within ``timeout``); caller holds the lock."""
        if not self._closing:
            return
        done, self._closing = ray.wait(self._closing, num_returns=len(self._closing),
                                       timeout=timeout)
        for ref in done:
            try:
                ray.get(ref)
            except RayError:
                pass

    # -- reporting and shutdown --------------------------------------------------------------------
    def isolation(self) -> dict[str, Any]:
        """The actors' isolation (the first actor's report, ``isolated`` only when every actor
        is isolated) and where the actors run."""
        reports = ray.get([slot.handle.isolation.remote() for slot in self.slots])
        info = dict(reports[0])
        info["isolated"] = all(r.get("isolated") for r in reports)
        methods = sorted({str(r.get("method")) for r in reports})
        info["method"] = methods[0] if len(methods) == 1 else "mixed: " + ", ".join(methods)
        hosts: dict[str, int] = defaultdict(int)
        for slot in self.slots:
            hosts[slot.host] += 1
        address = self.options.address or ("local cluster started by the sandbox"
                                           if self.actors.owns_ray else "this process's cluster")
        info["ray"] = {"address": address,
                       "actors": len(self.slots), "actors_by_host": dict(hosts),
                       "servers_per_actor": self.options.servers_per_actor,
                       "actor_isolation": [{"host": s.host, "method": r.get("method"),
                                            "isolated": r.get("isolated")}
                                           for s, r in zip(self.slots, reports)],
                       "restarts": sum(s.restarts for s in self.slots),
                       "replacements": sum(s.replacements for s in self.slots),
                       "sessions_recovered": self.recovered,
                       "sessions_failed_recovery": self.failed_recoveries}
        return info

    def actor_stats(self) -> list[dict[str, Any]]:
        """Each actor's counters (sessions, cached programs, how often each text arrived)."""
        return ray.get([slot.handle.stats.remote() for slot in self.slots])

    def on_interpreter(self, python: str) -> Any:
        """A local ``process`` sandbox with this one's isolation and limits whose servers run
        ``python`` (a benchmark suite's own environment, which exists on this machine only, not
        on the cluster's nodes); started once, closed with this one."""
        if self._local is None:
            from sandbox.build import build_sandbox
            from sandbox.options import ProcessSandboxOptions

            self._local = build_sandbox(ProcessSandboxOptions(**self.options.process_options()))
        return self._local.on_interpreter(python)

    def close(self) -> None:
        local, self._local = self._local, None
        if local is not None:
            local.close()
        with self._closing_lock:
            self._collect(10.0)
        self.actors.close()

    def __enter__(self) -> "RaySandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
