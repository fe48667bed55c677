"""Step: dedupe. Valid proposals the memory already holds as mastered (or near enough to one,
by the memory's dedupe index) are refused before any rollout is spent on them, and with a
contamination guard copies of held-out eval items too."""

from __future__ import annotations

from spade_core.phases import PhaseTimer
from spade_core.records import EnvProgram, EnvStatus
from spade_core.selfplay.contamination import ContaminationGuard, refuse_contaminated
from spade_core.selfplay.built_components import Components
from spade_core.selfplay.proposal import Proposal


def dedupe(c: Components, proposals: list[Proposal], guard: ContaminationGuard | None = None,
           timer: PhaseTimer | None = None) -> None:
    """Refuse near-duplicates of mastered environments before any rollout is spent on them, and
    with a contamination ``guard`` copies of held-out eval items (verdict ``contaminated``);
    accept the rest onto the frontier. Timed as the ``dedupe`` phase."""
    timer = timer or PhaseTimer()
    with timer.phase("dedupe", total=sum(1 for p in proposals if p.verdict and p.verdict.valid)):
        _dedupe(c, proposals, guard)
        timer.advance("dedupe", sum(1 for p in proposals if p.status in (
            EnvStatus.FRONTIER, EnvStatus.DUPLICATE)))


def _dedupe(c: Components, proposals: list[Proposal],
            guard: ContaminationGuard | None) -> None:
    candidates = []
    for p in proposals:
        if not (p.verdict and p.verdict.valid):
            continue
        program = EnvProgram(source=p.program, family=p.family.name, doc_id=p.document.id)
        existing = c.memory.get(program.id)
        # Mastered and retired are final; too hard is not (docs/memory.md): a re-proposal of a
        # too-hard program is played again, so a cell that failed by chance can come back.
        if existing is not None and existing.status in (EnvStatus.MASTERED, EnvStatus.RETIRED):
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
