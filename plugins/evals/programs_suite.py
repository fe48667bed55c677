"""The ``programs`` eval suite: any folder or JSONL of environment programs (SPADE format
included), played unhinted through the configured sandbox exactly as the loop plays them
(:func:`spade_core.selfplay.rollouts.run_rollouts`). An episode succeeds when its final reward
reaches ``loop.success_threshold``; each program is one item, played at one fixed seed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from spade_core.components import BuildContext
from spade_core.errors import ConfigError, SandboxError
from spade_core.interfaces import (
    EnvFamily,
    EvalItem,
    EvalSettings,
    EvalSuite,
    GenerationBackend,
    Sandbox,
)
from spade_core.program_files import choose_family, read_programs
from spade_core.records import program_id
from spade_core.selfplay.rollouts import RolloutRequest, run_rollouts

from plugins.evals.items import spread
from plugins.evals.options import ProgramsSuiteOptions


class ProgramsSuite(EvalSuite):
    """Programs of a folder or JSONL file, one item each, bucketed by family (or by the JSONL
    field ``bucket`` names, e.g. ``answer``)."""

    name = "programs"

    def __init__(self, path: str, sandbox: Sandbox, families: Sequence[EnvFamily],
                 field: str | None = None, bucket: str | None = None) -> None:
        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise ConfigError(f"programs suite: path {path!r}: no such file or folder; give a "
                              "folder of .py programs or a .jsonl file")
        if not families:
            raise ConfigError("programs suite: no env family is configured to read the programs")
        self.sandbox = sandbox
        self.families = list(families)
        self.field = field
        self.bucket = bucket
        if bucket is not None and self.path.suffix != ".jsonl":
            raise ConfigError(f"programs suite: bucket {bucket!r} reads a JSONL field; {path} is "
                              "not a .jsonl file")

    def _buckets(self) -> dict[str, str]:
        """Each JSONL line's label -> the value of its ``bucket`` field."""
        import json

        out = {}
        with self.path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    row = json.loads(line)
                    if isinstance(row, dict) and self.bucket in row:
                        out[f"{self.path}:{number}"] = str(row[self.bucket])
        return out

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        by_family: dict[str, list[EvalItem]] = {}
        buckets = self._buckets() if self.bucket is not None else {}
        for label, source, description in read_programs(self.path, self.field):
            if source is None:
                continue
            family, _ = choose_family(source, self.families)
            if family is None:
                continue
            bucket = (buckets.get(label, f"no {self.bucket}") if self.bucket is not None
                      else family.name)
            items = by_family.setdefault(bucket, [])
            items.append(EvalItem(
                id=program_id(source), bucket=bucket, text=description or source,
                data={"program": source, "family": family, "seed": seed + len(items),
                      "label": label}))
        if not by_family:
            raise ConfigError(f"programs suite: {self.path} holds no program of the configured "
                              f"families ({', '.join(f.name for f in self.families)})")
        return spread(by_family, limit)

    def play(self, items: Sequence[EvalItem], backend: GenerationBackend,
             settings: EvalSettings) -> list[list[float]]:
        return play_programs(self.sandbox, items, backend, settings)

    def gold(self, items: Sequence[EvalItem]) -> dict[str, tuple[str, ...]]:
        """Each program's own ``solution()`` at the item's seed, as the family turns it into
        actions, keyed by the first observation."""
        found: dict[str, tuple[str, ...]] = {}
        for item in items:
            family = item.data["family"]
            session = self.sandbox.open(item.data["program"], family=family)
            try:
                observation, info = session.reset(item.data["seed"])
                actions = family.solution_actions(session.solution(),
                                                  family.tools_from_info(info))
            except SandboxError:
                continue
            finally:
                session.close()
            if isinstance(actions, str):
                actions = [actions]
            found[observation] = tuple(actions or ())
        return found


def play_programs(sandbox: Sandbox, items: Sequence[EvalItem], backend: GenerationBackend,
                  settings: EvalSettings) -> list[list[float]]:
    """Each item's program (``data``: ``program``, ``family``, ``seed``) played unhinted
    ``settings.samples`` times at its seed, exactly as the loop plays environments; the episode
    rewards, floored at 0."""
    requests = [RolloutRequest(env_id=item.id, program=item.data["program"],
                               family=item.data["family"],
                               seeds=[item.data["seed"]] * settings.samples)
                for item in items]
    episodes, _ = run_rollouts(
        sandbox, backend, requests, max_turns=settings.max_turns,
        max_new_tokens=settings.max_new_tokens, temperature=settings.temperature,
        seed=settings.seed)
    return [[max(0.0, e.reward) for e in group] for group in episodes]


def build(options: ProgramsSuiteOptions, context: BuildContext) -> ProgramsSuite:
    sandbox = context.components.get("sandbox")
    if sandbox is None:
        raise ConfigError("the programs suite plays programs through a sandbox; none was built")
    families = context.components.get("env_family") or []
    if not isinstance(families, list):
        families = [families]
    return ProgramsSuite(options.path, sandbox, families, options.field, options.bucket)
