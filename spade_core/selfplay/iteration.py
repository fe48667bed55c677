"""One self-play iteration: design, validate, dedupe, hint, roll out, estimate, remember, train.

Every step goes through a component interface, so each can be swapped by config. A proposal that
fails at any step is recorded with why, and gets the configured designer reward; it never stops the
iteration.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from statistics import fmean
from typing import Any

from spade_core.config.schema import LoopSection
from spade_core.errors import PluginError, SandboxError, SpadeError
from spade_core.interfaces import (
    CorpusSampler,
    DifficultyEstimator,
    EnvFamily,
    EnvMemory,
    EnvRecord,
    EstimateInput,
    GenerationBackend,
    PromptStrategy,
    Sandbox,
    SandboxSession,
    Trainer,
)
from spade_core.records import (
    DesignTarget,
    Difficulty,
    Document,
    EnvProgram,
    EnvStatus,
    Episode,
    Verdict,
    VerdictCategory,
)
from spade_core.selfplay.contamination import ContaminationGuard, refuse_contaminated
from spade_core.selfplay.hints import (
    HINT_SYSTEM,
    HintDiagnostics,
    generate_hints,
    hint_hurt,
    redact_leaks,
    secrets_of,
)
from spade_core.phases import PhaseTimer
from spade_core.selfplay.rollouts import RolloutRequest, run_rollouts
from spade_core.selfplay.sessions import SessionBatch
from spade_core.selfplay.validator import LLMValidator, llm_validate
from spade_core.untrusted_text import PARSE_FAILURES
from spade_core.validation import ValidationOptions, validate

__all__ = ["Components", "PhaseTimer", "Proposal", "design", "dedupe", "draw_replay",
           "retire_aged", "draw_from_pool", "play", "estimate",
           "failure_reward", "window_replays"]


@dataclass
class Components:
    """The built components a run plays with."""

    corpus: CorpusSampler
    designer: PromptStrategy
    families: list[EnvFamily]
    sandbox: Sandbox
    estimator: DifficultyEstimator
    memory: EnvMemory
    backend: GenerationBackend
    trainer: Trainer
    #: How proposals are validated (config ``validation`` and ``loop.success_threshold``).
    validation: ValidationOptions = field(default_factory=ValidationOptions)
    #: Writes the hints (config ``hints.backend``); ``None``: the policy (``backend``).
    hint_backend: GenerationBackend | None = None
    #: ``family``: each family's hint instructions; ``single``: one prompt for all (``hints``).
    hint_prompt: str = "family"
    #: The optional LLM validator (``validation.llm``); ``None``: off.
    llm_validator: LLMValidator | None = None
    #: The estimator as errors name it: registered name, plugin and distribution ("": its class).
    estimator_label: str = ""


@dataclass
class Proposal:
    """One environment the designer was asked for, through every step it reached."""

    index: int
    family: EnvFamily
    document: Document
    prompt: list[dict[str, str]]
    completions: list[str] = field(default_factory=list)
    attempt_categories: list[str] = field(default_factory=list)
    #: The conversation each attempt was generated from: ``prompt``, or a repair turn's.
    attempt_prompts: list[list[dict[str, str]]] = field(default_factory=list)
    #: Repair turns used: rejected answers sent back with their verdict.
    repairs: int = 0
    #: The LLM validator's verdict on each attempt it judged (``True``: accepted).
    validator_verdicts: list[bool] = field(default_factory=list)
    #: What the designer was asked for: skill, level, variant (from the family's rotation).
    target: DesignTarget = field(default_factory=DesignTarget)
    #: A frontier environment from the memory, played again (no designer sample: its proposal
    #: was rewarded when it was first played).
    replayed: bool = False
    #: Iterations the environment has been played in, this one included (from the memory).
    plays: int = 0
    program: str | None = None
    verdict: Verdict | None = None
    status: str = EnvStatus.REJECTED
    duplicate_of: str | None = None
    similarity: float | None = None
    hint: str = ""
    hint_redacted: bool = False
    #: How the hint fared this iteration (set when hinted episodes were played).
    hint_diagnostics: HintDiagnostics | None = None
    #: The seeded instance's solution as actions (``None``: it has none the family can read).
    solution: list[str] | None = None
    secrets: list[str] = field(default_factory=list)
    first_observation: str = ""
    unhinted: list[Episode] = field(default_factory=list)
    hinted: list[Episode] = field(default_factory=list)
    #: Unhinted plays that raised or timed out, left out of ``unhinted`` (``loop.failed_plays:
    #: drop``, the reference): no win rate, no regret, no agent sample; kept for the counts.
    failed: list[Episode] = field(default_factory=list)
    #: Hinted rewards measured earlier (a window's later iterations play no hinted episodes; the
    #: estimate reuses those of the window's start). ``None``: this iteration's ``hinted``.
    hint_rewards: list[float] | None = None
    conversations: list[list[dict[str, str]]] = field(default_factory=list)
    difficulty: Difficulty | None = None
    designer_reward: float = 0.0

    # -- state changes: every status a proposal takes is set by one of these --------------------

    def reject(self, verdict: Verdict | None = None) -> None:
        """Refused or not played (validation, contamination, a failed first reset); ``verdict``
        says why when it is new."""
        self.status = EnvStatus.REJECTED
        if verdict is not None:
            self.verdict = verdict

    def refuse_as_duplicate(self, of: str, similarity: float) -> None:
        """A valid program the memory already holds as mastered (or near enough to one)."""
        self.status, self.duplicate_of, self.similarity = EnvStatus.DUPLICATE, of, float(similarity)

    def accept(self) -> None:
        """Valid and new: onto the frontier, to be played."""
        self.status = EnvStatus.FRONTIER

    def take_status(self, record: EnvRecord) -> None:
        """After a play: the status the memory gave it and how often it has been played."""
        self.status, self.plays = record.status, len(record.history)

    def retire(self) -> None:
        """Played too long without leaving the frontier (frontier schedule)."""
        self.status = EnvStatus.RETIRED

    @property
    def env_id(self) -> str:
        return EnvProgram(source=self.program or self.completions[-1], family=self.family.name).id

    def next_prompt(self, c: "Components", loop: LoopSection) -> list[dict[str, str]]:
        """What the next attempt is generated from: a repair turn on the last rejected answer
        while ``loop.max_repairs`` allows one, else the original prompt (a fresh sample)."""
        if not self.completions or self.verdict is None or self.repairs >= loop.max_repairs:
            return self.prompt
        self.repairs += 1
        return c.designer.repair(self.attempt_prompts[-1], self.completions[-1], self.verdict,
                                 self.family)


def _no_program(completion: str) -> Verdict:
    return Verdict(valid=False, category=VerdictCategory.SYNTAX,
                   message="no environment program found in the designer's answer",
                   details={"completion_chars": len(completion)})


def design(c: Components, loop: LoopSection, iteration: int, seed: int,
           timer: PhaseTimer) -> list[Proposal]:
    """Ask the designer for ``envs_per_iteration`` programs, validating and retrying the invalid:
    up to ``loop.max_attempts`` generations each, the first ``loop.max_repairs`` retries as repair
    turns (the rejected answer and its verdict go back to the designer), later ones fresh.

    Generation goes in chunks of ``loop.design_chunk`` prompts; each chunk's programs are
    validated on a background thread while the next chunk generates, so the sandbox works while
    the model does."""
    with timer.phase("sample", total=loop.envs_per_iteration):
        documents = c.corpus.sample(loop.envs_per_iteration)
        timer.advance("sample", len(documents))
    proposals = []
    positions: dict[str, int] = {}
    for i, document in enumerate(documents):
        # Families take turns; each family's own proposals walk through its targets (skills,
        # levels, variants), counted over the whole run so a resumed run continues the rotation.
        # The regeneration window and the position among the family's proposals of this
        # iteration serve the reference's skills per window.
        turn = iteration * loop.envs_per_iteration + i
        family = c.families[turn % len(c.families)]
        position = positions.get(family.name, 0)
        positions[family.name] = position + 1
        target = family.windowed_target(turn // len(c.families),
                                        iteration // loop.regeneration_interval, position)
        examples = c.memory.prompt_examples(2, 1, family.name, target.skill, seed=seed + i)
        proposals.append(Proposal(
            index=i, family=family, document=document, target=target,
            prompt=c.designer.build(document, family, examples, target)))
    pending = list(proposals)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="spade-validate") as validator:
        for attempt in range(loop.max_attempts):
            if not pending:
                break
            chunk = design_chunk(c.backend, loop, len(pending))
            running = []
            for start in range(0, len(pending), chunk):
                part = pending[start:start + chunk]
                for proposal in part:
                    proposal.attempt_prompts.append(proposal.next_prompt(c, loop))
                with timer.phase("design", total=len(part)):
                    generations = c.backend.generate(
                        [p.attempt_prompts[-1] for p in part],
                        max_new_tokens=loop.designer_max_tokens,
                        temperature=loop.designer_temperature,
                        top_p=loop.designer_top_p, top_k=loop.designer_top_k,
                        chat_template_kwargs=loop.template_kwargs("designer"),
                        seed=seed + 1000 * attempt + start)
                    timer.advance("design", len(part))
                for proposal, generation in zip(part, generations, strict=True):
                    proposal.completions.append(generation.text)
                    proposal.program = c.designer.extract(generation.text, proposal.family,
                                                              proposal.target)
                    proposal.verdict = None if proposal.program else _no_program(generation.text)
                timer.expect("validate", len(part))
                running.append(validator.submit(_validate_chunk, c, part, timer, iteration))
            for future in running:
                future.result()
            if c.llm_validator is not None:  # on this thread: the policy may be the validator
                with timer.phase("validate"):
                    llm_validate(c.llm_validator, c.backend,
                                 [p for p in pending if p.verdict and p.verdict.valid],
                                 seed=seed + 1000 * attempt + 999)
            for proposal in pending:
                proposal.attempt_categories.append(proposal.verdict.category)
            pending = [p for p in pending if not (p.verdict and p.verdict.valid)]
    return proposals


def design_chunk(backend: GenerationBackend, loop: LoopSection, pending: int) -> int:
    """Prompts per designer generation call: ``loop.design_chunk``, else the backend's batch size."""
    chunk = loop.design_chunk or backend.batch_size or pending
    return max(1, min(int(chunk), pending))


