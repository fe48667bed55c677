"""Play held-out eval suites and score them: pass@k per bucket and overall (the unbiased
estimator of Chen et al. 2021).

Generic over :class:`~spade_core.interfaces.EvalSuite`, so both ``spade eval`` and the self-play
loop's in-run evaluation (``eval.every``) call it without naming any suite implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from math import comb
from typing import Any

from spade_core.interfaces import EvalItem, EvalSettings, EvalSuite, GenerationBackend


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` samples drawn from ``n`` (``c`` correct) is
    correct: ``1 - C(n - c, k) / C(n, k)``."""
    if n <= 0 or k <= 0:
        return 0.0
    k = min(k, n)
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


@dataclass
class BucketScore:
    """One bucket's (or a suite's overall) figures."""

    items: int
    samples: int
    pass_at_1: float
    pass_at_k: float
    mean_score: float


@dataclass
class SuiteResult:
    """A suite's figures per bucket and overall (mean over items, every bucket weighted by its
    number of items)."""

    suite: str
    k: int
    overall: BucketScore
    buckets: dict[str, BucketScore] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)
    #: Parts of the suite left out, with the reason (e.g. a dataset the installed library lacks).
    skipped: dict[str, str] = field(default_factory=dict)
    #: Secondary figures and remarks of the suite's own (e.g. ACEBench's agent process accuracy).
    notes: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarise(suite: str, items: Sequence[EvalItem], scores: Sequence[Sequence[float]], k: int,
              threshold: float) -> SuiteResult:
    """Per-item successes (score at ``threshold``) into pass@1, pass@k and the mean score."""
    rows = []
    for item, item_scores in zip(items, scores, strict=True):
        n = len(item_scores)
        c = sum(1 for s in item_scores if s >= threshold)
        rows.append({"id": item.id, "bucket": item.bucket, "n": n, "correct": c,
                     "scores": [round(s, 4) for s in item_scores]})

    def figures(selected: list[dict[str, Any]]) -> BucketScore:
        if not selected:
            return BucketScore(0, 0, 0.0, 0.0, 0.0)
        return BucketScore(
            items=len(selected), samples=sum(r["n"] for r in selected),
            pass_at_1=_mean([pass_at_k(r["n"], r["correct"], 1) for r in selected]),
            pass_at_k=_mean([pass_at_k(r["n"], r["correct"], k) for r in selected]),
            mean_score=_mean([_mean(r["scores"]) for r in selected]))

    buckets = {b: figures([r for r in rows if r["bucket"] == b])
               for b in dict.fromkeys(r["bucket"] for r in rows)}
    return SuiteResult(suite=suite, k=k, overall=figures(rows), buckets=buckets, items=rows)


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


class ReplyRecorder:
    """A generation backend that passes every call to ``backend`` and keeps each conversation
    with its reply (``--save-replies``); everything else is the wrapped backend's."""

    def __init__(self, backend: GenerationBackend) -> None:
        self.backend = backend
        self.calls: list[tuple[list[dict[str, Any]], str]] = []

    def generate(self, conversations: Any, **kwargs: Any) -> Any:
        generations = self.backend.generate(conversations, **kwargs)
        self.calls.extend((list(c), g.text) for c, g in zip(conversations, generations))
        return generations

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)


def keep_replies(suite: EvalSuite, items: Sequence[EvalItem], result: SuiteResult,
                 calls: Sequence[tuple[list[dict[str, Any]], str]]) -> None:
    """Add to each item row its prompt and, per sample, the reply, the answer the suite extracts
    (:meth:`EvalSuite.extract`, when it has one) and the score. Replies are matched to single-turn items by their
    prompt; items an interactive suite plays get none."""
    by_prompt: dict[str, list[str]] = {}
    for conversation, reply in calls:
        by_prompt.setdefault(repr(conversation), []).append(reply)
    for item, row in zip(items, result.items, strict=True):
        row["prompt"] = list(item.prompt)
        replies = by_prompt.get(repr(list(item.prompt)), []) if item.prompt else []
        kept = []
        for reply, score in zip(replies, row["scores"]):
            entry: dict[str, Any] = {"reply": reply}
            answer = suite.extract(item, reply)
            if answer is not None:
                entry["answer"] = answer
            kept.append(entry | {"score": score})
        row["replies"] = kept


def play_items(suite: EvalSuite, name: str, items: Sequence[EvalItem],
               backend: GenerationBackend, settings: EvalSettings,
               save_replies: bool = False) -> SuiteResult:
    """``items`` of ``suite`` played with ``backend`` and summarised (with each item's prompt and
    replies when ``save_replies``)."""
    recorder = ReplyRecorder(backend) if save_replies else None
    scores = suite.play(items, recorder or backend, settings)  # type: ignore[arg-type]
    result = summarise(name, items, scores, settings.samples, settings.success_threshold)
    result.skipped = dict(getattr(suite, "skipped", {}) or {})
    result.notes = dict(getattr(suite, "notes", {}) or {})
    if recorder is not None:
        keep_replies(suite, items, result, recorder.calls)
    return result


def results_from_json(payload: dict[str, Any]) -> list[SuiteResult]:
    """Suite results from a JSON file written by ``spade eval --out``."""
    from spade_core.errors import UsageError

    try:
        return [SuiteResult(suite=s["suite"], k=s["k"], overall=BucketScore(**s["overall"]),
                            buckets={b: BucketScore(**v) for b, v in s["buckets"].items()},
                            items=s.get("items", []), skipped=s.get("skipped", {}),
                            notes=s.get("notes", {}))
                for s in payload["suites"]]
    except (KeyError, TypeError) as exc:
        raise UsageError(f"eval --baseline: not a file written by spade eval --out ({exc})"
                         ) from None


def run_suite(suite: EvalSuite, name: str, backend: GenerationBackend, settings: EvalSettings,
              limit: int | None, save_replies: bool = False) -> SuiteResult:
    """Items of ``suite`` for the seed, played and summarised."""
    return play_items(suite, name, suite.items(limit, settings.seed), backend, settings,
                      save_replies)
