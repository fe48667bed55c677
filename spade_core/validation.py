"""SPADE's definition of a valid environment, one function per rule, written against the
``Sandbox`` and ``SandboxSession`` interfaces so that every sandbox gives the same verdicts.

The reference checks come first (``reset(42)`` gives a non-empty observation, probe actions give
well-typed steps with finite rewards in [-10, 10], ``reset(123)`` works); then ours: determinism
(a second instance, same seed, same observations), solvability (replaying ``solution()`` reaches
full reward), triviality (junk actions must not) and termination (some episode must end); for a
family with a state probe, the final-state checks (:func:`check_final_state`). Three
independent instances per program, opened with one ``open_many`` (one worker in the ``process``
sandbox): the reference checks; the reset-determinism check and the solution replay; the
step-determinism check and the junk episodes, separated by resets as an agent's episodes would be.
With ``reset_gate``, a program that passes them all then meets the reference's "criteria at reset"
gate (:func:`check_criteria_at_reset`), on three more instances.

A sandbox provides isolation only. What it returns is checked here again (:func:`typed_step`),
so a sandbox that forwards a program's values unchecked still gets the same verdicts.
"""

from __future__ import annotations

import inspect
import math
import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from spade_core.errors import SandboxError
from spade_core.records import StepResult, Verdict, VerdictCategory

if TYPE_CHECKING:
    from spade_core.config.schema import SpadeConfig
    from spade_core.interfaces.family import EnvFamily
    from spade_core.interfaces.sandbox import Sandbox, SandboxSession

#: Reward bounds of the reference's validation; a family's own contract is [0, 1].
REWARD_BOUND = 10.0
#: Methods every environment class defines (directly or through a base class).
ENV_METHODS: tuple[str, ...] = ("reset", "step", "solution")
#: A tiny valid environment: ``spade doctor`` and the contract checker run it through a sandbox.
PROBE_PROGRAM = '''
class ProbeEnv:
    def reset(self, seed=None):
        self.turns = 0
        return "Say \\\\boxed{ok}.", {}

    def step(self, action):
        self.turns += 1
        won = action.strip() == "\\\\boxed{ok}"
        return ("yes" if won else "no"), float(won), won or self.turns >= 3, False, {}

    def solution(self):
        return "\\\\boxed{ok}"
'''
#: Characters of the first observation kept in a verdict.
OBSERVATION_CHARS = 2048


@dataclass(frozen=True)
class ValidationOptions:
    """Knobs of validation; the defaults follow the reference where it has one."""

    probe_actions: tuple[str, ...] = ("\\boxed{1}", "hello", "<answer>0</answer>")
    junk_actions: tuple[str, ...] = ("", "\\boxed{}", "<answer>spade-junk-answer</answer>")
    junk_steps: int = 30
    max_solution_steps: int = 1000
    #: Episode reward that counts as solved (``loop.success_threshold``).
    success_threshold: float = 1.0
    seeds: tuple[int, int] = (42, 123)
    #: Programs validated at once (``None``: two per CPU).
    concurrency: int | None = None
    #: The "criteria at reset" gate (``validation.reset_gate``): refuse a program whose success
    #: criteria raise on the state reset leaves, on every seed of ``reset_gate_seeds``.
    reset_gate: bool = False
    reset_gate_seeds: tuple[int, ...] = (0, 1, 2)

    @classmethod
    def from_config(cls, config: "SpadeConfig") -> "ValidationOptions":
        """A run's settings: the ``validation`` section and ``loop.success_threshold``."""
        section = config.validation
        return cls(junk_steps=section.junk_steps, max_solution_steps=section.max_solution_steps,
                   concurrency=section.concurrency, reset_gate=section.reset_gate,
                   success_threshold=config.loop.success_threshold)