def _validate_chunk(c: Components, part: list[Proposal], timer: PhaseTimer,
                    iteration: int) -> None:
    start = time.perf_counter()
    try:
        _validate(c, [p for p in part if p.program], iteration)
    finally:
        timer.add_seconds("validate", time.perf_counter() - start)
        timer.advance("validate", len(part))


def draw_from_pool(c: Components, loop: LoopSection, seed: int,
                   timer: PhaseTimer, replays: bool = True,
                   chosen: list[str] | None = None) -> list[Proposal]:
    """Fixed-pool mode, through the same draw as self-play's replay: the pool stands in for the
    designer. The next ``envs_per_iteration`` pool environments never played yet (in the pool's
    order, by id) are this iteration's fresh ones; ``loop.replay_envs`` frontier environments
    already played are replayed as in self-play, and replays also fill the fresh slots once
    every pool environment has been played. Retired environments (mastered, too hard, aged)
    are never drawn. ``chosen`` (``loop.pool_order: shuffle``): exactly these pool
    environments, whatever their status, and no replay."""
    from spade_core.selfplay.pool import POOL_VERDICT, pool_document

    family_of = {f.name: f for f in c.families}
    if chosen is not None:
        records = [r for r in (c.memory.get(i) for i in chosen)
                   if r is not None and r.family in family_of]
        return [_proposal(i, r, family_of, pool_document(r), POOL_VERDICT, replayed=False)
                for i, r in enumerate(records)]
    with timer.phase("sample"):
        frontier = _frontier(c, family_of)
    unplayed = sorted((r for r in frontier if not r.history), key=lambda r: r.id)
    fresh = [_proposal(i, r, family_of, pool_document(r), POOL_VERDICT, replayed=False)
             for i, r in enumerate(unplayed[:loop.envs_per_iteration])]
    more = (loop.replay_envs if replays else 0) + loop.envs_per_iteration - len(fresh)
    return fresh + draw_replay(c, loop, {p.env_id for p in fresh}, seed, timer, count=more,
                               frontier=frontier)


