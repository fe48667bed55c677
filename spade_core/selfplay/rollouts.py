"""Agent rollouts: play many environments, hinted and unhinted, batching generation across them.

All live episodes advance in lock step: one generation call produces the next action of every
episode that is still running, then every action is stepped in its own sandbox session. So K
rollouts of N environments cost ``max_turns`` generation calls, not ``N * K * max_turns``.

Sessions are opened, reset and stepped through :class:`SessionBatch`: with the ``process``
sandbox, all 2K plays of an environment live in one worker and each turn is one round trip per
worker. Untrusted code never runs in this process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from spade_core.errors import SandboxError
from spade_core.interfaces import EnvFamily, GenerationBackend, Sandbox, SandboxSession
from spade_core.records import Episode, StepResult, Turn
from spade_core.selfplay.sessions import SessionBatch

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
    family: EnvFamily | None = None
    messages: list[dict[str, str]] = field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    done: bool = False
    reported: bool = False


def run_rollouts(
    sandbox: Sandbox,
    backend: GenerationBackend,
    requests: Sequence[RolloutRequest],
    *,
    max_turns: int,
    max_new_tokens: int,
    temperature: float,
    seed: int,
    top_p: float | None = None,
    top_k: int | None = None,
    chat_template_kwargs: Mapping[str, Any] | None = None,
    on_done: Callable[[int], None] | None = None,
    sessions: Sequence[Sequence[SandboxSession]] | None = None,
    batch: SessionBatch | None = None,
    end_on_truncation: bool = False,
) -> tuple[list[list[Episode]], list[list[list[dict[str, str]]]]]:
    """Play every request; returns per request its episodes and their conversations (in order).

    Requests with the same program (an environment's hinted and unhinted plays) share one
    ``open`` call: one worker hosting all their instances when the sandbox can. ``sessions``, when
    given, are already open (one per seed of each request; not yet reset) and are used instead;
    the caller then closes them. ``on_done(n)`` is told each time ``n`` more episodes have ended
    (progress bars). ``top_p``, ``top_k`` and ``chat_template_kwargs`` go to every generation
    call (``None``: the backend's own).

    Each reply is stepped as its family's :meth:`~EnvFamily.action_from_reply`; the
    conversation keeps the reply itself. With ``end_on_truncation``, a reply cut off at
    ``max_new_tokens`` (``finish_reason == "length"``) ends its episode at once, unstepped, with
    reward 0 (``Episode.cut_off``)."""
    live = [[_Live(episode=Episode(env_id=r.env_id, seed=s, hinted=r.hint is not None,
                                   first_observation=""), session=None, family=r.family)
             for s in r.seeds]
            for r in requests]
    flat = [item for group in live for item in group]
    with ExitStack() as stack:
        if batch is None:
            batch = stack.enter_context(SessionBatch(sandbox))
        if sessions is None:
            stack.callback(lambda: batch.close([i.session for i in flat if i.session is not None]))
            _open(batch, requests, live)
        else:
            for group, given in zip(live, sessions, strict=True):
                for item, session in zip(group, given, strict=True):
                    item.session = session
        _reset(batch, requests, live)
        _report(on_done, flat)
        for turn in range(max_turns):
            active = [item for item in flat if not item.done]
            if not active:
                break
            replies: dict[int, str] = {}
            cut: list[_Live] = []
            # One generation call per tool schema set (None for most families).
            by_tools: dict[str, list[_Live]] = {}
            for item in active:
                by_tools.setdefault(repr(item.tools), []).append(item)
            for group in by_tools.values():
                generations = backend.generate(
                    [item.messages for item in group], max_new_tokens=max_new_tokens,
                    temperature=temperature, seed=seed + turn, tools=group[0].tools,
                    top_p=top_p, top_k=top_k, chat_template_kwargs=chat_template_kwargs)
                for item, generation in zip(group, generations, strict=True):
                    replies[id(item)] = generation.text
                    if end_on_truncation and generation.finish_reason == "length":
                        cut.append(item)
            for item in cut:
                _cut_off(item, replies[id(item)])
            stepped = [item for item in active if not item.done]
            actions = {id(item): _action(item, replies[id(item)]) for item in stepped}
            results = batch.step([(item.session, actions[id(item)]) for item in stepped])
            last = turn == max_turns - 1
            for item, result in zip(stepped, results, strict=True):
                _advance(item, replies[id(item)], actions[id(item)], result, last_turn=last)
            _report(on_done, active)
    episodes = [[item.episode for item in group] for group in live]
    conversations = [[item.messages for item in group] for group in live]
    return episodes, conversations


def _report(on_done: Callable[[int], None] | None, items: Sequence[_Live]) -> None:
    if on_done is not None:
        ended = sum(1 for item in items if item.done and not item.reported)
        for item in items:
            item.reported = item.reported or item.done
        if ended:
            on_done(ended)


def _open(batch: SessionBatch, requests: Sequence[RolloutRequest],
          live: list[list[_Live]]) -> None:
    """One open per distinct program, holding the sessions of every request that plays it."""
    groups: dict[tuple[str, str], list[int]] = {}
    for index, request in enumerate(requests):
        groups.setdefault((request.program, request.family.name), []).append(index)
    keys = list(groups)
    specs = [(requests[groups[k][0]].program, requests[groups[k][0]].family,
              sum(len(requests[i].seeds) for i in groups[k])) for k in keys]
    for key, opened in zip(keys, batch.open(specs), strict=True):
        items = [item for i in groups[key] for item in live[i]]
        if isinstance(opened, SandboxError):
            for item in items:
                item.episode.error, item.done = str(opened), True
            continue
        for item, session in zip(items, opened, strict=True):
            item.session = session


def _reset(batch: SessionBatch, requests: Sequence[RolloutRequest],
           live: list[list[_Live]]) -> None:
    pending = [(request, item) for request, group in zip(requests, live) for item in group
               if item.session is not None]
    results = batch.reset([(item.session, item.episode.seed) for _, item in pending])
    for (request, item), result in zip(pending, results, strict=True):
        if isinstance(result, SandboxError):
            _failed(item, result)
            continue
        observation, info = result
        if request.hint is not None:
            observation = HINT_FORMAT.format(obs=observation, hint=request.hint)
        item.episode.first_observation = observation
        item.messages = [{"role": "system", "content": request.family.agent_instructions()},
                         {"role": "user", "content": observation}]
        # Tool-use programs build their tools in reset(), so the schemas come with its info.
        item.tools = request.family.tools_from_info(info)


def _failed(item: _Live, error: SandboxError) -> None:
    """The episode ends with the environment's failure (reward 0), a timeout marked as such."""
    item.episode.error, item.done = str(error), True
    item.episode.timed_out = error.verdict.category == "timeout"


def _action(item: _Live, reply: str) -> str:
    return item.family.action_from_reply(reply) if item.family is not None else reply


def _cut_off(item: _Live, reply: str) -> None:
    """The reply ran out of tokens: the episode ends unstepped with reward 0 (the reference's
    rule: no end of sequence, no step). The reply stays in the conversation."""
    item.messages.append({"role": "assistant", "content": reply})
    item.episode.cut_off, item.done, item.episode.reward = True, True, 0.0


def _advance(item: _Live, reply: str, action: str, result: StepResult | SandboxError,
             last_turn: bool) -> None:
    item.messages.append({"role": "assistant", "content": reply})
    if isinstance(result, SandboxError):
        _failed(item, result)
        return
    note = item.family.masked_reply(reply) if item.family is not None else None
    item.episode.turns.append(Turn(action=action, observation=result.observation,
                                   reward=result.reward, terminated=result.terminated,
                                   truncated=result.truncated, masked=note is not None))
    if result.terminated or result.truncated or last_turn:
        item.done = True
        item.episode.reward = episode_reward(item.episode.turns)
    else:
        observation = f"{result.observation}\n\n{note}" if note else result.observation
        item.messages.append({"role": "user", "content": observation})
