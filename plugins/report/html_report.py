"""Build the report: read the run, draw the plots, find neighbours, render one HTML file."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from plugins.report.rundata import (EnvView, RunData, as_number, breakdown, load_run,
                                    nothing_played, success_rate)

#: Figures summed over iterations for the overview when ``summary.json`` is not written yet.
TOTAL_KEYS: tuple[tuple[str, str], ...] = (
    ("envs_proposed", "proposed"), ("envs_valid", "valid"), ("envs_duplicate", "duplicate"),
    ("envs_played", "played"), ("envs_mastered", "mastered"), ("envs_too_hard", "too hard"),
)
#: Totals shown only when some row has them (runs from before replay and repair turns lack them).
OPTIONAL_TOTAL_KEYS: tuple[tuple[str, str], ...] = (
    ("envs_replayed", "replayed"), ("repairs", "repairs"),
)
#: Columns of the iterations table that older runs lack, shown only when some row has them:
#: replays and retirements this iteration, then the memory's counts by status after it.
CURRICULUM_COLUMNS: tuple[tuple[str, str], ...] = (
    ("envs_replayed", "replayed"), ("envs_retired", "retired or too hard"), ("repairs", "repairs"),
    ("frontier_size", "frontier"), ("envs_mastered_total", "mastered in memory"),
)

#: How each iteration's hints fared (``hint_counts`` in ``spade_core.selfplay.metrics``); shown
#: when some row has them (runs from before the hint diagnostics lack them).
HINT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("hints", "hints"), ("hints_redacted", "hints redacted"),
    ("hints_hurt", "hints hurt"), ("hints_checked", "hints checked"),
    ("hints_contradict", "hints contradict"),
)


@dataclass
class FamilyRow:
    """One line of the per-family table."""

    family: str
    environments: int
    statuses: dict[str, int]
    mean_regret: float | None
    mean_designer_reward: float | None
    success_unhinted: float | None
    success_hinted: float | None


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


def family_rows(envs: list[EnvView], threshold: float = 1.0) -> list[FamilyRow]:
    rows = []
    for family in sorted({e.family for e in envs}):
        mine = [e for e in envs if e.family == family]
        statuses: dict[str, int] = {}
        for env in mine:
            statuses[env.status] = statuses.get(env.status, 0) + 1
        rows.append(FamilyRow(
            family=family, environments=len(mine), statuses=statuses,
            mean_regret=_mean([e.regret for e in mine]),
            mean_designer_reward=_mean([e.designer_reward for e in mine]),
            success_unhinted=success_rate([r for e in mine for r in e.unhinted_rewards],
                                          threshold),
            success_hinted=success_rate([r for e in mine for r in e.hinted_rewards],
                                        threshold)))
    return rows


@dataclass
class BreakdownRow:
    """One line of the per-skill (or per-level) table: counts summed over the run."""

    name: str
    proposed: int
    valid: int
    played: int

    @property
    def validity(self) -> float | None:
        """Share of fresh proposals that were valid (None when none was proposed)."""
        return self.valid / self.proposed if self.proposed else None


def breakdown_rows(metrics: list[dict[str, Any]], field: str) -> list[BreakdownRow]:
    """Per-name totals of ``field`` (``skills`` or ``levels``) over every iteration, plus an
    ``all`` line when there are several names; empty for runs that do not record ``field``."""
    rows = [BreakdownRow(name, *(sum(c[k] for c in per.values())
                                 for k in ("proposed", "valid", "played")))
            for name, per in breakdown(metrics, field).items()]
    if len(rows) > 1:
        rows.append(BreakdownRow("all", sum(r.proposed for r in rows),
                                 sum(r.valid for r in rows), sum(r.played for r in rows)))
    return rows


def present_columns(metrics: list[dict[str, Any]], columns: tuple[tuple[str, str], ...]
                    ) -> list[tuple[str, str]]:
    """The ``(key, header)`` pairs of ``columns`` that at least one row of ``metrics`` has."""
    return [(key, label) for key, label in columns if any(key in m for m in metrics)]


def totals(data: RunData) -> dict[str, float]:
    """Totals over the finished iterations (summed from metrics.jsonl, so they hold mid-run)."""
    result: dict[str, float] = {"iterations": len(data.metrics)}
    for key, label in (*TOTAL_KEYS, *present_columns(data.metrics, OPTIONAL_TOTAL_KEYS)):
        values = [as_number(m.get(key)) for m in data.metrics]
        total = sum(v for v in values if v is not None)
        result[label] = int(total) if float(total).is_integer() else total
    return result


def _fmt(value: Any, digits: int = 3) -> str:
    number = as_number(value)
    if number is None:
        return "–" if value is None else str(value)
    if float(number).is_integer() and abs(number) < 1e15 and not isinstance(value, float):
        return str(int(number))
    return f"{number:.{digits}f}"


def _show(value: Any) -> str:
    """A field of unknown shape (added by some plugin): text as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except ValueError:
        return repr(value)