#: The verdict a replayed environment carries: it passed validation when it was proposed.
REPLAY_VERDICT = Verdict(valid=True, category="ok", message="replayed from the memory's frontier")


def _replay_order(records: list[EnvRecord], priority: str, seed: int) -> list[EnvRecord]:
    """Frontier records in the order ``loop.replay_priority`` asks for (ties by id, so the
    order, and with it a resumed run, is deterministic)."""
    if priority == "uniform":
        ordered = sorted(records, key=lambda r: r.id)
        random.Random(seed).shuffle(ordered)
        return ordered
    if priority == "age":  # least recently played first
        return sorted(records, key=lambda r: (r.history[-1].iteration, r.id))
    return sorted(records, key=lambda r: (-r.history[-1].designer_reward,
                                          -r.history[-1].figures.get("regret", 0.0), r.id))


def _frontier(c: Components, family_of: dict[str, EnvFamily]) -> list[EnvRecord]:
    """The memory's frontier records of the run's families (one memory query)."""
    return [r for r in c.memory.by_status((EnvStatus.FRONTIER,)) if r.family in family_of]


def _proposal(index: int, record: EnvRecord, family_of: dict[str, EnvFamily],
              document: Document, verdict: Verdict, replayed: bool) -> Proposal:
    """A stored, already valid environment to play again (a replay, or a fixed pool's entry),
    with what its designer was asked for and, for a replay, the hint it was first played with."""
    return Proposal(index=index, family=family_of[record.family], document=document, prompt=[],
                    program=record.source, verdict=verdict, status=EnvStatus.FRONTIER,
                    hint=record.hint if replayed else "", replayed=replayed,
                    target=DesignTarget(skill=record.skill or None, level=record.level))


