"""Agent rollouts: play many environments, hinted and unhinted, batching generation across them.

All live episodes advance in lock step: one generation call produces the next action of every
episode that is still running, then each action is stepped in its own sandbox session. So K
rollouts of N environments cost ``max_turns`` generation calls, not ``N * K * max_turns``.

Opening sessions and stepping them are waits on worker processes, so they are issued from a small
thread pool and overlap. The threads only wait on IPC: untrusted code never runs in this process.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from spade_core.errors import SandboxError
from spade_core.interfaces import EnvFamily, GenerationBackend, Sandbox, SandboxSession
from spade_core.records import Episode, Turn

HINT_FORMAT = "{obs}\n\nHINT: {hint}"


def episode_reward(turns: list[Turn]) -> float:
    """The reference definition: last step reward clipped to [-1, 1] if terminated, else 0."""
    if not turns or not turns[-1].terminated:
        return 0.0
    return max(-1.0, min(1.0, turns[-1].reward))


@dataclass
class RolloutRequest:
    """Play ``program`` once per seed, with ``hint`` appended to the first observation if given."""

    env_id: str
    program: str
    family: EnvFamily
    seeds: Sequence[int]
    hint: str | None = None


@dataclass
class _Live:
    episode: Episode
    session: SandboxSession | None
    messages: list[dict[str, str]] = field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    done: bool = False


def _tools_for(family: EnvFamily, program: str,
               info: dict[str, Any] | None = None) -> list[dict[str, Any]] | None:
    # Tool-use programs build their tools in reset(), so the schemas come with its info.
    from_info = getattr(family, "tools_from_info", None)
    if callable(from_info) and info is not None:
        tools = from_info(info)
        if tools is not None:
            return tools
    tools_for = getattr(family, "tools_for", None)
    return tools_for(program) if callable(tools_for) else None


def _start(sandbox: Sandbox, request: RolloutRequest, seed: int) -> _Live:
    episode = Episode(env_id=request.env_id, seed=seed, hinted=request.hint is not None,
                      first_observation="")
    try:
        session = sandbox.open(request.program, family=request.family)
        observation, _info = session.reset(seed)
    except SandboxError as exc:
        episode.error = str(exc)
        return _Live(episode=episode, session=None, done=True)
    if request.hint is not None:
        observation = HINT_FORMAT.format(obs=observation, hint=request.hint)
    episode.first_observation = observation
    messages = [{"role": "system", "content": request.family.agent_instructions()},
                {"role": "user", "content": observation}]
    return _Live(episode=episode, session=session, messages=messages,
                 tools=_tools_for(request.family, request.program, _info))


def run_rollouts(
    sandbox: Sandbox,
    backend: GenerationBackend,
    requests: Sequence[RolloutRequest],
    *,
    max_turns: int,
    max_new_tokens: int,
    temperature: float,
    seed: int,
) -> tuple[list[list[Episode]], list[list[list[dict[str, str]]]]]:
    """Play every request; returns per request its episodes and their conversations (in order)."""
    with ThreadPoolExecutor(max_workers=IO_THREADS, thread_name_prefix="spade-rollout") as pool:
        return _run(pool, sandbox, backend, requests, max_turns=max_turns,
                    max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)


#: Threads that wait on sandbox workers at once (IPC only).
IO_THREADS = 8


def _run(pool: ThreadPoolExecutor, sandbox: Sandbox, backend: GenerationBackend,
         requests: Sequence[RolloutRequest], *, max_turns: int, max_new_tokens: int,
         temperature: float, seed: int,
         ) -> tuple[list[list[Episode]], list[list[list[dict[str, str]]]]]:
    starts = [(r, s) for r in requests for s in r.seeds]
    flat = list(pool.map(lambda rs: _start(sandbox, rs[0], rs[1]), starts))
    live: list[list[_Live]] = []
    position = 0
    for r in requests:
        live.append(flat[position:position + len(r.seeds)])
        position += len(r.seeds)
    try:
        for turn in range(max_turns):
            active = [item for item in flat if not item.done]
            if not active:
                break
            # One generation call per tool schema set (None for most families).
            by_tools: dict[str, list[_Live]] = {}
            for item in active:
                by_tools.setdefault(repr(item.tools), []).append(item)
            for group in by_tools.values():
                generations = backend.generate(
                    [item.messages for item in group], max_new_tokens=max_new_tokens,
                    temperature=temperature, seed=seed + turn, tools=group[0].tools)
                last = turn == max_turns - 1
                list(pool.map(lambda pair: _advance(pair[0], pair[1].text, last_turn=last),
                              zip(group, generations, strict=True)))
    finally:
        list(pool.map(_close, flat))
    episodes = [[item.episode for item in group] for group in live]
    conversations = [[item.messages for item in group] for group in live]
    return episodes, conversations


def _close(item: _Live) -> None:
    if item.session is not None:
        item.session.close()


def _advance(item: _Live, action: str, last_turn: bool) -> None:
    item.messages.append({"role": "assistant", "content": action})
    try:
        result = item.session.step(action)  # type: ignore[union-attr]
    except SandboxError as exc:
        item.episode.error = str(exc)
        item.done = True
        return
    item.episode.turns.append(Turn(action=action, observation=result.observation,
                                   reward=result.reward, terminated=result.terminated,
                                   truncated=result.truncated))
    if result.terminated or result.truncated or last_turn:
        item.done = True
        item.episode.reward = episode_reward(item.episode.turns)
    else:
        item.messages.append({"role": "user", "content": result.observation})
