"""Held-out evaluation inside the loop (``eval.every``): the configured suites, played with the
live generation backend after every ``every``-th iteration's training, scored into that
iteration's ``metrics.jsonl`` row.

The suites are built once per run through the registry (kind ``eval_suite``) and their items
drawn once, for ``run.seed`` and ``eval.limit``, so every evaluation of a run (a resumed one
included) plays the same items with the same sampling seeds and the scores are comparable across
iterations.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from spade_core.components import BuildContext, Registry
from spade_core.eval.evaluate import configured_options
from spade_core.eval.scores import SuiteResult, play_items
from spade_core.interfaces import EvalItem, EvalSettings, EvalSuite, GenerationBackend
from spade_core.phases import PhaseTimer

#: The phase name of the in-run evaluation (progress bar and ``seconds`` entry).
PHASE = "eval"


class LoopEvaluator:
    """The run's eval suites and their fixed items; :meth:`evaluate` scores the policy."""

    def __init__(self, every: int, settings: EvalSettings,
                 suites: list[tuple[str, EvalSuite, list[EvalItem]]]) -> None:
        self.every = every
        self.settings = settings
        self.suites = suites

    def due(self, iteration: int) -> bool:
        """Whether iteration ``iteration`` (0-based) ends with an evaluation."""
        return self.every > 0 and (iteration + 1) % self.every == 0

    def evaluate(self, iteration: int, backend: GenerationBackend,
                 timer: PhaseTimer | None = None) -> dict[str, Any] | None:
        """``{suite: {"pass@1", "items", "buckets": {bucket: pass@1}, "items_digest"}}`` (and
        ``pass@K`` for ``K`` samples above 1) when ``iteration`` is due, else ``None``."""
        if not self.due(iteration):
            return None
        timer = timer or PhaseTimer()
        figures: dict[str, Any] = {}
        with timer.phase(PHASE, total=sum(len(items) for _, _, items in self.suites)):
            for name, suite, items in self.suites:
                figures[name] = row_figures(play_items(suite, name, items, backend,
                                                       self.settings))
                figures[name]["items_digest"] = items_digest([item.id for item in items])
                timer.advance(PHASE, len(items))
        return figures

    def close(self) -> None:
        for _, suite, _ in reversed(self.suites):
            suite.close()


def items_digest(ids: list[str]) -> str:
    """A short fingerprint of the items played (their ids, in any order): equal digests mean the
    same held-out items (``spade experiment`` checks its arms with it)."""
    import hashlib

    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:16]


def row_figures(result: SuiteResult) -> dict[str, Any]:
    """The compact figures of a suite result that go into a metrics row: pass@1 overall and per
    bucket, the items per bucket and the half-width of each one's 95 % interval over the items
    (``ci95``, as ``spade eval --table`` computes it), so ``spade report`` can show the paper's
    table."""
    from spade_core.eval.paper_table import cell

    row: dict[str, Any] = {"pass@1": result.overall.pass_at_1, "items": result.overall.items}
    if result.k > 1:
        row[f"pass@{result.k}"] = result.overall.pass_at_k
    row["buckets"] = {bucket: score.pass_at_1 for bucket, score in result.buckets.items()}
    row["bucket_items"] = {bucket: score.items for bucket, score in result.buckets.items()}
    row["ci95"] = {}
    for bucket in ["overall", *result.buckets]:
        figure = cell([result], result.suite, bucket)
        row["ci95"][bucket] = round(figure.half, 4) if figure and figure.half is not None else None
        if bucket == "overall" and figure is not None and round(figure.mean, 4) != row["pass@1"]:
            # The table's overall where it is not the mean over items (BFCL's, ACEBench's).
            row["table_overall"] = round(figure.mean, 4)
    return row


def eval_settings(config: Any) -> EvalSettings:
    """How the loop plays the items: ``eval.samples`` replies (temperature 0 for one, else 0.8,
    as ``spade eval``), ``eval.max_new_tokens`` or ``loop.agent_max_tokens``, seed
    ``run.seed``."""
    section, loop = config.eval, config.loop
    return EvalSettings(samples=section.samples,
                        temperature=0.0 if section.samples == 1 else 0.8,
                        max_new_tokens=section.max_new_tokens or loop.agent_max_tokens,
                        seed=config.run.seed, max_turns=loop.max_turns,
                        success_threshold=loop.success_threshold)


def open_evaluator(resolved: Any, registry: Registry,
                   context: BuildContext) -> LoopEvaluator | None:
    """The run's evaluator, or ``None`` when ``eval.every`` is 0. ``context`` carries the live
    backend, sandbox and families (suites that play programs need them); the caller closes the
    evaluator."""
    config = resolved.config
    section = config.eval
    if not section.every or not section.suites:
        return None
    settings = eval_settings(config)
    suites: list[tuple[str, EvalSuite, list[EvalItem]]] = []
    evaluator = LoopEvaluator(section.every, settings, suites)
    try:
        for name in section.suites:
            suite = registry.build("eval_suite", name,
                                   configured_options(registry, section, name),
                                   f"eval.suites: {name}", replace(context, registry=registry))
            suites.append((name, suite, []))  # closed by the evaluator should items() fail
            suites[-1][2].extend(suite.items(section.limit, settings.seed))
    except BaseException:
        evaluator.close()
        raise
    return evaluator