def draw_replay(c: Components, loop: LoopSection, exclude: set[str], seed: int,
                timer: PhaseTimer, count: int | None = None,
                frontier: list[EnvRecord] | None = None) -> list[Proposal]:
    """Up to ``count`` (default ``loop.replay_envs``) frontier environments already played (and
    younger than ``loop.replay_max_age`` iterations), of the run's families, not among
    ``exclude``, in ``loop.replay_priority`` order. ``frontier``: the frontier records when the
    caller has already read them."""
    count = loop.replay_envs if count is None else count
    if count <= 0:
        return []
    family_of = {f.name: f for f in c.families}
    if frontier is None:
        with timer.phase("sample"):
            frontier = _frontier(c, family_of)
    candidates = [r for r in frontier if r.history and r.id not in exclude
                  and len(r.history) < loop.replay_max_age]
    chosen = _replay_order(candidates, loop.replay_priority, seed)[:count]
    return [_proposal(i, r, family_of, Document(id=r.doc_id or f"memory:{r.id}",
                                                text=r.description, source="memory"),
                      REPLAY_VERDICT, replayed=True)
            for i, r in enumerate(chosen)]


def window_replays(c: Components, env_ids: list[str], start: int,
                   drop_timed_out: bool = False) -> list[Proposal]:
    """A window's environments played again in its later iterations: from the memory, with the
    hint and the hinted rewards of the window's start (no hinted episode is played again).
    ``drop_timed_out`` (``loop.timeouts: start``, the reference's blacklist of hung games): an
    environment whose own code timed out in an earlier iteration of the window is not played
    again."""
    family_of = {f.name: f for f in c.families}
    proposals = []
    for env_id in env_ids:
        record = c.memory.get(env_id)
        if record is None or record.family not in family_of:
            continue
        if drop_timed_out and any(h.figures.get("step_timeouts", 0.0) > 0
                                  for h in record.history if h.iteration >= start):
            continue
        p = _proposal(len(proposals), record, family_of,
                      Document(id=record.doc_id or f"memory:{record.id}", text=record.description,
                               source="memory"), REPLAY_VERDICT, replayed=True)
        first = next((h for h in record.history if h.iteration == start), None)
        p.hint_rewards = list(first.hinted) if first is not None else []
        proposals.append(p)
    return proposals


