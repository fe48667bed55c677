"""Validation: run a program through the reference checks and ours, and return one verdict.

The reference checks (``reset(42)`` gives a non-empty str and a dict, probe actions give
well-typed 5-tuples with finite rewards in [-10, 10], ``reset(123)`` works) come first. Then:
determinism (a second worker, same seed, same observations), solvability (replaying
``solution()`` reaches full reward), triviality (junk actions must not reach full reward) and
termination (some episode must end). Three independent instances per program, all in ONE worker
(``open_many``: one fork instead of three): the reference checks; the determinism check and the
solution replay; the step-determinism check and the junk episodes (separated by resets, as an
agent's episodes would be).

Why one worker keeps the determinism check's meaning: every instance runs the module afresh (own
globals, own classes) with its own ``random`` generator, freshly seeded from the OS, so hidden
state carried over from another instance is impossible and unseeded randomness differs between
instances exactly as between workers. The hash seed is the same either way (``PYTHONHASHSEED=0``
for every fork server), and object addresses differ between instances of one process at least as
much as between forks of one server.
"""

from __future__ import annotations

import inspect
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from spade_core.errors import SandboxError
from spade_core.records import Verdict

if TYPE_CHECKING:
    from spade_core.interfaces.family import EnvFamily

    from sandbox.session import ProcessSandbox, ProcessSession


@dataclass(frozen=True)
class CheckOptions:
    """Knobs of validation; the defaults follow the reference where it has one."""

    probe_actions: tuple[str, ...] = ("\\boxed{1}", "hello", "<answer>0</answer>")
    junk_actions: tuple[str, ...] = ("", "\\boxed{}", "<answer>spade-junk-answer</answer>")
    junk_steps: int = 30
    max_solution_steps: int = 1000
    full_reward: float = 1.0
    seeds: tuple[int, int] = (42, 123)


def solution_actions(value: Any, family: "EnvFamily | None",
                     tools: Any = None) -> list[str] | None | str:
    """Actions to replay; ``None`` when the family cannot replay this solution; a ``str`` is the
    message of an ``interface`` verdict (no family and not an action or a list of actions).

    Families may accept ``tools`` (the native schemas from the first ``info["tools"]``)."""
    if family is not None:
        if tools is not None and "tools" in inspect.signature(family.solution_actions).parameters:
            return family.solution_actions(value, tools=tools)
        return family.solution_actions(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(a, str) for a in value):
        return list(value)
    return f"solution() must return an action string or a list of action strings, got " \
           f"{type(value).__name__}"


def _play(session: "ProcessSession", actions: list[str], limit: int) -> tuple[float, bool, int]:
    """Step through ``actions``; returns (episode reward, terminated, steps taken)."""
    reward, steps = 0.0, 0
    for action in actions[:limit]:
        result = session.step(action)
        steps += 1
        if result.terminated:
            return min(max(result.reward, -1.0), 1.0), True, steps
        if result.truncated:
            return 0.0, False, steps
        reward = 0.0
    return reward, False, steps


class _Invalid(Exception):
    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category


def check_program(sandbox: "ProcessSandbox", program: str, family: "EnvFamily | None" = None,
                  options: CheckOptions | None = None) -> Verdict:
    """Validate one program; never raises for anything the program does."""
    options = options or CheckOptions()
    started = time.monotonic()
    details: dict[str, Any] = {}
    first_obs = ""
    seed_a, seed_b = options.seeds
    full = options.full_reward - 1e-6
    sessions: list[ProcessSession] = []
    try:
        sessions = sandbox.open_many(program, 3, family=family)
        # 1. The reference checks, in the first instance.
        session = sessions[0]
        details["env_class"] = session.env_class
        first_obs, first_info = session.reset(seed_a)
        if not first_obs.strip():
            raise _Invalid("interface", f"reset({seed_a}) returned an empty observation")
        ended = False
        probes: list[tuple[str, str]] = []
        for action in options.probe_actions:
            result = session.step(action)
            probes.append((action, result.observation))
            ended = ended or result.terminated
            if result.terminated or result.truncated:
                break
        session.reset(seed_b)
        session.close()
        # 2. Determinism and solvability, in a second instance.
        session = sessions[1]
        again, _ = session.reset(seed_a)
        if again != first_obs:
            raise _Invalid("nondeterministic", f"reset({seed_a}) gave different first "
                           "observations in two instances")
        value = session.solution()
        actions = solution_actions(value, family, first_info.get("tools"))
        if isinstance(actions, str):
            raise _Invalid("interface", actions)
        solved = None
        if actions is None:
            details["solvability"] = "unverified: the family cannot replay this solution"
        else:
            reward, terminated, steps = _play(session, actions, options.max_solution_steps)
            ended = ended or terminated
            solved = terminated and reward >= full
            details["solution"] = {"actions": len(actions), "steps": steps,
                                   "reward": reward, "terminated": terminated}
        session.close()
        # 3. Step determinism, junk actions and termination, in a third instance.
        trivial = None
        session = sessions[2]
        session.reset(seed_a)
        for action, expected in probes:
            if session.step(action).observation != expected:
                raise _Invalid("nondeterministic", f"step({action!r}) after reset({seed_a}) "
                               "gave different observations in two instances")
        junk_actions = list(options.junk_actions)
        family_probes = getattr(family, "probe_actions", None)
        if callable(family_probes):
            junk_actions = [a for a in family_probes() if isinstance(a, str)] or junk_actions
        for junk in junk_actions:
            session.reset(seed_a)
            reward, terminated, _ = _play(session, [junk] * options.junk_steps,
                                          options.junk_steps)
            ended = ended or terminated
            if terminated and reward >= full and trivial is None:
                trivial = junk
        if not ended:
            raise _Invalid("endless", "no episode terminated (probe actions, the solution and "
                           f"{options.junk_steps} junk steps each)")
        if solved is False:
            sol = details["solution"]
            raise _Invalid("unsolvable", f"replaying solution() ({sol['actions']} actions) "
                           + ("ended with reward " + f"{sol['reward']:g}" if sol["terminated"]
                              else "did not end the episode"))
        if trivial is not None:
            raise _Invalid("trivial", f"the junk action {trivial!r} repeated reaches full reward")
    except _Invalid as exc:
        return Verdict(valid=False, category=exc.category, message=str(exc),
                       observation=first_obs[:2048], seconds=time.monotonic() - started,
                       details=details)
    except SandboxError as exc:
        verdict = exc.verdict
        return replace(verdict, observation=(verdict.observation or first_obs)[:2048],
                       seconds=time.monotonic() - started, details={**details,
                                                                    **verdict.details})
    finally:
        for opened in sessions:
            opened.close()
    message = "valid" if "solvability" not in details else "valid (solvability unverified)"
    return Verdict(valid=True, category="ok", message=message, observation=first_obs[:2048],
                   seconds=time.monotonic() - started, details=details)


def check_many(sandbox: "ProcessSandbox", programs: list[str], family: "EnvFamily | None",
               options: CheckOptions, workers: int) -> list[Verdict]:
    """Check several programs at once across the pool; results in input order."""

    def one(program: str) -> Verdict:
        try:
            return check_program(sandbox, program, family, options)
        except Exception as exc:  # noqa: BLE001 - a host-side failure is one crash verdict
            return Verdict(valid=False, category="crash",
                           message=f"the sandbox failed: {type(exc).__name__}: {exc}")

    if len(programs) <= 1 or workers <= 1:
        return [one(p) for p in programs]
    with ThreadPoolExecutor(max_workers=min(workers, len(programs))) as pool:
        return list(pool.map(one, programs))