class Invalid(Exception):
    """A rule refused the program: ``category`` and a message saying what was wrong."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category


# -- the contract of a program and of one call ----------------------------------------------------


def env_class(classes: Mapping[str, type]) -> type:
    """The environment class of a program: among the classes it defined (name -> class, injected
    names already left out), exactly one leaf class whose name ends in ``Env``; else
    :class:`Invalid` (``interface``) naming what was found. Sandboxes call this when loading."""
    candidates = {name: cls for name, cls in classes.items() if name.endswith("Env")}
    leaves = [name for name, cls in candidates.items()
              if not any(other is not cls and issubclass(other, cls)
                         for other in candidates.values())]
    if len(leaves) != 1:
        found = ", ".join(sorted(candidates)) or "none"
        raise Invalid("interface", "the program must define exactly one class whose name ends "
                      f"in 'Env' (found: {found})")
    return candidates[leaves[0]]


def check_env_methods(cls: type) -> None:
    """:class:`Invalid` (``interface``) when the environment class lacks one of
    :data:`ENV_METHODS`; a sandbox may check this after instantiating the class or report the
    same category when the missing method is first called."""
    missing = [name for name in ENV_METHODS if not _defines(cls, name)]
    if missing:
        raise Invalid("interface", f"class {cls.__name__} lacks "
                      f"{', '.join(m + '()' for m in missing)}: an environment needs "
                      "reset(seed=None), step(action) and solution()")


def _defines(cls: type, name: str) -> bool:
    try:
        return callable(inspect.getattr_static(cls, name))
    except AttributeError:
        return False



def typed_reset(value: Any, what: str = "reset()") -> tuple[str, dict[str, Any]]:
    """``(observation, info)`` from what ``reset`` returned, or :class:`Invalid` (``interface``)."""
    if not (isinstance(value, tuple) and len(value) == 2):
        raise Invalid("interface", f"{what} must return (observation, info), got "
                      f"{type(value).__name__}")
    observation, info = value
    if not isinstance(observation, str):
        raise Invalid("interface", f"{what}: the observation is not a str")
    if not isinstance(info, dict):
        raise Invalid("interface", f"{what}: info is not a dict")
    return observation, info


def typed_step(value: Any, what: str = "step()") -> StepResult:
    """A :class:`StepResult` from a step's 5-tuple (or a ``StepResult``), or :class:`Invalid`:
    a str observation, a finite reward within ``REWARD_BOUND``, bool flags and a dict info."""
    if isinstance(value, StepResult):
        value = (value.observation, value.reward, value.terminated, value.truncated, value.info)
    if not (isinstance(value, tuple) and len(value) == 5):
        raise Invalid("interface", f"{what} must return (observation, reward, terminated, "
                      f"truncated, info), got {type(value).__name__}")
    observation, reward, terminated, truncated, info = value
    try:
        finite = isinstance(reward, (int, float)) and not isinstance(reward, bool) \
            and math.isfinite(reward)
    except OverflowError:  # an integer too large for a float
        finite = False
    if not finite:
        raise Invalid("interface", f"{what}: reward {str(reward)[:40]} is not a finite number")
    if abs(reward) > REWARD_BOUND:
        raise Invalid("interface", f"{what}: reward {reward} is outside "
                      f"[-{REWARD_BOUND:g}, {REWARD_BOUND:g}]")
    if not isinstance(terminated, bool) or not isinstance(truncated, bool):
        raise Invalid("interface", f"{what}: terminated and truncated must be bools")
    if not isinstance(observation, str):
        raise Invalid("interface", f"{what}: the observation is not a str")
    if not isinstance(info, dict):
        raise Invalid("interface", f"{what}: info is not a dict")
    return StepResult(observation, float(reward), terminated, truncated, info)


def _reset(session: "SandboxSession", seed: int) -> tuple[str, dict[str, Any]]:
    return typed_reset(session.reset(seed), f"reset({seed})")


def _step(session: "SandboxSession", action: str) -> StepResult:
    return typed_step(session.step(action))


def close_sessions(sessions: Sequence["SandboxSession"]) -> None:
    """Close every session; one the sandbox already lost (``SandboxError``) is passed over."""
    for session in sessions:
        try:
            session.close()
        except SandboxError:
            pass


def episode_reward(session: "SandboxSession", actions: Sequence[str],
                   limit: int) -> tuple[float, bool, int]:
    """Step through ``actions`` (at most ``limit``): (episode reward, terminated, steps taken).
    The episode reward is the reference's: the last reward clipped to [-1, 1] if it terminated."""
    steps = 0
    for action in list(actions)[:limit]:
        result = _step(session, action)
        steps += 1
        if result.terminated:
            return min(max(result.reward, -1.0), 1.0), True, steps
        if result.truncated:
            return 0.0, False, steps
    return 0.0, False, steps