def retire_aged(c: Components, loop: LoopSection, proposals: list[Proposal]) -> list[EnvRecord]:
    """Played environments still on the frontier after ``loop.replay_max_age`` iterations of
    play leave it as ``retired``; returns their records."""
    retired = []
    for p in proposals:
        if p.status == EnvStatus.FRONTIER and p.plays >= loop.replay_max_age:
            retired.append(c.memory.set_status(p.env_id, EnvStatus.RETIRED))
            p.retire()
    return retired


def _validate(c: Components, proposals: list[Proposal], iteration: int) -> None:
    """The sandbox's rules, then (from iteration 1 on, as the reference) the reset gate."""
    options = c.validation
    if iteration == 0 and options.reset_gate:
        options = replace(options, reset_gate=False)
    by_family: dict[str, list[Proposal]] = {}
    for proposal in proposals:
        by_family.setdefault(proposal.family.name, []).append(proposal)
    for group in by_family.values():
        verdicts = validate(c.sandbox, [p.program for p in group], family=group[0].family,
                            options=options)
        for proposal, verdict in zip(group, verdicts, strict=True):
            proposal.verdict = verdict


def dedupe(c: Components, proposals: list[Proposal],
           guard: ContaminationGuard | None = None) -> None:
    """Refuse near-duplicates of mastered environments before any rollout is spent on them, and
    with a contamination ``guard`` copies of held-out eval items (verdict ``contaminated``)."""
    candidates = []
    for p in proposals:
        if not (p.verdict and p.verdict.valid):
            continue
        program = EnvProgram(source=p.program, family=p.family.name, doc_id=p.document.id)
        existing = c.memory.get(program.id)
        if existing is not None and existing.status in (EnvStatus.MASTERED, EnvStatus.TOO_HARD,
                                                        EnvStatus.RETIRED):
            p.refuse_as_duplicate(existing.id, 1.0)
            continue
        candidates.append((p, program))
    candidates = refuse_contaminated(guard, candidates)
    matches = c.memory.find_duplicates([program for _, program in candidates])
    for (p, _), match in zip(candidates, matches, strict=True):
        if match is not None:
            record, similarity = match
            p.refuse_as_duplicate(record.id, similarity)
        else:
            p.accept()


def _first_observations(batch: SessionBatch, playable: list[Proposal],
                        sessions: list[SandboxSession | SandboxError],
                        seed: int) -> list[str | None]:
    """Reset each environment once on the first seed (one session each): its first observation and
    ``info["hint"]``; the solution is read too, to keep it out of the hint. Environments whose
    session fails are rejected with the failure's verdict."""
    provided: list[str | None] = [None] * len(playable)
    live = [(i, s) for i, s in enumerate(sessions) if not isinstance(s, SandboxError)]
    resets = batch.reset([(session, seed) for _, session in live])
    ok = [(i, session, r) for (i, session), r in zip(live, resets)
          if not isinstance(r, SandboxError)]
    solutions = batch.map(lambda item: _solution(item[1], playable[item[0]].family), ok)
    for (i, _, (observation, info)), actions in zip(ok, solutions, strict=True):
        p = playable[i]
        p.first_observation, p.solution = observation, actions
        p.secrets = secrets_of(actions or [])
        hint = info.get("hint") if isinstance(info, dict) else None
        provided[i] = str(hint) if isinstance(hint, str) and hint.strip() else None
    failures = {i: s for i, s in enumerate(sessions) if isinstance(s, SandboxError)}
    failures.update({i: r for (i, _), r in zip(live, resets) if isinstance(r, SandboxError)})
    for i, error in failures.items():
        playable[i].reject(error.verdict)
    return provided


