"""The page of an experiment folder (``spade experiment``): its held-out curves against compute
and its table side by side, per suite, read from ``results.json``; the checks; the compute per
arm; and a link to each arm x seed run's own report, written beside it.

The curves are drawn like the run report's plots (:mod:`plugins.report.plots`: matplotlib into
inline SVG) and the page shares the run report's style sheet, so it needs no network either.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spade_core.errors import UsageError

#: Compute measures the curves are drawn against, each in its own panel when some arm spent any.
MEASURES: tuple[tuple[str, str], ...] = (
    ("agent_samples", "agent samples trained"),
    ("optimizer_steps", "optimiser steps"),
    ("tokens_total", "tokens generated (designer's included)"),
)
#: The panel used when no run recorded any of :data:`MEASURES`.
FALLBACK_MEASURE = ("iterations", "iterations")
#: Columns of the compute table, from each run's ``compute`` (``spade_core.experiment.compute``).
COMPUTE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("iterations", "iterations"), ("agent_samples", "agent samples"),
    ("designer_samples", "designer samples"), ("optimizer_steps", "optimiser steps"),
    ("tokens_designer", "tokens designer"), ("tokens_agent", "tokens agent"),
    ("tokens_hint", "tokens hint"), ("tokens_validator", "tokens validator"),
    ("tokens_total", "tokens total"), ("tokens_eval", "tokens eval (not in total)"),
)
#: The checks of ``results.json`` and what each one asks.
CHECKS: tuple[tuple[str, str], ...] = (
    ("same_seeds", "every run of a seed stored that seed"),
    ("same_first_designs", "arms with the same designer proposed the same environments first"),
    ("same_heldout_items", "every evaluation (the baseline's included) played the same items"),
    ("budget_agrees", "trained arms' agent samples and optimiser steps agree within one batch"),
)
#: Checks whose figures may differ as expected: the check's key -> the flag that says so.
EXPECTED_DIFFERENCE = {"same_first_designs": "first_designs_differ_as_expected"}
OVERALL = "overall"


def is_experiment(folder: Path) -> bool:
    """Whether ``folder`` is an experiment folder: its ``results.json`` is an experiment's, or
    it holds ``experiment.json`` (an experiment started, no run finished yet)."""
    folder = Path(folder)
    if (folder / "experiment.json").is_file():
        return True
    path = folder / "results.json"
    if not path.is_file():
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and {"experiment", "table", "curves"} <= set(data)


def load_results(folder: Path) -> dict[str, Any]:
    """``folder/results.json``; a UsageError says why when it cannot be read."""
    path = Path(folder) / "results.json"
    if not path.is_file():
        raise UsageError(f"report: {str(folder)!r} is an experiment folder without results.json "
                         "yet: it is written when the first run ends (spade experiment)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UsageError(f"report: {path} is not valid JSON ({exc}); run `spade experiment` "
                         "again to rewrite it") from None
    for key in ("experiment", "table", "curves"):
        if key not in data:
            raise UsageError(f"report: {path} has no {key!r}: not an experiment's results")
    return data


def arm_order(results: dict[str, Any]) -> list[str]:
    """The reference arm first, then the others as the experiment file lists them."""
    reference = results.get("reference_arm")
    arms = list(results.get("arms") or {})
    for run in results.get("runs", []):
        if run.get("arm") not in arms:
            arms.append(run["arm"])
    return ([reference] if reference in arms else []) + [a for a in arms if a != reference]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"


def measures(curves: dict[str, Any], against: list[str] | None = None
             ) -> list[tuple[str, str]]:
    """The measures the experiment file names (``heldout.curves_against``), else the compute
    measures some curve point spent anything of (:data:`MEASURES`), else iterations."""
    labels = dict((FALLBACK_MEASURE, *MEASURES, ("designer_samples", "designer samples trained")))
    if against:
        return [(key, labels.get(key, key.replace("_", " "))) for key in against]
    spent = {key for by_bucket in curves.values() for by_arm in by_bucket.values()
             for points in by_arm.values() for p in points
             for key, value in (p.get("compute") or {}).items() if value}
    return [m for m in MEASURES if m[0] in spent] or [FALLBACK_MEASURE]


def _x(point: dict[str, Any], key: str) -> float:
    if key == "iterations":
        return float(point.get("iterations", 0))
    return float((point.get("compute") or {}).get(key, 0.0))


def curve_figure(by_arm: dict[str, list[dict[str, Any]]], arms: list[str],
                 panels: list[tuple[str, str]], reference: str | None,
                 constant: float | None = None) -> Any:
    """One suite's (and bucket's) held-out score against each compute measure: a panel per
    measure, per arm the mean over seeds with its 95 % interval as a band; the constant-answer
    score as a dotted line when given."""
    from plugins.report.plots import PALETTE, _figure

    fig, axes = _figure(ncols=len(panels), width=3.4 if len(panels) > 1 else 6.4, height=2.9)
    for ax, (key, label) in zip(axes, panels):
        for arm, colour in zip(arms, PALETTE * 4):
            points = sorted(by_arm.get(arm) or [], key=lambda p: (_x(p, key), p["iterations"]))
            points = [p for p in points if p.get("mean") is not None]
            if not points:
                continue
            xs = [_x(p, key) for p in points]
            seeds = max(p.get("n", 0) for p in points)
            ax.plot(xs, [p["mean"] for p in points], marker="o", markersize=4, color=colour,
                    linewidth=2.2 if arm == reference else 1.6,
                    label=f"{arm} ({seeds} seed{'s' if seeds != 1 else ''})"
                    + (", reference" if arm == reference else ""))
            band = [p for p in points if p.get("low") is not None]
            if band:
                ax.fill_between([_x(p, key) for p in band], [p["low"] for p in band],
                                [p["high"] for p in band], color=colour, alpha=0.18,
                                linewidth=0)
        if constant is not None:
            ax.axhline(constant, color="#5d6675", linestyle=":", linewidth=1.4,
                       label="constant answer")
        ax.set_xlabel(label)
        ax.set_ylim(-0.03, 1.03)
    axes[0].set_ylabel("held-out pass@1")
    handles, labels = axes[-1].get_legend_handles_labels()
    if handles:
        axes[-1].legend(handles, labels, loc="best", fontsize="small", frameon=False)
    return fig


@dataclass
class Curve:
    """One figure of the page: a suite's bucket against compute."""

    id: str
    bucket: str
    svg: str


