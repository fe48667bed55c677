"""Step: design (and validate). The designer writes ``loop.envs_per_iteration`` programs from
sampled documents; each chunk of programs is validated on a background thread while the next
chunk generates, and invalid ones are retried (repair turns first)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from spade_core.config.schema import LoopSection
from spade_core.interfaces import GenerationBackend, NoProgram
from spade_core.phases import PhaseTimer
from spade_core.records import Verdict, VerdictCategory
from spade_core.selfplay.built_components import Components
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.validator import llm_validate
from spade_core.validation import validate


def _no_program(completion: str, reason: str = "") -> Verdict:
    message = "no environment program found in the designer's answer"
    return Verdict(valid=False, category=VerdictCategory.SYNTAX,
                   message=f"{message}: {reason}" if reason else message,
                   details={"completion_chars": len(completion)})


def _extract(c: Components, proposal: Proposal, completion: str) -> None:
    """The program in ``completion``, or the verdict that says why there is none."""
    try:
        proposal.program = c.designer.extract(completion, proposal.family, proposal.target)
        reason = ""
    except NoProgram as refusal:
        proposal.program, reason = None, str(refusal)
    proposal.verdict = None if proposal.program else _no_program(completion, reason)


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
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="spade-validate") as checks:
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
                    _extract(c, proposal, generation.text)
                timer.expect("validate", len(part))
                running.append(checks.submit(_validate_chunk, c, part, timer, iteration))
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