def _solution(session: SandboxSession, family: EnvFamily) -> list[str] | None:
    """The seeded instance's solution as actions: hints are kept from giving it away and checked
    against its answer. ``None`` (unknown) when the worker failed or the family could not read
    the program's text (whatever its shape: a parse failure is never the run's end)."""
    try:
        return family.solution_actions(session.solution())
    except (SandboxError, *PARSE_FAILURES):
        return None


def play(c: Components, loop: LoopSection, proposals: list[Proposal], seed: int,
         timer: PhaseTimer, hinted: bool = True) -> None:
    """Hint, then K unhinted and H hinted episodes per playable environment (K =
    ``loop.rollouts_per_env``, H = ``loop.hint_plays_per_env``, default K), on the same seeds;
    ``hinted=False`` plays the unhinted ones only (a window's later iterations).

    Each environment is opened once with 1 + K + H sessions (one worker, with the ``process``
    sandbox): the first is reset for the hint phase, the others play the rollouts."""
    playable = [p for p in proposals if p.status == EnvStatus.FRONTIER]
    k = loop.rollouts_per_env
    h = (k if loop.hint_plays_per_env is None else loop.hint_plays_per_env) if hinted else 0
    seeds = [seed + i for i in range(k)]
    hint_seeds = [seed + i for i in range(h)]
    with SessionBatch(c.sandbox) as batch:
        opened: list[list[SandboxSession] | SandboxError] = []
        try:
            with timer.phase("hint", total=len(playable)):
                opened = batch.open([(p.program, p.family, 1 + k + h) for p in playable])
                firsts = [o if isinstance(o, SandboxError) else o[0] for o in opened]
                provided = _first_observations(batch, playable, firsts, seeds[0])
                batch.close([s for s in firsts if not isinstance(s, SandboxError)])
                now = [i for i, p in enumerate(playable) if p.status == EnvStatus.FRONTIER]
                # A replayed environment keeps the hint it was first played with; no hint is
                # written when no hinted episode is played (hint_plays_per_env 0).
                fresh = [i for i in now
                         if h and not (playable[i].replayed and playable[i].hint)]
                hints = generate_hints(
                    c.hint_backend or c.backend, [playable[i].program for i in fresh],
                    [playable[i].first_observation for i in fresh], [provided[i] for i in fresh],
                    max_new_tokens=loop.hint_max_tokens, temperature=loop.hint_temperature,
                    top_p=loop.hint_top_p, top_k=loop.hint_top_k, seed=seed,
                    systems=[_hint_system(c, playable[i].family) for i in fresh]
                ) if fresh else []
                for i, hint in zip(fresh, hints, strict=True):
                    p = playable[i]
                    p.hint, p.hint_redacted = redact_leaks(hint, p.secrets)
                    p.hint_diagnostics = HintDiagnostics(
                        source="env" if provided[i] else "model", redacted=p.hint_redacted)
                timer.advance("hint", len(playable))
            requests, sessions = [], []
            for i in now:
                p, mine = playable[i], opened[i]
                requests.append(RolloutRequest(p.env_id, p.program, p.family, seeds))
                sessions.append(mine[1:1 + k])  # type: ignore[index]
                if h:
                    requests.append(RolloutRequest(p.env_id, p.program, p.family, hint_seeds,
                                                   hint=p.hint))
                    sessions.append(mine[1 + k:])  # type: ignore[index]
            with timer.phase("rollout", total=k * len(requests)):
                episodes, conversations = run_rollouts(
                    c.sandbox, c.backend, requests, max_turns=loop.max_turns,
                    max_new_tokens=loop.agent_max_tokens, temperature=loop.agent_temperature,
                    top_p=loop.agent_top_p, top_k=loop.agent_top_k,
                    chat_template_kwargs=loop.template_kwargs("agent"), seed=seed,
                    on_done=lambda n: timer.advance("rollout", n), sessions=sessions,
                    batch=batch, end_on_truncation=loop.end_on_truncation)
        finally:
            batch.close([s for o in opened if not isinstance(o, SandboxError) for s in o[1:]])
    per = 2 if h else 1
    for j, i in enumerate(now):
        p = playable[i]
        p.unhinted = episodes[per * j]
        p.hinted = episodes[per * j + 1] if h else []
        p.conversations = [c for part in conversations[per * j:per * j + per] for c in part]
        if loop.failed_plays == "drop":
            _drop_failed(p)
        if h:
            _judge_hint(p)


