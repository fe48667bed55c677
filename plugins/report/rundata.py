"""Read a run directory (see ``docs/cli.md``, ``spade run``) into plain records for the report.

Tolerant by design: a run in progress may lack ``summary.json``, have an ``envs/<id>.py`` whose
``.json`` is not written yet, or a last ``metrics.jsonl`` line cut short; other plugins may add
fields. Whatever cannot be read becomes a warning shown in the report, never a crash.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spade_core.errors import UsageError

#: Statuses in the order the report lists them (``spade_core.interfaces.memory.ENV_STATUSES``).
STATUS_ORDER: tuple[str, ...] = ("frontier", "mastered", "too_hard", "retired", "duplicate",
                                  "rejected")
#: The counts of each skill or level in a ``metrics.jsonl`` row's ``skills`` and ``levels``.
BREAKDOWN_COUNTS: tuple[str, ...] = ("proposed", "valid", "played")
#: How the report names an empty skill (proposals whose prompt asked for none).
NO_NAME = "(none)"


def as_number(value: Any) -> float | None:
    """``value`` as a finite float, or None (missing, text, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def success_rate(rewards: list[Any], threshold: float = 1.0) -> float | None:
    """Share of episodes with reward at least ``threshold`` (the run's
    ``loop.success_threshold``), as the loop's metrics count it."""
    values = [v for v in (as_number(r) for r in rewards) if v is not None]
    return sum(1 for v in values if v >= threshold) / len(values) if values else None


@dataclass
class EnvView:
    """One proposed environment as the report shows it (``envs/<id>.json`` plus its source)."""

    id: str
    source: str
    details: dict[str, Any]
    #: The run's ``loop.success_threshold``.
    success_threshold: float = 1.0
    #: Its rows of ``replays.jsonl`` (each a later iteration that played it again), oldest first.
    replays: list[dict[str, Any]] = field(default_factory=list)

    def get(self, key: str, default: Any = None) -> Any:
        value = self.details.get(key, default)
        return default if value is None else value

    @property
    def iteration(self) -> int | None:
        value = as_number(self.details.get("iteration"))
        return None if value is None else int(value)

    @property
    def family(self) -> str:
        return str(self.get("family", "unknown"))

    @property
    def status(self) -> str:
        return str(self.get("status", "unknown"))

    @property
    def skill(self) -> str | None:
        """The skill the designer was asked for (None in old runs or when none was named)."""
        value = self.details.get("skill")
        return str(value) if value not in (None, "") else None

    @property
    def level(self) -> int | None:
        """The difficulty level asked for (None in old runs or when none was asked: level 0)."""
        value = as_number(self.details.get("level"))
        return int(value) if value else None

    @property
    def repairs(self) -> int | None:
        """Repair turns the designer took for this environment (None in old runs)."""
        value = as_number(self.details.get("repairs"))
        return None if value is None else int(value)

    @property
    def verdict(self) -> dict[str, Any]:
        verdict = self.details.get("verdict")
        return verdict if isinstance(verdict, dict) else {}

    @property
    def figures(self) -> dict[str, Any]:
        difficulty = self.details.get("difficulty")
        figures = difficulty.get("figures") if isinstance(difficulty, dict) else None
        return figures if isinstance(figures, dict) else {}

    @property
    def regret(self) -> float | None:
        return as_number(self.figures.get("regret"))

    @property
    def designer_reward(self) -> float | None:
        return as_number(self.details.get("designer_reward"))

    @property
    def hinted_rewards(self) -> list[Any]:
        return list(self.get("hinted_rewards", []))

    @property
    def unhinted_rewards(self) -> list[Any]:
        return list(self.get("unhinted_rewards", []))

    @property
    def success_hinted(self) -> float | None:
        return success_rate(self.hinted_rewards, self.success_threshold)

    @property
    def success_unhinted(self) -> float | None:
        return success_rate(self.unhinted_rewards, self.success_threshold)

    @property
    def played(self) -> bool:
        """Whether this entry's iteration played the environment (it has a difficulty)."""
        return isinstance(self.details.get("difficulty"), dict)

    @property
    def history(self) -> list[EnvView]:
        """Each iteration that handled it, oldest first: the proposal (``envs/<id>.json``), then
        every replay (``replays.jsonl``), as views whose figures are that iteration's."""
        rows = [self]
        for replay in self.replays:
            rows.append(EnvView(id=self.id, source=self.source,
                                details={**self.details, **replay, "replayed": True},
                                success_threshold=self.success_threshold))
        return rows

    @property
    def latest(self) -> EnvView:
        """The entry of the latest iteration that played it (replays included), else the
        proposal: the figures its card shows."""
        played = [view for view in self.history if view.played]
        return played[-1] if played else self


@dataclass
class RunData:
    """Everything the report shows about one run directory."""

    run_dir: Path
    config: dict[str, Any] = field(default_factory=dict)
    config_text: str = ""
    metrics: list[dict[str, Any]] = field(default_factory=list)
    envs: list[EnvView] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    isolation: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """``summary.json``'s status, or ``in progress`` while the run has not written it."""
        if self.summary is None:
            return "in progress"
        return str(self.summary.get("status", "unknown"))

    @property
    def name(self) -> str:
        run = self.config.get("run")
        name = run.get("name") if isinstance(run, dict) else None
        return str(name) if name else self.run_dir.name

    @property
    def success_threshold(self) -> float:
        """The run's ``loop.success_threshold`` (1.0 when the config does not say)."""
        loop = self.config.get("loop")
        value = as_number(loop.get("success_threshold")) if isinstance(loop, dict) else None
        return value if value is not None else 1.0

    @property
    def families(self) -> list[str]:
        return sorted({e.family for e in self.envs})

    @property
    def skills(self) -> list[str]:
        """Skills named by the environments' details (empty for runs written before skills)."""
        return sorted({e.skill for e in self.envs if e.skill is not None})

    @property
    def unplayed_iterations(self) -> list[int]:
        """Finished iterations that played no environment (their regret and success are n/a)."""
        return [int(m["iteration"]) for m in self.metrics
                if as_number(m.get("iteration")) is not None and nothing_played(m)]

    @property
    def statuses(self) -> list[str]:
        present = {e.status for e in self.envs} | {e.latest.status for e in self.envs}
        return [s for s in STATUS_ORDER if s in present] + sorted(present - set(STATUS_ORDER))


def nothing_played(row: dict[str, Any]) -> bool:
    """Whether a ``metrics.jsonl`` row played no environment: its ``mean_regret`` and success
    figures are placeholders (0), which the report shows as "n/a". Rows without
    ``envs_played`` (written by another loop) count as played."""
    return "envs_played" in row and not as_number(row.get("envs_played"))


def breakdown_key(name: str) -> tuple[int, float, str]:
    """Sort key for skill or level names: numbers (levels) in numeric order, then text."""
    try:
        return 0, float(name), name
    except ValueError:
        return 1, 0.0, name


def breakdown(metrics: list[dict[str, Any]], field: str) -> dict[str, dict[int, dict[str, int]]]:
    """``{name: {iteration: {"proposed", "valid", "played"}}}`` from each row's ``field``
    (``skills`` or ``levels``); rows without it (older runs) or with odd values add nothing,
    so an empty result means the run records no such breakdown."""
    table: dict[str, dict[int, dict[str, int]]] = {}
    for row in metrics:
        iteration, parts = as_number(row.get("iteration")), row.get(field)
        if iteration is None or not isinstance(parts, dict):
            continue
        for name, counts in parts.items():
            if not isinstance(counts, dict):
                continue
            numbers = {k: as_number(counts.get(k)) for k in BREAKDOWN_COUNTS}
            table.setdefault(str(name) or NO_NAME, {})[int(iteration)] = {
                k: int(v) if v is not None else 0 for k, v in numbers.items()}
    return {name: table[name] for name in sorted(table, key=breakdown_key)}


def held_out(metrics: list[dict[str, Any]]) -> dict[str, tuple[list[int], list[float]]]:
    """``{suite: (iterations, pass@1)}`` from the rows' ``eval`` (the in-run evaluation of
    ``eval.every``); empty for runs without it. Rows without ``eval`` add nothing."""
    series: dict[str, tuple[list[int], list[float]]] = {}
    for row in metrics:
        iteration, figures = as_number(row.get("iteration")), row.get("eval")
        if iteration is None or not isinstance(figures, dict):
            continue
        for suite, result in figures.items():
            score = as_number(result.get("pass@1")) if isinstance(result, dict) else None
            if score is not None:
                xs, ys = series.setdefault(str(suite), ([], []))
                xs.append(int(iteration))
                ys.append(score)
    return series


def latest_eval(metrics: list[dict[str, Any]]) -> tuple[int, dict[str, Any]] | None:
    """(iteration, ``eval`` figures) of the last row that has an in-run evaluation, or None."""
    for row in reversed(metrics):
        iteration, figures = as_number(row.get("iteration")), row.get("eval")
        if iteration is not None and isinstance(figures, dict) and figures:
            return int(iteration), figures
    return None


def eval_cell(figures: dict[str, Any], suite: str, bucket: str) -> Any:
    """One column of the paper's tables (:class:`spade_core.eval.paper_table.Cell`) from an
    ``eval`` entry of a metrics row, or None when the suite or bucket was not evaluated. Rows of
    runs older than ``ci95`` give the figure without an interval."""
    from spade_core.eval.paper_table import Cell

    result = figures.get(suite)
    if not isinstance(result, dict):
        return None
    if bucket == "overall":
        mean = as_number(result.get("table_overall", result.get("pass@1")))
        items = as_number(result.get("items"))
    else:
        buckets, counts = result.get("buckets"), result.get("bucket_items")
        mean = as_number(buckets.get(bucket)) if isinstance(buckets, dict) else None
        items = as_number(counts.get(bucket)) if isinstance(counts, dict) else None
    if mean is None:
        return None
    intervals = result.get("ci95")
    half = as_number(intervals.get(bucket)) if isinstance(intervals, dict) else None
    return Cell(mean, half, int(items or 0))


def _read_jsonl(path: Path, warnings: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if not path.is_file():
        return rows
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            last = number == len(lines)
            warnings.append(f"{path.name} line {number}: not JSON ({exc.msg})"
                            + ("; the run is probably still writing it" if last else ""))
            continue
        if isinstance(row, dict):
            rows.append(row)
        else:
            warnings.append(f"{path.name} line {number}: a JSON {type(row).__name__}, "
                            "expected an object")
    return rows


def _read_json(path: Path, label: str, warnings: list[str]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, json.JSONDecodeError) as exc:
        warnings.append(f"{label}: cannot read ({exc})")
        return None


def _read_envs(envs_dir: Path, warnings: list[str]) -> list[EnvView]:
    envs: list[EnvView] = []
    if not envs_dir.is_dir():
        return envs
    pending = 0
    for detail_path in sorted(envs_dir.glob("*.json")):
        details = _read_json(detail_path, f"envs/{detail_path.name}", warnings)
        if not isinstance(details, dict):
            if details is not None:
                warnings.append(f"envs/{detail_path.name}: a JSON {type(details).__name__}, "
                                "expected an object; left out")
            continue
        env_id = str(details.get("id") or detail_path.stem)
        source_path = detail_path.with_suffix(".py")
        source = (source_path.read_text(encoding="utf-8", errors="replace")
                  if source_path.is_file() else "")
        envs.append(EnvView(id=env_id, source=source, details=details))
    for source_path in envs_dir.glob("*.py"):
        if not source_path.with_suffix(".json").exists():
            pending += 1
    if pending:
        warnings.append(f"{pending} environment program(s) in envs/ have no details yet "
                        "(the run is writing them); they are left out")
    envs.sort(key=lambda e: (e.iteration if e.iteration is not None else -1, e.id))
    return envs


def load_run(run_dir: Path) -> RunData:
    """Read ``run_dir``; raises UsageError when it is not a run directory at all."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"report: {str(run_dir)!r} is not a directory; pass the run directory "
                         "that `spade run` printed (it holds metrics.jsonl and envs/)")
    markers = ("config.resolved.yaml", "metrics.jsonl", "envs", "summary.json")
    if not any((run_dir / m).exists() for m in markers):
        raise UsageError(f"report: {str(run_dir)!r} is not a run directory: it has none of "
                         f"{', '.join(markers)}")
    import yaml

    data = RunData(run_dir=run_dir)
    config_path = run_dir / "config.resolved.yaml"
    if config_path.is_file():
        data.config_text = config_path.read_text(encoding="utf-8", errors="replace")
        try:
            loaded = yaml.safe_load(data.config_text)
            data.config = loaded if isinstance(loaded, dict) else {}
        except yaml.YAMLError as exc:
            data.warnings.append(f"config.resolved.yaml: not valid YAML ({exc})")
    data.metrics = _read_jsonl(run_dir / "metrics.jsonl", data.warnings)
    data.metrics.sort(key=lambda m: as_number(m.get("iteration")) or 0.0)
    data.isolation = _read_jsonl(run_dir / "isolation.jsonl", data.warnings)
    data.envs = _read_envs(run_dir / "envs", data.warnings)
    replays: dict[str, list[dict[str, Any]]] = {}
    for row in _read_jsonl(run_dir / "replays.jsonl", data.warnings):
        replays.setdefault(str(row.get("id")), []).append(row)
    for env in data.envs:
        env.success_threshold = data.success_threshold
        env.replays = sorted(replays.get(env.id, []),
                             key=lambda r: as_number(r.get("iteration")) or 0.0)
    checkpoints = run_dir / "checkpoints"
    if checkpoints.is_dir():  # written by the trainer's resume support; listed, not parsed
        data.checkpoints = sorted(p.name for p in checkpoints.iterdir()
                                  if not p.name.startswith("."))
    summary_path = run_dir / "summary.json"
    if summary_path.is_file():
        summary = _read_json(summary_path, "summary.json", data.warnings)
        data.summary = summary if isinstance(summary, dict) else None
    return data
