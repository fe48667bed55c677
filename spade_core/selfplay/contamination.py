"""The contamination guard: refuse designed environments that copy an item of a held-out suite.

A run that trains on environments whose task is a benchmark question measures nothing on that
benchmark. When ``eval.contamination.threshold`` is set, the items of ``eval.suites`` (at most
``eval.contamination.limit`` per suite, for the run's seed) are stored in a private instance of the
run's environment memory (``RUN_DIR/contamination/``), and each valid proposal is looked up there
with :meth:`EnvMemory.search_many` before it is played: the memory embeds the program the way it
embeds environments for dedupe (its task text) and the item by its text. A proposal whose nearest
item is at least ``threshold`` similar gets the verdict ``contaminated`` and status ``rejected``;
``metrics.jsonl`` counts it under ``verdicts.contaminated``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spade_core.components import BuildContext, Registry
from spade_core.interfaces import EnvMemory
from spade_core.records import EnvProgram, EnvRecord, EnvStatus, Verdict, VerdictCategory

#: The family name the eval items are stored under in the guard's memory.
EVAL_FAMILY = "eval-item"


@dataclass
class Contaminated:
    """The eval item a program is too close to."""

    item_id: str
    similarity: float


class ContaminationGuard:
    """Eval items stored in an environment memory of their own, searched for each program."""

    def __init__(self, index: EnvMemory, threshold: float) -> None:
        self.index = index
        self.threshold = threshold

    def add_items(self, items: Sequence[tuple[str, str]]) -> int:
        """Store ``(item id, text)`` pairs (a known id is kept as it is); returns how many."""
        count = 0
        for item_id, text in items:
            if text.strip():
                self.index.add(EnvRecord(id=f"eval:{item_id}", source=text, family=EVAL_FAMILY,
                                         status=EnvStatus.REJECTED, description=""))
                count += 1
        return count

    def check(self, programs: Sequence[EnvProgram]) -> list[Contaminated | None]:
        """For each program, the eval item at or above the threshold nearest to it, else
        ``None``."""
        if not programs:
            return []
        found: list[Contaminated | None] = []
        for hits in self.index.search_many(list(programs), 1, family=EVAL_FAMILY):
            if hits and hits[0][1] >= self.threshold:
                record, similarity = hits[0]
                found.append(Contaminated(record.id.removeprefix("eval:"), float(similarity)))
            else:
                found.append(None)
        return found

    def close(self) -> None:
        self.index.close()


def verdict(match: Contaminated) -> Verdict:
    """The verdict of a program refused by the guard."""
    return Verdict(valid=False, category=VerdictCategory.CONTAMINATED,
                   message=f"the task is {match.similarity:.3f} similar to held-out eval item "
                           f"{match.item_id} (eval.contamination.threshold); write an original "
                           "task instead",
                   details={"eval_item": match.item_id, "similarity": match.similarity})


def refuse_contaminated(guard: ContaminationGuard | None, candidates: Sequence[Any]) -> list[Any]:
    """Mark the ``(proposal, program)`` candidates the guard refuses as rejected with a
    ``contaminated`` verdict; returns the candidates left."""
    if guard is None or not candidates:
        return list(candidates)
    kept = []
    for (proposal, program), match in zip(candidates, guard.check([p for _, p in candidates]),
                                          strict=True):
        if match is None:
            kept.append((proposal, program))
            continue
        proposal.reject(verdict(match))
    return kept


def eval_item_texts(registry: Registry, suites: Sequence[str], options: dict[str, dict[str, Any]],
                    limit: int | None, seed: int, context: BuildContext) -> list[tuple[str, str]]:
    """``(suite/item id, text)`` of the first ``limit`` items of each suite for ``seed``."""
    texts = []
    for name in suites:
        suite = registry.build("eval_suite", name, options.get(name, {}), f"eval.suites: {name}",
                               context)
        try:
            texts.extend((f"{name}/{item.id}", item.text) for item in suite.items(limit, seed))
        finally:
            suite.close()
    return texts


def open_guard(resolved: Any, registry: Registry, run_dir: Path,
               context: BuildContext) -> ContaminationGuard | None:
    """The run's guard, or ``None`` when ``eval.contamination.threshold`` is unset or no suite is
    configured. Its memory is a second instance of the run's memory component, in
    ``RUN_DIR/contamination/``; the caller closes the guard."""
    section = resolved.config.eval
    if section.contamination.threshold is None or not section.suites:
        return None
    from spade_core.eval.evaluate import configured_options

    options = {name: configured_options(registry, section, name) for name in section.suites}
    texts = eval_item_texts(registry, section.suites, options,
                            section.contamination.limit, resolved.config.run.seed, context)
    rc = resolved.components["memory"]
    index = rc.component.build(rc.options, BuildContext(
        run_dir=run_dir / "contamination", seed=context.seed, model=context.model,
        success_threshold=context.success_threshold))
    guard = ContaminationGuard(index, section.contamination.threshold)
    try:
        guard.add_items(texts)
    except BaseException:
        guard.close()
        raise
    return guard