def _drop_failed(p: Proposal) -> None:
    """The reference's rule for plays that raised or timed out: an unhinted one is dropped (no
    win rate, regret or agent sample; kept in ``p.failed``), its conversation with it. A hinted
    one stays, with its reward 0: the reference's hint arm scores a broken hint play as 0."""
    n = len(p.unhinted)
    kept = [k for k, e in enumerate(p.unhinted) if e.error is None]
    p.failed = [e for e in p.unhinted if e.error is not None]
    p.unhinted = [p.unhinted[k] for k in kept]
    p.conversations = [p.conversations[k] for k in kept] + p.conversations[n:]


def _hint_system(c: Components, family: EnvFamily) -> str:
    """The hint call's instructions for ``family`` (config ``hints.prompt``)."""
    return family.hint_instructions() if c.hint_prompt == "family" else HINT_SYSTEM


def _judge_hint(p: Proposal) -> None:
    """The hint's diagnostics after its hinted plays: did they do worse than the unhinted ones,
    and does the hint claim an answer other than the solution's (where the family can tell)."""
    diagnostics = p.hint_diagnostics or HintDiagnostics(source="kept")
    diagnostics.hurt = hint_hurt([e.reward for e in p.hinted], [e.reward for e in p.unhinted])
    try:
        diagnostics.contradicts = p.family.hint_contradicts(p.hint, p.solution)
    except Exception:  # noqa: BLE001 - a diagnostic must not end the run: "cannot tell"
        diagnostics.contradicts = None
    p.hint_diagnostics = diagnostics


def checked_estimate(estimator: DifficultyEstimator, data: EstimateInput,
                     label: str = "") -> Difficulty:
    """``estimator.estimate(data)``, held to its contract: a :class:`Difficulty` with a finite
    ``regret``. Any failure is a :class:`PluginError` that names the estimator as the config
    selects it (``label``: its registered name, plugin and distribution)."""
    who = label or f"difficulty estimator {type(estimator).__name__}"
    try:
        difficulty = estimator.estimate(data)
    except SpadeError:
        raise
    except Exception as exc:  # noqa: BLE001 - the plugin's failure, named for the user
        raise PluginError(f"{who}: estimate() failed: {type(exc).__name__}: {exc} (an estimate "
                          "is Difficulty(figures=..., designer_reward=..., regret=...), "
                          "docs/plugins.md)") from exc
    if not isinstance(difficulty, Difficulty) or not difficulty.has_regret:
        got = (f"regret={difficulty.regret!r}" if isinstance(difficulty, Difficulty)
               else f"a {type(difficulty).__name__}")
        raise PluginError(f"{who}: estimate() returned {got}; an estimate must be a Difficulty "
                          "whose regret is a finite number, the mean hinted minus the mean "
                          "unhinted reward (docs/plugins.md)")
    return difficulty