def _pct(value: Any) -> str:
    number = as_number(value)
    return "–" if number is None else f"{100 * number:.0f}%"


def paper_tables(metrics: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(title, text) of the paper's RQ1 and RQ2 tables for the run's latest in-run evaluation,
    each only when one of its suites was evaluated; empty without any evaluation."""
    from spade_core.eval.paper_table import COLUMNS, render

    from plugins.report.rundata import eval_cell, latest_eval

    latest = latest_eval(metrics)
    if latest is None:
        return []
    iteration, figures = latest
    tables = []
    for name, columns in COLUMNS.items():
        if any(suite in figures for _, suite, _ in columns):
            text = render(name, lambda suite, bucket: eval_cell(figures, suite, bucket),
                          labels=(f"iteration {iteration}", "baseline"))
            tables.append((f"{name.upper()} (evaluation after iteration {iteration})", text))
    return tables


def render_html(data: RunData, neighbours: int = 5, max_envs: int = 0) -> str:
    """The report page of ``data`` as one HTML string."""
    from plugins.report.envcards import build_cards, code_css
    from plugins.report.neighbours import find_neighbours
    from plugins.report.plots import STATUS_COLOURS, render_plots

    envs = data.envs[-max_envs:] if max_envs > 0 else data.envs
    memory = find_neighbours(data.run_dir, data.config, [e.id for e in envs], neighbours)
    plots = render_plots(data)
    environment = template_environment()
    environment.filters["fmt"] = _fmt
    environment.filters["pct"] = _pct
    environment.filters["show"] = _show
    environment.tests["unplayed"] = lambda row: isinstance(row, dict) and nothing_played(row)
    template = environment.get_template("report.html.jinja")
    from spade_core import __version__

    return template.render(
        data=data, plots=[p for p in plots if p.section == "run"],
        family_plots=[p for p in plots if p.section == "family"],
        skill_plots=[p for p in plots if p.section == "skill"],
        skill_rows=breakdown_rows(data.metrics, "skills"),
        level_rows=breakdown_rows(data.metrics, "levels"),
        curriculum_columns=present_columns(data.metrics, CURRICULUM_COLUMNS + HINT_COLUMNS),
        families=family_rows(data.envs, data.success_threshold),
        cards=build_cards(envs, memory.neighbours),
        envs_left_out=len(data.envs) - len(envs), memory=memory, totals=totals(data),
        code_css=code_css(), status_colours=STATUS_COLOURS, version=__version__,
        paper_tables=paper_tables(data.metrics),
        generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"), last=data.metrics[-1]
        if data.metrics else None)


def template_environment() -> Any:
    """The Jinja environment of the report's templates (``plugins/report/templates``): escaped,
    strict about undefined names."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("plugins.report", "templates"), autoescape=True,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def build_report(run_dir: Path | str, out: Path | str | None = None, neighbours: int = 5,
                 max_envs: int = 0) -> Path:
    """Write the report of ``run_dir`` to ``out`` (default ``RUN_DIR/report.html``); returns
    its path. ``neighbours`` nearest stored environments per card; ``max_envs`` keeps only the
    latest environments in the browser (0: all)."""
    from spade_core.atomic_files import write_atomic

    data = load_run(Path(run_dir))
    target = Path(out) if out is not None else data.run_dir / "report.html"
    write_atomic(target, render_html(data, neighbours=neighbours, max_envs=max_envs))
    return target