# -- the rules ------------------------------------------------------------------------------------


@dataclass
class Findings:
    """What the rules learned about one program, for the verdict and for later rules."""

    first_observation: str = ""
    first_info: dict[str, Any] = field(default_factory=dict)
    probes: list[tuple[str, str]] = field(default_factory=list)
    ended: bool = False
    solved: bool | None = None
    trivial: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


def check_reference(session: "SandboxSession", options: ValidationOptions,
                    found: Findings) -> None:
    """The reference's checks: a non-empty first observation, well-typed probe steps (stopping
    when one ends the episode), and a second seed that resets."""
    seed_a, seed_b = options.seeds
    found.first_observation, found.first_info = _reset(session, seed_a)
    if not found.first_observation.strip():
        raise Invalid("interface", f"reset({seed_a}) returned an empty observation")
    for action in options.probe_actions:
        result = _step(session, action)
        found.probes.append((action, result.observation))
        found.ended = found.ended or result.terminated
        if result.terminated or result.truncated:
            break
    _reset(session, seed_b)


def check_reset_determinism(session: "SandboxSession", options: ValidationOptions,
                            found: Findings) -> None:
    """A fresh instance reset with the same seed shows the same first observation."""
    seed = options.seeds[0]
    again, _ = _reset(session, seed)
    if again != found.first_observation:
        raise Invalid("nondeterministic", f"reset({seed}) gave different first observations in "
                      "two instances")


def solution_actions(value: Any, family: "EnvFamily | None",
                     tools: Any = None) -> list[str] | None:
    """Actions that replay ``solution()``'s value: the family's reading of it, or (no family)
    an action string or a list of them; ``None`` when the family cannot replay it."""
    if family is not None:  # ``tools`` only when there are some, as the loop's hint step calls it
        return family.solution_actions(value, tools=tools) if tools is not None \
            else family.solution_actions(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(a, str) for a in value):
        return list(value)
    raise Invalid("interface", "solution() must return an action string or a list of action "
                  f"strings, got {type(value).__name__}")


def check_solution(session: "SandboxSession", family: "EnvFamily | None",
                   options: ValidationOptions, found: Findings) -> None:
    """Replay ``solution()`` from the first seed; records whether it reached full reward
    (``found.solved`` stays ``None`` when the family cannot replay it: unverified)."""
    actions = solution_actions(session.solution(), family, found.first_info.get("tools"))
    if actions is None:
        found.details["solvability"] = "unverified: the family cannot replay this solution"
        return
    reward, terminated, steps = episode_reward(session, actions, options.max_solution_steps)
    found.ended = found.ended or terminated
    found.solved = terminated and reward >= options.success_threshold - 1e-6
    found.details["solution"] = {"actions": len(actions), "steps": steps, "reward": reward,
                                 "terminated": terminated}


def check_step_determinism(session: "SandboxSession", options: ValidationOptions,
                           found: Findings) -> None:
    """A fresh instance answers the probe actions with the same observations."""
    seed = options.seeds[0]
    _reset(session, seed)
    for action, expected in found.probes:
        if _step(session, action).observation != expected:
            raise Invalid("nondeterministic", f"step({action!r}) after reset({seed}) gave "
                          "different observations in two instances")