def estimate(c: Components, loop: LoopSection, proposals: list[Proposal],
             iteration: int) -> list[EnvRecord]:
    """Difficulty and designer reward for each proposal; memory updated; returns newly mastered."""
    mastered = []
    means = (_skill_means(c, proposals, iteration)
             if c.estimator.uses_skill_means else {})
    for p in proposals:
        env_id = p.env_id
        if p.status == EnvStatus.FRONTIER and (p.unhinted or p.failed):
            hinted = [e.reward for e in p.hinted]
            known = hinted if p.hint_rewards is None else list(p.hint_rewards)
            timeouts = sum(e.timed_out for e in p.unhinted + p.hinted + p.failed)
            unhinted = [e.reward for e in p.unhinted]
            earlier = c.memory.get(env_id)  # read before update_stats adds this iteration
            p.difficulty = checked_estimate(c.estimator, EstimateInput(
                env=EnvProgram(source=p.program, family=p.family.name, doc_id=p.document.id),
                hinted=known, unhinted=unhinted, iteration=iteration,
                history=[h for h in earlier.history if h.iteration < iteration] if earlier else (),
                success_threshold=loop.success_threshold,
                step_timeouts=timeouts, skill_means=means.get(_skill(p), ())),
                c.estimator_label)
            p.designer_reward = p.difficulty.designer_reward
            if earlier is None:
                _add_record(c, p)
            figures = dict(p.difficulty.figures)
            figures["step_timeouts"] = float(timeouts)
            record = c.memory.update_stats(env_id, iteration, hinted, unhinted, figures,
                                           p.designer_reward)
            p.take_status(record)
            if record.status == EnvStatus.MASTERED:
                mastered.append(record)
            continue
        if p.status == EnvStatus.DUPLICATE:
            p.designer_reward = loop.duplicate_reward
        else:
            p.reject()
            p.designer_reward = failure_reward(loop, p.verdict.category if p.verdict else "")
        _remember(c, p)
    return mastered


def skill_window_means(records: Iterable[EnvRecord], interval: int,
                       through: int) -> dict[str, list[float]]:
    """Per skill (a record's ``skill``, else its family), the mean unhinted reward of each
    period up to period ``through`` (a period: ``interval`` iterations, a regeneration window;
    1 in the frontier schedule), every play of the skill's environments in it pooled, oldest
    first; periods without a play are left out. The reference's per-skill learning-potential
    trackers are updated with exactly these means, one per window."""
    pooled: dict[str, dict[int, list[float]]] = {}
    for record in records:
        skill = record.skill or record.family
        for entry in record.history:
            period = entry.iteration // interval
            if period <= through and entry.unhinted:
                pooled.setdefault(skill, {}).setdefault(period, []).extend(entry.unhinted)
    return {skill: [fmean(by_period[p]) for p in sorted(by_period)]
            for skill, by_period in pooled.items()}


def _skill(p: Proposal) -> str:
    return p.target.skill or p.family.name


def _skill_means(c: Components, proposals: list[Proposal], iteration: int
                 ) -> dict[str, list[float]]:
    """Per skill, its pooled mean unhinted reward of each earlier iteration (from the memory)
    and then of this one (every play of this iteration's environments of the skill): an
    immediate estimate's ``EstimateInput.skill_means``."""
    means = skill_window_means(c.memory.records(), 1, iteration - 1)
    now: dict[str, list[float]] = {}
    for p in proposals:
        if p.status == EnvStatus.FRONTIER and p.unhinted:
            now.setdefault(_skill(p), []).extend(e.reward for e in p.unhinted)
    for skill, rewards in now.items():
        means[skill] = [*means.get(skill, []), sum(rewards) / len(rewards)]
    return means


def _remember(c: Components, p: Proposal) -> None:
    """Store ``p`` in the memory unless its program is already there."""
    if c.memory.get(p.env_id) is None:
        _add_record(c, p)


def _add_record(c: Components, p: Proposal) -> None:
    now = time.time()
    verdict = p.verdict
    c.memory.add(EnvRecord(
        id=p.env_id, source=p.program or p.completions[-1], family=p.family.name,
        status=p.status, doc_id=p.document.id,
        verdict_category=verdict.category if verdict else "",
        verdict_message=verdict.message if verdict else "", hint=p.hint,
        duplicate_of=p.duplicate_of, duplicate_similarity=p.similarity,
        created_at=now, updated_at=now, skill=p.target.skill or "", level=p.target.level,
        repairs=p.repairs,
    ))


def failure_reward(loop: LoopSection, category: str) -> float:
    """The designer's reward for a proposal that was not played, by verdict category."""
    return loop.timeout_reward if category == VerdictCategory.TIMEOUT else loop.invalid_reward
