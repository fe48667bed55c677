"""The ``reasoning-gym`` eval suite: reasoning-gym's "hard" split as the reasoning-gym paper defines
it (arXiv 2505.24760, appendix A.3: 100 datasets at their hard parameters), in four buckets (math,
algorithmic, cognition, logic), generated offline with fixed seeds and scored by each dataset's
own ``score_answer``, asked with the reasoning-gym family's agent instructions. Generation and
scoring run in the sandbox, as the family's environments (docs/sandbox.md, "Trusted code that
interprets text"). The parameters and buckets are data: ``data/rg_a3_hard.json``."""

from __future__ import annotations

import json
import sys
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spade_core.errors import ConfigError, SandboxError
from spade_core.interfaces import EvalItem, EvalSuite, Sandbox
from spade_core.sandboxed_scoring import ScoringJob, score_in_sandbox

from plugins.evals.items import final_answer, per_bucket, spread
from plugins.evals.options import ReasoningGymSuiteOptions
from plugins.families.reasoning_gym import (
    AGENT_INSTRUCTIONS,
    EXTRA_HINT,
    LIBRARY,
    DatasetChoice,
    ReasoningGymFamily,
    config_problems,
    program_source,
    registry,
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


#: The published hard parameters and buckets (source in the file's header, docs/eval.md).
A3_DATA = Path(__file__).parent / "data" / "rg_a3_hard.json"


@dataclass(frozen=True)
class HardDataset:
    """One dataset of a bucket, with its hard parameters (reasoning-gym config fields)."""

    name: str
    config: dict[str, Any] = field(default_factory=dict)


def load_hard(path: Path = A3_DATA) -> dict[str, tuple[HardDataset, ...]]:
    """bucket -> datasets at their published hard parameters, read from ``path``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {bucket: tuple(HardDataset(name, dict(config)) for name, config in datasets.items())
            for bucket, datasets in data["buckets"].items()}


#: bucket -> datasets with their hard parameters (``data/rg_a3_hard.json``, docs/eval.md).
HARD_BUCKETS: dict[str, tuple[HardDataset, ...]] = load_hard()


class ReasoningGymSuite(EvalSuite):
    """Items of the hard buckets. Each item is a ``ReasoningGymEnv`` program of the
    ``reasoning-gym`` family at a seed: the sandbox generates its question (reset) and oracle
    (solution), and scores a reply exactly as training does (step), so neither reasoning-gym's
    generators nor its scorers, several of which ``eval()`` the answer, run in this process."""

    name = "reasoning-gym"

    def __init__(self, buckets: list[str] | None, sandbox: Sandbox,
                 datasets: Sequence[str | dict[str, Any]] = (),
                 overrides: dict[str, dict[str, Any]] | None = None,
                 exclude: Sequence[str] = ()) -> None:
        chosen = list(HARD_BUCKETS) if buckets is None else list(buckets)
        unknown = [b for b in chosen if b not in HARD_BUCKETS]
        if unknown:
            raise ConfigError(f"reasoning-gym suite: unknown bucket(s) {', '.join(unknown)}; "
                              f"buckets are {', '.join(HARD_BUCKETS)}")
        if importlib.util.find_spec(LIBRARY) is None:
            raise ConfigError("the reasoning-gym eval suite needs the reasoning-gym library: "
                              f"{EXTRA_HINT}")
        hard = {d.name for specs in HARD_BUCKETS.values() for d in specs}
        named = [n for n in [*(overrides or {}), *exclude] if n not in hard]
        if named:
            raise ConfigError(f"reasoning-gym suite: overrides/exclude name {', '.join(named)}, "
                              "not one of the hard datasets (docs/eval.md lists them; further "
                              "datasets go in the option datasets)")
        overrides = overrides or {}
        self.buckets = {b: tuple(HardDataset(d.name, {**d.config, **overrides.get(d.name, {})})
                                 for d in HARD_BUCKETS[b] if d.name not in exclude)
                        for b in chosen}
        if datasets:
            self.buckets[EXTRA_BUCKET] = tuple(_extra(d) for d in datasets)
        #: dataset -> why it is left out (missing in the installed reasoning-gym, a config key
        #: it lacks, no seed that generates); reported in the JSON result and on stderr.
        self.skipped: dict[str, str] = {}
        self._check_installed()
        if not any(self.buckets.values()):
            raise ConfigError("reasoning-gym suite: no bucket and no dataset to evaluate; set "
                              "buckets or datasets")
        self.sandbox = sandbox
        self.family = ReasoningGymFamily([])

    def _check_installed(self) -> None:
        """Leave out (with the reason) the hard datasets the installed reasoning-gym lacks or
        whose published parameters its config rejects; the extra datasets the user named must
        all be valid."""
        installed = registry()
        for bucket, specs in self.buckets.items():
            kept = []
            for spec in specs:
                problems = (["not a dataset of the installed reasoning-gym"]
                            if spec.name not in installed
                            else config_problems(spec.name, spec.config, installed))
                if not problems:
                    kept.append(spec)
                elif bucket == EXTRA_BUCKET:
                    raise ConfigError(f"reasoning-gym suite: datasets: {problems[0]}")
                else:
                    self._skip(spec.name, problems[0])
            self.buckets[bucket] = tuple(kept)

    def _skip(self, name: str, reason: str) -> None:
        self.skipped[name] = reason
        print(f"reasoning-gym suite: dataset {name} left out: {reason}", file=sys.stderr)

    def extract(self, item: EvalItem, reply: str) -> str | None:
        """The answer the dataset's scorer reads from ``reply`` (text only, nothing evaluated)."""
        return final_answer(reply)

    def program(self, spec: HardDataset) -> str:
        """The environment program of one dataset at its hard settings."""
        return program_source(DatasetChoice(spec.name, dict(spec.config)))

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        buckets = {b: specs for b, specs in self.buckets.items() if specs}
        per = per_bucket(limit, len(buckets)) or DEFAULT_PER_BUCKET
        by_bucket: dict[str, list[EvalItem]] = {}
        for bucket, specs in buckets.items():
            columns = [self._generate(bucket, spec, seed, size)
                       for spec, size in zip(specs, _sizes(per, len(specs))) if size]
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
                self._skip(spec.name, f"its program does not open: {exc.verdict.message}")
                return []
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
            self._skip(spec.name, f"{len(problems)} seeds failed to generate: "
                                  f"{'; '.join(problems[:3])}")
            return []
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


def _sizes(per: int, datasets: int) -> list[int]:
    """Items per dataset for ``per`` items in a bucket of ``datasets``: as even as possible, the
    remainder spread evenly over the list (so a small limit samples the whole bucket)."""
    extra = {i * datasets // (per % datasets) for i in range(per % datasets)}
    return [per // datasets + (1 if i in extra else 0) for i in range(datasets)]


def _interleave(columns: list[list[EvalItem]]) -> list[EvalItem]:
    return spread({str(i): c for i, c in enumerate(columns)}, sum(len(c) for c in columns))


def build(options: ReasoningGymSuiteOptions, context: Any) -> ReasoningGymSuite:
    sandbox = context.components.get("sandbox")
    if sandbox is None:
        raise ConfigError("the reasoning-gym suite generates and scores its items in a sandbox; "
                          "none was built")
    return ReasoningGymSuite(options.buckets, sandbox, options.datasets, options.overrides,
                             options.exclude)
