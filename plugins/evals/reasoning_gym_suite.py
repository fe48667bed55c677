"""The ``reasoning-gym`` eval suite: the reference's four hard buckets (math, algorithmic,
cognition, logic), generated offline with fixed seeds and scored by each dataset's own
``score_answer``, asked with the reasoning-gym family's agent instructions. The datasets and
settings of each bucket are in ``HARD_BUCKETS`` and ``docs/eval.md``."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import EvalItem, EvalSuite

from plugins.evals.items import answer_reply, final_answer, per_bucket, spread
from plugins.evals.options import ReasoningGymSuiteOptions
from plugins.families.reasoning_gym import AGENT_INSTRUCTIONS

#: Held-out items use seeds far from the ones a run's reasoning-gym family draws (0, 1, ...).
SEED_OFFSET = 7_000_000
#: Items per bucket when no limit is given.
DEFAULT_PER_BUCKET = 50


@dataclass(frozen=True)
class HardDataset:
    """One dataset of a bucket, with settings harder than reasoning-gym's defaults."""

    name: str
    config: dict[str, Any] = field(default_factory=dict)


#: bucket -> datasets with their hard settings (documented in docs/eval.md).
HARD_BUCKETS: dict[str, tuple[HardDataset, ...]] = {
    "math": (
        HardDataset("basic_arithmetic", {"min_terms": 5, "max_terms": 8, "min_digits": 2,
                                         "max_digits": 4}),
        HardDataset("chain_sum", {"min_terms": 6, "max_terms": 10, "min_digits": 3,
                                  "max_digits": 5}),
        HardDataset("gcd", {"min_numbers": 3, "max_numbers": 4, "min_value": 1000,
                            "max_value": 100000}),
        HardDataset("prime_factorization", {"min_value": 1000, "max_value": 100000}),
    ),
    "algorithmic": (
        HardDataset("number_sorting", {"min_numbers": 10, "max_numbers": 20, "min_decimals": 1,
                                       "max_decimals": 3}),
        HardDataset("word_sorting", {"min_words": 10, "max_words": 20}),
        HardDataset("caesar_cipher", {"min_words": 10, "max_words": 20}),
        HardDataset("base_conversion", {"min_value": 1000, "max_value": 100000}),
    ),
    "cognition": (
        HardDataset("number_sequence", {"min_terms": 6, "max_terms": 10, "max_complexity": 3}),
        HardDataset("color_cube_rotation", {"min_rotations": 3, "max_rotations": 6}),
        HardDataset("rectangle_count", {"max_rectangles": 15}),
    ),
    "logic": (
        HardDataset("knights_knaves", {"n_people": 4, "depth_constraint": 3,
                                       "width_constraint": 3}),
        HardDataset("circuit_logic", {"min_terms": 5, "max_terms": 8, "min_inputs": 4,
                                      "max_inputs": 6}),
        HardDataset("zebra_puzzles", {"num_people": 5, "num_characteristics": 5}),
        HardDataset("syllogism", {}),
    ),
}

class ReasoningGymSuite(EvalSuite):
    """Items of the hard buckets; a reply is scored by its dataset's ``score_answer``."""

    name = "reasoning-gym"

    def __init__(self, buckets: list[str] | None = None) -> None:
        chosen = list(buckets or HARD_BUCKETS)
        unknown = [b for b in chosen if b not in HARD_BUCKETS]
        if unknown:
            raise ConfigError(f"reasoning-gym suite: unknown bucket(s) {', '.join(unknown)}; "
                              f"buckets are {', '.join(HARD_BUCKETS)}")
        self.buckets = {b: HARD_BUCKETS[b] for b in chosen}
        self._library = _library()
        self._datasets: dict[tuple[str, int, int], Any] = {}

    def _dataset(self, spec: HardDataset, seed: int, size: int) -> Any:
        key = (spec.name, seed, size)
        if key not in self._datasets:
            self._datasets[key] = self._library.create_dataset(spec.name, seed=seed, size=size,
                                                               **spec.config)
        return self._datasets[key]

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        per = per_bucket(limit, len(self.buckets)) or DEFAULT_PER_BUCKET
        by_bucket: dict[str, list[EvalItem]] = {}
        for bucket, specs in self.buckets.items():
            sizes = [per // len(specs) + (1 if i < per % len(specs) else 0)
                     for i in range(len(specs))]
            columns = []
            for spec, size in zip(specs, sizes):
                if size == 0:
                    continue
                dataset = self._dataset(spec, SEED_OFFSET + seed, size)
                columns.append([self._item(bucket, spec, dataset, i) for i in range(size)])
            # Interleave the datasets so a small limit still mixes them.
            by_bucket[bucket] = _interleave(columns)
        return spread(by_bucket, limit)

    def _item(self, bucket: str, spec: HardDataset, dataset: Any, index: int) -> EvalItem:
        entry = dataset[index]
        question = str(entry["question"])
        return EvalItem(
            id=f"{spec.name}/{index}", bucket=bucket,
            prompt=({"role": "system", "content": AGENT_INSTRUCTIONS},
                    {"role": "user", "content": question}),
            gold=(answer_reply(str(entry["answer"])),), text=question,
            data={"dataset": dataset, "entry": entry})

    def score(self, item: EvalItem, reply: str) -> float:
        dataset, entry = item.data["dataset"], item.data["entry"]
        try:
            value = dataset.score_answer(final_answer(reply), entry)
        except Exception:  # noqa: BLE001 - a scorer choking on junk text scores it 0
            return 0.0
        return max(0.0, min(1.0, float(value or 0.0)))


def _interleave(columns: list[list[EvalItem]]) -> list[EvalItem]:
    return spread({str(i): c for i, c in enumerate(columns)}, sum(len(c) for c in columns))


def _library() -> Any:
    try:
        return importlib.import_module("reasoning_gym")
    except ImportError:
        raise ConfigError("the reasoning-gym eval suite needs the reasoning-gym library: "
                          "pip install 'spade-rl[reasoning-gym]'") from None


def build(options: ReasoningGymSuiteOptions, context: Any) -> ReasoningGymSuite:
    return ReasoningGymSuite(options.buckets)