@dataclass
class ArmRow:
    """One arm in one bucket of the table."""

    bucket: str
    arm: str
    reference: bool
    score: dict[str, Any]
    difference: dict[str, Any] | None
    #: The arm's mean and interval minus the constant-answer score (overall rows of suites
    #: bucketed by answer).
    above_constant: dict[str, Any] | None = None


@dataclass
class SuiteView:
    """A suite's curves and table, shown side by side."""

    name: str
    by_answer: bool
    curves: list[Curve]
    rows: list[ArmRow]
    constant: dict[str, Any] | None


def _shifted(score: dict[str, Any], by: float) -> dict[str, Any]:
    return {k: (score.get(k) - by if score.get(k) is not None else None)
            for k in ("mean", "low", "high")} | {"n": score.get("n")}


def suite_views(results: dict[str, Any], arms: list[str], panels: list[tuple[str, str]]
                ) -> list[SuiteView]:
    from plugins.report.plots import _svg

    table = (results.get("table") or {}).get("suites") or {}
    curves = results.get("curves") or {}
    constants = results.get("constant_answer") or {}
    suites_options = (results.get("heldout") or {}).get("suites") or {}
    reference = results.get("reference_arm")
    views = []
    for suite in list(dict.fromkeys([*curves, *table])):
        constant = constants.get(suite)
        figures = []
        buckets = list(curves.get(suite) or {})
        for bucket in table.get(suite) or {}:
            if bucket not in buckets:
                buckets.append(bucket)
        buckets = sorted(buckets, key=lambda b: b != OVERALL)
        for bucket in buckets:
            by_arm = (curves.get(suite) or {}).get(bucket)
            if not by_arm:
                continue
            plot_id = f"curve-{_slug(suite)}-{_slug(bucket)}"
            fig = curve_figure(by_arm, arms, panels, reference,
                               constant["score"] if constant and bucket == OVERALL else None)
            figures.append(Curve(plot_id, bucket, _svg(fig, plot_id)))
        rows = []
        for bucket in buckets:
            cell = (table.get(suite) or {}).get(bucket) or {}
            for arm in arms:
                score = (cell.get("arms") or {}).get(arm)
                if score is None:
                    continue
                rows.append(ArmRow(
                    bucket, arm, arm == reference, score,
                    (cell.get("vs_reference") or {}).get(arm),
                    _shifted(score, constant["score"]) if constant and bucket == OVERALL
                    else None))
        options = suites_options.get(suite) or {}
        views.append(SuiteView(suite, options.get("bucket") == "answer", figures, rows,
                               constant))
    return views