def check_junk(session: "SandboxSession", family: "EnvFamily | None",
               options: ValidationOptions, found: Findings) -> None:
    """Junk actions (the family's probes, else the defaults), each repeated for a whole episode;
    records the first that reaches full reward and whether any episode ended."""
    junk = list(options.junk_actions)
    if family is not None:
        junk = [a for a in family.probe_actions() if isinstance(a, str)] or junk
    for action in junk:
        _reset(session, options.seeds[0])
        reward, terminated, _ = episode_reward(session, [action] * options.junk_steps,
                                               options.junk_steps)
        found.ended = found.ended or terminated
        if terminated and reward >= options.success_threshold - 1e-6 and found.trivial is None:
            found.trivial = action


def _final_state(session: "SandboxSession", probe: str) -> dict[str, Any] | None:
    info = session.step(probe).info
    report = info.get("final_state") if isinstance(info, dict) else None
    return report if isinstance(report, dict) else None


def check_final_state(first: "SandboxSession", second: "SandboxSession",
                      family: "EnvFamily | None", options: ValidationOptions,
                      found: Findings) -> None:
    """For a family with a :meth:`~EnvFamily.state_probe` and a program that checks its final
    state (``goal`` not ``None``): the goal must not hold right after ``reset`` (a do-nothing
    episode must not succeed), must hold after the solution's replay on ``first`` (done by
    :func:`check_solution`) and on a fresh replay on ``second``, and both final states must have
    one digest (the final state is deterministic for a seed)."""
    probe = family.state_probe() if family is not None else None
    if not probe or not found.solved:
        return
    after = _final_state(first, probe)
    if after is None or after.get("goal") is None:
        return
    seed = options.seeds[0]
    _reset(second, seed)
    start = _final_state(second, probe) or {}
    if start.get("goal"):
        raise Invalid("trivial", "goal_reached() already holds after reset(): doing nothing "
                      "solves the task")
    actions = solution_actions(second.solution(), family, found.first_info.get("tools"))
    episode_reward(second, actions or [], options.max_solution_steps)
    again = _final_state(second, probe) or {}
    found.details["final_state"] = {"goal_after_solution": after.get("goal"),
                                    "digest": after.get("digest")}
    if not after.get("goal") or not again.get("goal"):
        raise Invalid("unsolvable", "replaying solution() reached full reward but "
                      "goal_reached() is false on the final state")
    if after.get("digest") != again.get("digest"):
        raise Invalid("nondeterministic", f"replaying solution() after reset({seed}) in two "
                      "instances left different final states (database digests differ)")


def check_outcome(options: ValidationOptions, found: Findings) -> None:
    """The verdicts that need every episode: termination, solvability, triviality (in this
    order of precedence)."""
    if not found.ended:
        raise Invalid("endless", "no episode terminated (probe actions, the solution and "
                      f"{options.junk_steps} junk steps each)")
    if found.solved is False:
        sol = found.details["solution"]
        raise Invalid("unsolvable", f"replaying solution() ({sol['actions']} actions) "
                      + (f"ended with reward {sol['reward']:g}" if sol["terminated"]
                         else "did not end the episode"))
    if found.trivial is not None:
        raise Invalid("trivial", f"the junk action {found.trivial!r} repeated reaches full reward")


