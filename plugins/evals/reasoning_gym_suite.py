"""The ``reasoning-gym`` eval suite: four hard buckets (math, algorithmic, cognition, logic),
generated offline with fixed seeds and scored by each dataset's own ``score_answer``, asked with
the reasoning-gym family's agent instructions. Generation and scoring run in the sandbox, as the
family's environments (docs/sandbox.md, "Trusted code that interprets text"). The datasets and
settings of each bucket are in ``HARD_BUCKETS`` and ``docs/eval.md``."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spade_core.errors import ConfigError, SandboxError
from spade_core.interfaces import EvalItem, EvalSuite, Sandbox
from spade_core.sandboxed_scoring import ScoringJob, score_in_sandbox

from plugins.evals.items import per_bucket, spread
from plugins.evals.options import ReasoningGymSuiteOptions
from plugins.families.reasoning_gym import (
    AGENT_INSTRUCTIONS,
    EXTRA_HINT,
    LIBRARY,
    DatasetChoice,
    ReasoningGymFamily,
    program_source,
)

#: Held-out items use seeds far from the ones a run's reasoning-gym family draws (0, 1, ...).
SEED_OFFSET = 7_000_000
#: Seeds whose generation failed that a dataset may skip before the suite gives up.
MAX_SKIPPED_SEEDS = 8
#: Datasets whose ``score_answer`` may run in the host process. Empty: every dataset is generated
#: and scored in the sandbox (docs/sandbox.md, "Trusted code that interprets text").
SAFE_IN_PROCESS: frozenset[str] = frozenset()
#: The bucket of the datasets named in the ``datasets`` option.
EXTRA_BUCKET = "extra"
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
    """Items of the hard buckets. Each item is a ``ReasoningGymEnv`` program of the
    ``reasoning-gym`` family at a seed: the sandbox generates its question (reset) and oracle
    (solution), and scores a reply exactly as training does (step), so neither reasoning-gym's
    generators nor its scorers, several of which ``eval()`` the answer, run in this process."""

    name = "reasoning-gym"

    def __init__(self, buckets: list[str] | None, sandbox: Sandbox,
                 datasets: Sequence[str | dict[str, Any]] = ()) -> None:
        chosen = list(HARD_BUCKETS) if buckets is None else list(buckets)
        unknown = [b for b in chosen if b not in HARD_BUCKETS]
        if unknown:
            raise ConfigError(f"reasoning-gym suite: unknown bucket(s) {', '.join(unknown)}; "
                              f"buckets are {', '.join(HARD_BUCKETS)}")
        if importlib.util.find_spec(LIBRARY) is None:
            raise ConfigError("the reasoning-gym eval suite needs the reasoning-gym library: "
                              f"{EXTRA_HINT}")
        self.buckets = {b: HARD_BUCKETS[b] for b in chosen}
        if datasets:
            self.buckets[EXTRA_BUCKET] = tuple(_extra(d) for d in datasets)
        if not self.buckets:
            raise ConfigError("reasoning-gym suite: no bucket and no dataset to evaluate; set "
                              "buckets or datasets")
        self.sandbox = sandbox
        self.family = ReasoningGymFamily([])

    def program(self, spec: HardDataset) -> str:
        """The environment program of one dataset at its hard settings."""
        return program_source(DatasetChoice(spec.name, dict(spec.config)))

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        per = per_bucket(limit, len(self.buckets)) or DEFAULT_PER_BUCKET
        by_bucket: dict[str, list[EvalItem]] = {}
        for bucket, specs in self.buckets.items():
            sizes = [per // len(specs) + (1 if i < per % len(specs) else 0)
                     for i in range(len(specs))]
            columns = [self._generate(bucket, spec, seed, size)
                       for spec, size in zip(specs, sizes) if size]
            # Interleave the datasets so a small limit still mixes them.
            by_bucket[bucket] = _interleave(columns)
        return spread(by_bucket, limit)

    def _generate(self, bucket: str, spec: HardDataset, seed: int, size: int) -> list[EvalItem]:
        """``size`` items of one dataset, generated in the sandbox (question and oracle) at seeds
        ``SEED_OFFSET + seed``, ``+ 1``, ...; a seed whose generation fails (some reasoning-gym
        generators loop forever on some seeds: the sandbox's time limit ends them) is skipped
        for the next one."""
        program = self.program(spec)
        found: list[tuple[int, str, tuple[str, ...]]] = []
        next_seed, problems = SEED_OFFSET + seed, []
        while len(found) < size and len(problems) <= max(size, MAX_SKIPPED_SEEDS):
            seeds = list(range(next_seed, next_seed + size - len(found)))
            next_seed = seeds[-1] + 1
            try:
                sessions = self.sandbox.open_many(program, len(seeds), family=self.family)
            except SandboxError as exc:
                raise ConfigError(f"reasoning-gym suite: dataset {spec.name} {spec.config}: "
                                  f"{exc.verdict.message}") from None
            try:
                firsts = self.sandbox.reset_many(list(zip(sessions, seeds)))
                for item_seed, session, first in zip(seeds, sessions, firsts, strict=True):
                    if isinstance(first, SandboxError):
                        problems.append(f"seed {item_seed}: {first.verdict.message}")
                        continue
                    try:
                        oracle = session.solution()
                    except SandboxError:
                        oracle = None
                    found.append((item_seed, first[0],
                                  (oracle,) if isinstance(oracle, str) else ()))
            finally:
                for session in sessions:
                    session.close()
        if len(found) < size:
            raise ConfigError(f"reasoning-gym suite: dataset {spec.name} {spec.config} failed to "
                              f"generate {len(problems)} seeds: {'; '.join(problems[:3])}")
        found.sort()
        return [EvalItem(
            id=f"{spec.name}/{index}", bucket=bucket,
            prompt=({"role": "system", "content": AGENT_INSTRUCTIONS},
                    {"role": "user", "content": question}),
            gold=gold, text=question,
            data={"program": program, "seed": item_seed, "dataset": spec.name})
            for index, (item_seed, question, gold) in enumerate(found)]

    def score_many(self, pairs: Sequence[tuple[EvalItem, str]]) -> list[float]:
        """Each reply stepped into its item's environment in the sandbox; the reward is the
        dataset's own ``score_answer`` (guarded: docs/sandbox.md)."""
        return score_in_sandbox(self.sandbox, [
            ScoringJob(item.data["program"], self.family, reply, item.data["seed"])
            for item, reply in pairs])

    def score(self, item: EvalItem, reply: str) -> float:
        return self.score_many([(item, reply)])[0]


def _extra(spec: str | dict[str, Any]) -> HardDataset:
    if isinstance(spec, str):
        return HardDataset(spec)
    if not isinstance(spec.get("name"), str):
        raise ConfigError(f"reasoning-gym suite: datasets: {spec!r} needs a name")
    return HardDataset(spec["name"], dict(spec.get("config") or {}))


def _interleave(columns: list[list[EvalItem]]) -> list[EvalItem]:
    return spread({str(i): c for i, c in enumerate(columns)}, sum(len(c) for c in columns))


def build(options: ReasoningGymSuiteOptions, context: Any) -> ReasoningGymSuite:
    sandbox = context.components.get("sandbox")
    if sandbox is None:
        raise ConfigError("the reasoning-gym suite generates and scores its items in a sandbox; "
                          "none was built")
    return ReasoningGymSuite(options.buckets, sandbox, options.datasets)