@dataclass
class RunLink:
    """One arm x seed run: its figures and where its own report is."""

    arm: str
    seed: int
    status: str
    iterations: int
    compute: dict[str, float]
    href: str | None
    note: str = ""


def compute_per_arm(runs: list[dict[str, Any]], arms: list[str]) -> dict[str, dict[str, float]]:
    """Each arm's compute averaged over its runs that started."""
    out = {}
    for arm in arms:
        mine = [r.get("compute") or {} for r in runs
                if r.get("arm") == arm and r.get("iterations_completed")]
        if mine:
            out[arm] = {key: sum(float(c.get(key, 0.0)) for c in mine) / len(mine)
                        for key, _ in COMPUTE_COLUMNS} | {"runs": len(mine)}
    return out


def _run_dir(folder: Path, run: dict[str, Any]) -> Path:
    """The run's directory under ``folder`` (the folder may have moved since it was written),
    else as recorded."""
    from spade_core.experiment.plan import run_dir

    here = run_dir(folder, str(run["arm"]), int(run["seed"]))
    return here if here.is_dir() else Path(str(run.get("dir", here)))


def run_links(folder: Path, results: dict[str, Any], page: Path, *, write_reports: bool,
              neighbours: int, max_envs: int) -> list[RunLink]:
    """Every run of the experiment, its own report written (``RUN_DIR/report.html``) when
    ``write_reports`` and linked relative to ``page``."""
    from plugins.report.html_report import build_report

    links = []
    for run in results.get("runs", []):
        directory = _run_dir(folder, run)
        href, note = None, ""
        if not run.get("iterations_completed"):
            note = "not started"
        elif write_reports:
            try:
                target = build_report(directory, directory / "report.html",
                                      neighbours=neighbours, max_envs=max_envs)
            except UsageError as exc:
                note = str(exc)
            else:
                href = os.path.relpath(target.resolve(), page.resolve().parent)
        elif (directory / "report.html").is_file():
            href = os.path.relpath((directory / "report.html").resolve(), page.resolve().parent)
        else:
            note = "no report written (--no-run-reports)"
        links.append(RunLink(str(run["arm"]), int(run["seed"]), str(run.get("status", "")),
                             int(run.get("iterations_completed") or 0),
                             run.get("compute") or {},
                             Path(href).as_posix() if href else None, note))
    return links


