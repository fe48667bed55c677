"""The ``reasoning-gym`` eval suite: reasoning-gym's "hard" split as the reasoning-gym paper defines
it (arXiv 2505.24760, appendix A.3: 100 datasets at their hard parameters), in four buckets (math,
algorithmic, cognition, logic), generated offline with fixed seeds and scored by each dataset's
own ``score_answer``. Generation and scoring run in the sandbox, as the family's environments
(docs/sandbox.md, "Trusted code that interprets text"). The parameters and buckets are data:
``data/rg_a3_hard.json``.

Each dataset's items live in one environment instance (``ReasoningGymItems``, the suite's trusted
prelude ``preludes/rg_items.py``): it generates them and scores every reply to them, so an item is
generated once however many replies it gets.

Two protocols. ``default``: items at seeds of their own, asked with the reasoning-gym family's
agent instructions, partial scores kept. ``reference``: the SPADE reference's hard-split
evaluation: 8 episodes per dataset drawn as it draws them, its ``<answer>`` prompt, its reading of
the answer, and a win only for a full score (a bucket's figure is wins / episodes)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from spade_core.errors import ConfigError, SandboxError
from spade_core.interfaces import EvalItem, EvalSuite, Sandbox
from spade_core.interfaces.sandbox import SandboxSession
from spade_core.eval.sandboxed_scoring import ScoringJob, score_in_sandbox

from plugins.evals.items import answer_reply, final_answer, per_bucket, spread
from plugins.evals.options import ReasoningGymSuiteOptions
from plugins.families.reasoning_gym import (
    AGENT_INSTRUCTIONS,
    BASE_CLASS,
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
#: Items per bucket when no limit is given (default protocol).
DEFAULT_PER_BUCKET = 50
#: Datasets generating at once (one reset each per batched call): the CPUs of this machine.
GENERATING_AT_ONCE = max(os.cpu_count() or 1, 1)
#: The class of the eval prelude whose instances hold a dataset's items.
ITEMS_CLASS = "ReasoningGymItems"
ITEMS_PRELUDE = "rg_items.py"
#: Reference protocol: its environments build each dataset once with seed 42 and size 500 and
#: draw episode k by ``random.seed(k); random.choice(dataset)``; it plays 8 episodes per dataset.
REFERENCE_DATASET_SEED = 42
REFERENCE_DATASET_SIZE = 500
REFERENCE_EPISODES = 8
#: What the reference's environment appends to each question (then wrapped in the prompt).
REFERENCE_SUFFIX = "Put your final answer within \\boxed{}."
_TAG_ANY_CASE = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.DOTALL | re.IGNORECASE)


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


class ItemsFamily(ReasoningGymFamily):
    """The reasoning-gym family with the suite's prelude after its own: programs subclass
    ``ReasoningGymItems`` (instances that hold a dataset's items and score replies to them)."""

    @property
    def prelude(self) -> str:
        own = resources.files("plugins.evals.preludes").joinpath(ITEMS_PRELUDE)
        return super().prelude + "\n\n" + own.read_text(encoding="utf-8")


class ReasoningGymSuite(EvalSuite):
    """Items of the hard buckets. Each dataset's items are generated (question and oracle) by
    one sandboxed instance of a ``ReasoningGymItems`` program of the dataset, which keeps them
    and scores the replies with the dataset's ``score_answer`` (the family's reading of the
    answer, or the reference's), so neither reasoning-gym's generators nor its scorers, several
    of which ``eval()`` the answer, run in this process. :meth:`close` ends the instances."""

    name = "reasoning-gym"

    def __init__(self, buckets: list[str] | None, sandbox: Sandbox,
                 datasets: Sequence[str | dict[str, Any]] = (),
                 overrides: dict[str, dict[str, Any]] | None = None,
                 exclude: Sequence[str] = (), protocol: str = "default",
                 episodes: int = REFERENCE_EPISODES) -> None:
        if protocol not in ("default", "reference"):
            raise ConfigError(f"reasoning-gym suite: protocol {protocol!r}; choose default or "
                              "reference")
        self.protocol = protocol
        self.episodes = episodes
        #: Reported with the result (the paper's table says when another protocol was played).
        self.notes: dict[str, Any] = {"protocol": protocol}
        if protocol == "reference":
            self.notes["episodes_per_dataset"] = episodes
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
        self.family = ItemsFamily([])
        #: The instances holding items, and which one holds the item (program, seed).
        self._desks: list[SandboxSession] = []
        self._holder: dict[tuple[str, int], SandboxSession] = {}

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
        if self.protocol == "reference":
            return reference_answer(reply)
        return final_answer(reply)

    def program(self, spec: HardDataset) -> str:
        """The environment program of one dataset at its hard settings (the family's form)."""
        return program_source(DatasetChoice(spec.name, dict(spec.config)))

    def items_program(self, spec: HardDataset) -> str:
        """The program whose instances hold the dataset's items (``ReasoningGymItems``, the
        eval prelude), numbered and read as the protocol says."""
        source = self.program(spec).replace(f"({BASE_CLASS}):", f"({ITEMS_CLASS}):", 1)
        if self.protocol == "reference":
            source += (f"    dataset_seed = {REFERENCE_DATASET_SEED}\n"
                       f"    dataset_size = {REFERENCE_DATASET_SIZE}\n"
                       f"    extraction = \"answer_tag\"\n"
                       f"    answer_instruction = {REFERENCE_SUFFIX!r}\n")
        return source

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        buckets = {b: specs for b, specs in self.buckets.items() if specs}
        if self.protocol == "reference":  # a limit plays the first episodes it needs
            per = per_bucket(limit, len(buckets))
            sizes = {b: [self.episodes if per is None else min(self.episodes, size)
                         for size in _sizes(per or 0, len(specs))]
                     for b, specs in buckets.items()}
        else:
            per = per_bucket(limit, len(buckets)) or DEFAULT_PER_BUCKET
            sizes = {b: _sizes(per, len(specs)) for b, specs in buckets.items()}
        wanted = [(bucket, spec, size) for bucket, specs in buckets.items()
                  for spec, size in zip(specs, sizes[bucket]) if size]
        generated = self._generate(wanted, seed)
        by_bucket: dict[str, list[EvalItem]] = {}
        for bucket, spec, _ in wanted:
            by_bucket.setdefault(bucket, []).append(generated[spec.name])
        # Interleave the datasets so a small limit still mixes them.
        return spread({b: _interleave(columns) for b, columns in by_bucket.items()}, limit)

    def _generate(self, wanted: list[tuple[str, HardDataset, int]], seed: int
                  ) -> dict[str, list[EvalItem]]:
        """The items of every wanted dataset, each generated in the sandbox by the dataset's
        items instance (question and oracle), which keeps it for scoring. The datasets are
        generated side by side: one ``reset`` per instance per round, all in one batched call.

        Default protocol: seeds ``SEED_OFFSET + seed``, ``+ 1``, ...; a seed whose generation
        fails (it raised, or ran past the sandbox's time limit: some reasoning-gym generators
        loop forever on some seeds) is skipped for the next one. Reference protocol: episodes
        ``0 .. episodes - 1`` of the dataset built with seed 42; a failed episode is left out."""
        reference = self.protocol == "reference"
        state = {spec.name: _Wanted(bucket, spec, size, self.items_program(spec),
                                    0 if reference else SEED_OFFSET + seed)
                 for bucket, spec, size in wanted}
        active = list(state.values())
        for entry in active:
            try:
                entry.desk = self._open_desk(entry.program)
            except SandboxError as exc:
                self._skip(entry.spec.name, f"its program does not open: {exc.verdict.message}")
                entry.done = True
        while True:
            active = [e for e in active if not e.done]
            if not active:
                break
            # A few at a time: generators sharing the CPUs slow each other down, and the reset
            # limit's wall-clock backstop (wall_factor x its CPU time) would end a starved one.
            current = active[:GENERATING_AT_ONCE]
            results = self.sandbox.reset_many([(e.desk, e.next_seed) for e in current])
            for entry, result in zip(current, results, strict=True):
                item_seed = entry.next_seed
                entry.next_seed += 1
                if isinstance(result, SandboxError):
                    entry.problems.append(f"seed {item_seed}: {result.verdict.message}")
                    try:  # the instance ended: what it held is generated again when scored
                        entry.desk = self._open_desk(entry.program)
                    except SandboxError as exc:
                        entry.problems.append(f"its program does not open: "
                                              f"{exc.verdict.message}")
                        entry.desk, entry.done = None, True
                        continue
                elif "error" in result[1]:
                    entry.problems.append(f"seed {item_seed}: {result[1]['error']}")
                else:
                    oracle = result[1].get("oracle")
                    entry.found.append((item_seed, result[0], oracle))
                    self._holder[(entry.program, item_seed)] = entry.desk
                tried = entry.next_seed - entry.first_seed
                if reference:
                    entry.done = tried >= entry.size
                else:
                    entry.done = (len(entry.found) >= entry.size
                                  or len(entry.problems) > max(entry.size, MAX_SKIPPED_SEEDS))
        return {name: self._item_rows(entry) for name, entry in state.items()}

    def _item_rows(self, entry: "_Wanted") -> list[EvalItem]:
        name = entry.spec.name
        if name in self.skipped and not entry.found:  # its program did not open
            return []
        if self.protocol == "reference":
            if entry.problems:
                self._skip(name, f"{len(entry.problems)} of {entry.size} episodes failed to "
                                 f"generate (the others are played): "
                                 f"{'; '.join(entry.problems[:3])}")
        elif len(entry.found) < entry.size:
            self._skip(name, f"{len(entry.problems)} seeds failed to generate: "
                             f"{'; '.join(entry.problems[:3])}")
            return []
        rows = []
        for index, (item_seed, question, oracle) in enumerate(entry.found):
            if self.protocol == "reference":
                prompt: tuple[dict[str, str], ...] = (
                    {"role": "user", "content": reference_prompt(question)},)
                gold = () if oracle is None or "</answer>" in oracle.lower() else (
                    f"<answer>{oracle}</answer>",)
            else:
                prompt = ({"role": "system", "content": AGENT_INSTRUCTIONS},
                          {"role": "user", "content": question})
                gold = () if oracle is None else (answer_reply(oracle),)
            rows.append(EvalItem(
                id=f"{name}/{index}", bucket=entry.bucket, prompt=prompt, gold=gold,
                text=question,
                data={"program": entry.program, "seed": item_seed, "dataset": name}))
        return rows

    def _open_desk(self, program: str) -> SandboxSession:
        desk = self.sandbox.open(program, family=self.family)
        self._desks.append(desk)
        return desk

    def score_many(self, pairs: Sequence[tuple[EvalItem, str]]) -> list[float]:
        """Each reply scored by the dataset's own ``score_answer`` (guarded: docs/sandbox.md) in
        the instance holding its item: one ``step`` per instance for all the replies it gets,
        every instance in one batched call. Replies of an instance that fails (a reply that
        hit a limit ends it) are scored again one by one, each in an instance of its own."""
        by_desk: dict[int, tuple[SandboxSession, list[int]]] = {}
        fresh: dict[str, SandboxSession] = {}
        scores: list[float | None] = [None] * len(pairs)
        for index, (item, _) in enumerate(pairs):
            key = (item.data["program"], item.data["seed"])
            desk = self._holder.get(key)
            if desk is None or _ended(desk):
                desk = fresh.get(key[0])
                if desk is None:
                    try:
                        desk = fresh[key[0]] = self._open_desk(key[0])
                    except SandboxError:
                        continue
                self._holder[key] = desk
            by_desk.setdefault(id(desk), (desk, []))[1].append(index)
        batch = [(desk, json.dumps({"replies": [[pairs[i][0].data["seed"], pairs[i][1]]
                                                for i in indices]}))
                 for desk, indices in by_desk.values()]
        results = self.sandbox.step_many(batch) if batch else []
        for (desk, indices), result in zip(by_desk.values(), results, strict=True):
            values = None if isinstance(result, SandboxError) else result.info.get("scores")
            if isinstance(values, list) and len(values) == len(indices):
                for i, value in zip(indices, values):
                    scores[i] = _clip(value)
        missing = [i for i, s in enumerate(scores) if s is None]
        if missing:  # alone, so one hostile reply costs only its own score
            alone = score_in_sandbox(self.sandbox, [ScoringJob(
                pairs[i][0].data["program"], self.family,
                json.dumps({"replies": [[pairs[i][0].data["seed"], pairs[i][1]]]}),
                pairs[i][0].data["seed"]) for i in missing])
            for i, value in zip(missing, alone, strict=True):
                scores[i] = value
        if self.protocol == "reference":  # a win is a full score; partial credit is no win
            return [1.0 if (s or 0.0) >= 1.0 - 1e-9 else 0.0 for s in scores]
        return [float(s or 0.0) for s in scores]

    def score(self, item: EvalItem, reply: str) -> float:
        return self.score_many([(item, reply)])[0]

    def close(self) -> None:
        """End the instances holding the items."""
        desks, self._desks, self._holder = self._desks, [], {}
        for desk in desks:
            try:
                desk.close()
            except Exception:  # noqa: BLE001 - a worker that died has nothing left to close
                pass


@dataclass
class _Wanted:
    """A dataset's generation in progress: where it stands and what it found."""

    bucket: str
    spec: HardDataset
    size: int
    program: str
    first_seed: int
    desk: Any = None
    done: bool = False
    next_seed: int = -1
    found: list[tuple[int, str, str | None]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.next_seed = self.first_seed


def _ended(session: SandboxSession) -> bool:
    return bool(getattr(session, "failure", None) is not None or getattr(session, "closed", False))


def _clip(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return min(max(number, 0.0), 1.0) if math.isfinite(number) else 0.0


def reference_prompt(question: str) -> str:
    """The reference's one user message for a hard-split item: reasoning-gym's own default
    system prompt (``reasoning_gym.utils.SYSTEM_PROMPTS["default"]``, the reasoning-gym paper's)
    with the problem after its first sentence."""
    from reasoning_gym.utils import SYSTEM_PROMPTS

    first, *rest = SYSTEM_PROMPTS["default"].strip().splitlines()
    return "\n".join([first, f"Problem: {question}", *rest])


def reference_answer(reply: str) -> str | None:
    """The answer the reference reads: the last ``<answer>...</answer>`` (any case, trimmed),
    else the content of the last ``\\boxed{...}``, else none (host copy of the eval prelude's
    reading, for ``--save-replies``; nothing is evaluated)."""
    tags = _TAG_ANY_CASE.findall(reply)
    if tags:
        return tags[-1].strip()
    start = reply.rfind("\\boxed")
    if start < 0 or not reply.startswith("\\boxed{", start):
        return None
    depth = 0
    for i in range(start + len("\\boxed"), len(reply)):
        depth += {"{": 1, "}": -1}.get(reply[i], 0)
        if depth == 0 and reply[i] == "}":
            return reply[start + len("\\boxed{"):i]
    return None


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
                             options.exclude, options.protocol, options.episodes)