def check_criteria_at_reset(sandbox: "Sandbox", program: str, family: "EnvFamily | None",
                            options: ValidationOptions, found: Findings) -> None:
    """The reference's "criteria at reset" gate, run in the sandbox: one instance per seed of
    ``options.reset_gate_seeds`` is reset and sent the family's :meth:`~EnvFamily.criteria_probe`,
    which applies each of the program's success criteria to its initial state. :class:`Invalid`
    (``criteria_at_reset``) only when on every seed that could be evaluated at least one criterion
    raised: such a step can never be completed, whatever the data. Seeds whose reset or probe
    fails are skipped; a program without criteria, or a family without a probe, passes. Criteria
    that are merely false (or already true) at reset pass."""
    probe = family.criteria_probe() if family is not None else None
    if not probe:
        return
    seeds = options.reset_gate_seeds
    try:
        sessions = sandbox.open_many(program, len(seeds), family=family)
    except SandboxError:
        return
    reports: dict[str, Any] = {}
    try:
        for seed, session in zip(seeds, sessions, strict=True):
            try:
                session.reset(seed)
                info = session.step(probe).info
            except SandboxError:
                continue
            report = info.get("criteria_at_reset") if isinstance(info, dict) else None
            if not isinstance(report, dict) or not isinstance(report.get("raised"), list):
                continue
            if not report.get("criteria"):
                return  # no criteria: not a criteria-gated program
            reports[str(seed)] = report
    finally:
        close_sessions(sessions)
    found.details["criteria_at_reset"] = reports
    if reports and all(r["raised"] for r in reports.values()):
        first = {seed: r["raised"][0] for seed, r in reports.items()}
        said = "; ".join(f"seed {seed}: criterion {e.get('index')} raised {e.get('error')}"
                         for seed, e in first.items())
        raise Invalid("criteria_at_reset", "a success criterion (_message_criteria) raises on "
                      f"the state reset() leaves, on every seed tried ({said}); such a step can "
                      "never be completed. Make every criterion read only keys and types that "
                      "reset() puts in _state.")


# -- programs -------------------------------------------------------------------------------------


def validate_program(sandbox: "Sandbox", program: str, family: "EnvFamily | None" = None,
                     options: ValidationOptions | None = None) -> Verdict:
    """Run every rule on one program; never raises for anything the program does."""
    options = options or ValidationOptions()
    started = time.monotonic()
    found = Findings()
    sessions: list[SandboxSession] = []

    def verdict(category: str, message: str, **extra: Any) -> Verdict:
        return Verdict(valid=category == VerdictCategory.OK, category=str(category),
                       message=message,
                       observation=found.first_observation[:OBSERVATION_CHARS],
                       seconds=time.monotonic() - started, details=found.details, **extra)

    try:
        sessions = sandbox.open_many(program, 3, family=family)
        if sessions[0].env_class is not None:
            found.details["env_class"] = sessions[0].env_class
        check_reference(sessions[0], options, found)
        sessions[0].close()
        check_reset_determinism(sessions[1], options, found)
        check_solution(sessions[1], family, options, found)
        check_step_determinism(sessions[2], options, found)
        check_junk(sessions[2], family, options, found)
        check_outcome(options, found)
        check_final_state(sessions[1], sessions[2], family, options, found)
        sessions[1].close()
        if options.reset_gate:
            check_criteria_at_reset(sandbox, program, family, options, found)
    except Invalid as exc:
        return verdict(exc.category, str(exc))
    except SandboxError as exc:
        failed = exc.verdict
        return replace(failed, observation=(failed.observation or found.first_observation)
                       [:OBSERVATION_CHARS], seconds=time.monotonic() - started,
                       details={**found.details, **failed.details})
    finally:
        close_sessions(sessions)
    unverified = "solvability" in found.details
    return verdict(VerdictCategory.OK, "valid (solvability unverified)" if unverified
                   else "valid")


def validate(sandbox: "Sandbox", programs: Sequence[str], *, family: "EnvFamily | None" = None,
             options: ValidationOptions | None = None) -> list[Verdict]:
    """Validate several programs, ``options.concurrency`` at once (the threads only wait on the
    sandbox's workers); verdicts in input order. A failure of the sandbox itself becomes a
    ``crash`` verdict for that program."""
    options = options or ValidationOptions()

    def one(program: str) -> Verdict:
        try:
            return validate_program(sandbox, program, family, options)
        except Exception as exc:  # noqa: BLE001 - a host-side failure is one crash verdict
            return Verdict(valid=False, category=str(VerdictCategory.CRASH),
                           message=f"the sandbox failed: {type(exc).__name__}: {exc}")

    programs = list(programs)
    workers = options.concurrency or 2 * (os.cpu_count() or 1)
    if len(programs) <= 1 or workers <= 1:
        return [one(p) for p in programs]
    with ThreadPoolExecutor(max_workers=min(workers, len(programs)),
                            thread_name_prefix="spade-validate") as executor:
        return list(executor.map(one, programs))