def _points(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _interval(figure: dict[str, Any] | None, signed: bool = False) -> str:
    """``58.3 [22.5, 94.2]`` in percentage points (``+`` on differences); ``n/a`` without a
    figure, the mean alone with fewer than two seeds."""
    if not figure or figure.get("mean") is None:
        return "n/a"
    sign = "+" if signed else ""

    def show(x: float) -> str:
        return f"{100 * x:{sign}.1f}"

    text = show(figure["mean"])
    if figure.get("low") is not None and figure.get("high") is not None:
        text += f" [{show(figure['low'])}, {show(figure['high'])}]"
    return text


def _verdict(figure: dict[str, Any] | None) -> str:
    """``above``, ``below`` or ``unclear``: where the interval lies against 0."""
    if not figure or figure.get("low") is None or figure.get("high") is None:
        return "unclear"
    if figure["low"] > 0:
        return "above"
    if figure["high"] < 0:
        return "below"
    return "unclear"


def badge(value: Any, expected: bool = False) -> tuple[str, str]:
    """A check's badge, class and text: pass, fail, n/a, or "differs as expected" for a check
    that passed where the figures it compares differ only between arms expected to differ (the
    first designs of arms with different designers)."""
    if value is None:
        return "unknown", "n/a"
    if not value:
        return "fail", "fail"
    return ("expected", "differs as expected") if expected else ("pass", "pass")


def _number(value: Any) -> str:
    if value is None:
        return "–"
    number = float(value)
    return str(int(number)) if number.is_integer() else f"{number:.1f}"


def lab_figures(folder: Path) -> dict[str, Any] | None:
    """The curriculum lab's figures (``lab.json``, written by ``python -m plugins.lab.analysis``),
    arms best first, or ``None`` when the folder has none."""
    path = Path(folder) / "lab.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    arms = sorted(data.get("arms", {}).items(), key=lambda kv: -float(kv[1].get("iqm", 0.0)))
    kinds = list(dict.fromkeys(k for _, a in arms for k in a.get("kind_share", {})))
    return {"arms": arms, "kinds": kinds}


def render_experiment(folder: Path, results: dict[str, Any], runs: list[RunLink]) -> str:
    """The page of the experiment in ``folder`` as one HTML string."""
    from spade_core import __version__

    from plugins.report.html_report import template_environment

    arms = arm_order(results)
    panels = measures(results.get("curves") or {},
                      (results.get("heldout") or {}).get("curves_against"))
    environment = template_environment()
    environment.filters.update(pct=_points, interval=_interval, verdict=_verdict, number=_number)
    checks = results.get("checks") or {}
    return environment.get_template("experiment.html.jinja").render(
        lab=lab_figures(folder),
        results=results, folder=folder, arms=arms, suites=suite_views(results, arms, panels),
        panels=panels, runs=runs,
        compute=compute_per_arm(results.get("runs", []), arms), compute_columns=COMPUTE_COLUMNS,
        checks=[(key, text, checks.get(key), EXPECTED_DIFFERENCE.get(key, ""))
                for key, text in CHECKS], all_checks=checks,
        badge=badge,
        per_seed=checks.get("per_seed") or {}, version=__version__,
        reference=results.get("reference_arm"),
        at=(results.get("table") or {}).get("at_iterations", 0),
        generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"))


def build_experiment_page(folder: Path | str, out: Path | str | None = None, *,
                          run_reports: bool = True, neighbours: int = 5,
                          max_envs: int = 0) -> Path:
    """Write the page of the experiment in ``folder`` to ``out`` (default
    ``FOLDER/report.html``) and, with ``run_reports``, each run's own report beside its run
    (``neighbours`` and ``max_envs`` as for :func:`plugins.report.html_report.build_report`);
    returns the page's path."""
    from spade_core.atomic_files import write_atomic

    folder = Path(folder)
    results = load_results(folder)
    target = Path(out) if out is not None else folder / "report.html"
    runs = run_links(folder, results, target, write_reports=run_reports,
                     neighbours=neighbours, max_envs=max_envs)
    write_atomic(target, render_experiment(folder, results, runs))
    return target
