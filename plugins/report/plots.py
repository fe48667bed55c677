"""The report's plots, drawn with matplotlib into inline SVG (text kept as text, no external
fonts or images), so the page needs nothing but itself.

Run-wide curves come from ``metrics.jsonl``, and so do the per-skill and per-level validity maps
(its rows' ``skills`` and ``levels``); per-family figures come from ``envs/*.json`` (each file
holds an environment's latest proposal, so a program proposed again counts at its last iteration).
"""

from __future__ import annotations

import io
import re
from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean
from typing import Any, Callable

from plugins.report.rundata import (STATUS_ORDER, EnvView, RunData, as_number, breakdown,
                                    held_out, nothing_played, success_rate)

#: Fixed colours per environment status, so every plot and badge agrees.
STATUS_COLOURS: dict[str, str] = {
    "frontier": "#3b7dd8", "mastered": "#2e9e5b", "too_hard": "#d9534f", "retired": "#7a5cc2",
    "duplicate": "#8c8c8c", "rejected": "#e08a1e",
}
PALETTE = ("#3b7dd8", "#e08a1e", "#2e9e5b", "#d9534f", "#8e63c7", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


@dataclass
class Plot:
    """One figure of the report: an anchor id, a title, what it shows, and its SVG markup."""

    id: str
    title: str
    caption: str
    svg: str
    section: str = "run"


def _svg(fig: Any, salt: str) -> str:
    """The figure as an ``<svg>`` element that scales with its container."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, count=1, flags=re.S)
    # Keep the viewBox, drop the fixed size: CSS sets the width.
    head, rest = text.split(">", 1)
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    return f'{head} class="plot-svg" role="img" aria-label="{salt}">{rest}'


def _figure(ncols: int = 1, width: float = 6.4, height: float = 3.2) -> tuple[Any, list[Any]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols if ncols > 1 else width, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0].tolist()
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
    return fig, axes


def _integer_x(ax: Any, iterations: list[int] | None = None) -> None:
    """Whole iteration numbers on the x axis; a short run gets one tick per iteration and half an
    iteration of room on each side (matplotlib would widen a single point to +-0.05)."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if iterations:
        lo, hi = min(iterations), max(iterations)
        ax.set_xlim(lo - 0.5, hi + 0.5)
        if hi - lo <= 12:
            ax.set_xticks(range(lo, hi + 1))


#: Figures of the environments played: an iteration that played none has no value (its row's
#: placeholder 0 is not drawn).
PLAY_KEYS = frozenset({"mean_regret", "agent_success_unhinted", "agent_success_hinted"})


def _series(metrics: list[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    xs, ys = [], []
    for row in metrics:
        if key in PLAY_KEYS and nothing_played(row):
            continue
        x, y = as_number(row.get("iteration")), as_number(row.get(key))
        if x is not None and y is not None:
            xs.append(int(x))
            ys.append(y)
    return xs, ys


def _lines(metrics: list[dict[str, Any]], keys: dict[str, str], ylabel: str,
           ylim: tuple[float, float] | None = None) -> Any:
    fig, (ax,) = _figure()
    drawn, seen = 0, []
    for (key, label), colour in zip(keys.items(), PALETTE):
        xs, ys = _series(metrics, key)
        if xs:
            ax.plot(xs, ys, marker="o", label=label, color=colour)
            drawn += 1
            seen.extend(xs)
    ax.set_xlabel("iteration")
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    _integer_x(ax, seen)
    if drawn:
        ax.legend(loc="best", fontsize="small", frameon=False)
    return fig


def _stacked(metrics: list[dict[str, Any]], field: str, ylabel: str,
             colours: dict[str, str] | None = None) -> Any:
    """Stacked bars per iteration of the ``{name: number}`` mapping ``row[field]``."""
    fig, (ax,) = _figure()
    table: dict[str, dict[int, float]] = defaultdict(dict)
    iterations: list[int] = []
    for row in metrics:
        x, parts = as_number(row.get("iteration")), row.get(field)
        if x is None or not isinstance(parts, dict):
            continue
        iterations.append(int(x))
        for name, value in parts.items():
            number = as_number(value)
            if number is not None:
                table[str(name)][int(x)] = number
    bottom = {i: 0.0 for i in iterations}
    for index, name in enumerate(table):
        heights = [table[name].get(i, 0.0) for i in iterations]
        colour = (colours or {}).get(name, PALETTE[index % len(PALETTE)])
        ax.bar(iterations, heights, bottom=[bottom[i] for i in iterations], label=name,
               color=colour, width=0.7)
        for i, h in zip(iterations, heights):
            bottom[i] += h
    ax.set_xlabel("iteration")
    ax.set_ylabel(ylabel)
    _integer_x(ax, iterations)
    if table:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return fig


#: Keys of the memory's counts by status in ``metrics.jsonl``; a run without any of them gets no
#: such plot.
STATUS_KEYS: tuple[str, ...] = ("frontier_size", "envs_mastered_total", "envs_retired",
                              "envs_replayed")


def _cumulative(metrics: list[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    """Running total of ``row[key]`` per iteration (rows without it add nothing)."""
    xs, ys = _series(metrics, key)
    total, sums = 0.0, []
    for y in ys:
        total += y
        sums.append(total)
    return xs, sums


def _memory_status(metrics: list[dict[str, Any]]) -> Any | None:
    """The memory's counts by status after each iteration (frontier, mastered, and the running
    total of retired or too-hard environments) as lines over the environments replayed per
    iteration as bars; None for runs from before the memory's counts were logged."""
    if not any(key in row for row in metrics for key in STATUS_KEYS):
        return None
    fig, (ax,) = _figure()
    seen: list[int] = []
    xs, ys = _series(metrics, "envs_replayed")
    if xs:
        ax.bar(xs, ys, width=0.6, color="#c9d3e0", label="replayed this iteration")
        seen.extend(xs)
    # Distinct markers, fills and dashes, frontier on top: equal counts overlap.
    lines = (("frontier_size", _series, "frontier", "frontier", "o", "-"),
             ("envs_mastered_total", _series, "mastered", "mastered", "s", "-"),
             ("envs_retired", _cumulative, "retired or too hard (total)", "retired", "^", "--"))
    for order, (key, series, label, status, marker, style) in zip((4, 3, 2), lines):
        xs, ys = series(metrics, key)
        if xs:
            colour = STATUS_COLOURS[status]
            ax.plot(xs, ys, marker=marker, linestyle=style, label=label, zorder=order,
                    color=colour, markersize=5 if marker == "o" else 8,
                    markerfacecolor="white" if marker == "s" else colour)
            seen.extend(xs)
    ax.set_xlabel("iteration")
    ax.set_ylabel("environments")
    ax.yaxis.get_major_locator().set_params(integer=True)
    _integer_x(ax, seen)
    ax.legend(loc="upper left", fontsize="small", frameon=False)
    return fig


def _held_out(metrics: list[dict[str, Any]]) -> Any | None:
    """pass@1 of each eval suite against iteration (the rows' ``eval``); None without any."""
    series = held_out(metrics)
    if not series:
        return None
    fig, (ax,) = _figure()
    seen: list[int] = []
    for (suite, (xs, ys)), colour in zip(series.items(), PALETTE * 4):
        ax.plot(xs, ys, marker="o", label=suite, color=colour)
        seen.extend(xs)
    ax.set_xlabel("iteration")
    ax.set_ylabel("pass@1")
    ax.set_ylim(-0.03, 1.03)
    _integer_x(ax, seen)
    ax.legend(loc="best", fontsize="small", frameon=False)
    return fig


#: Above this many iterations the validity map leaves out the "valid/proposed" cell labels.
MAX_LABELLED_ITERATIONS = 24


def _validity_map(table: dict[str, dict[int, dict[str, int]]], axis_label: str) -> Any | None:
    """Heat-map of the share of valid proposals per name (row) and iteration (column), each cell
    labelled "valid/proposed" while they fit; a cell without proposals stays blank. None when
    ``table`` (from :func:`~plugins.report.rundata.breakdown`) is empty."""
    import numpy as np
    from matplotlib import colormaps

    names = list(table)
    iterations = sorted({i for per in table.values() for i in per})
    if not names or not iterations:
        return None
    shares = np.full((len(names), len(iterations)), np.nan)
    for row, name in enumerate(names):
        for column, iteration in enumerate(iterations):
            counts = table[name].get(iteration)
            if counts and counts["proposed"]:
                shares[row, column] = counts["valid"] / counts["proposed"]
    fig, (ax,) = _figure(height=max(1.8, 0.32 * len(names) + 1.2))
    ax.grid(False)
    mesh = ax.pcolormesh(np.arange(len(iterations) + 1) - 0.5, np.arange(len(names) + 1) - 0.5,
                         np.ma.masked_invalid(shares), cmap=colormaps["RdYlGn"].resampled(10),
                         vmin=0.0, vmax=1.0,
                         edgecolors="white", linewidth=0.5)
    if len(iterations) <= MAX_LABELLED_ITERATIONS:
        for row, name in enumerate(names):
            for column, iteration in enumerate(iterations):
                counts = table[name].get(iteration)
                if counts and counts["proposed"]:
                    share = shares[row, column]
                    ax.text(column, row, f"{counts['valid']}/{counts['proposed']}",
                            ha="center", va="center", fontsize="small",
                            color="white" if share < 0.2 or share > 0.85 else "black")
    step = -(-len(iterations) // 12)  # at most a dozen iteration ticks
    ax.set_xticks(range(0, len(iterations), step), [str(i) for i in iterations[::step]])
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlabel("iteration")
    ax.set_ylabel(axis_label)
    bar = fig.colorbar(mesh, ax=ax, label="valid share", fraction=0.05, pad=0.02)
    bar.solids.set_rasterized(False)  # vector bands, not an embedded bitmap
    return fig


#: One hue per verdict category: ``ok`` is the only green; every refusal kind has a colour of its
#: own (no other green), so a plot of 2 refused and 2 valid proposals never reads as 4 valid.
VERDICT_COLOURS: dict[str, str] = {
    "ok": STATUS_COLOURS["mastered"], "syntax": "#d9534f", "forbidden": "#8b1a1a",
    "interface": "#e08a1e", "runtime_error": "#f2c14e", "timeout": "#8e63c7",
    "memory": "#5b3a8c", "output_limit": "#e377c2", "crash": "#4d4d4d",
    "nondeterministic": "#17becf", "unsolvable": "#3b7dd8", "trivial": "#9ecae1",
    "endless": "#8c564b", "contaminated": "#c49c94", "criteria_at_reset": "#1f3b73",
    "llm_rejected": "#bcbd22", "none": "#b0b0b0",
}
#: Colours for categories a plugin adds (none of them green).
EXTRA_VERDICT_COLOURS = ("#7f7f7f", "#ff9896", "#c5b0d5", "#dbdb8d", "#9edae5", "#f7b6d2")


def _verdict_colours(names: set[str]) -> dict[str, str]:
    colours = dict(VERDICT_COLOURS)
    unknown = sorted(n for n in names if n not in colours)
    for index, name in enumerate(unknown):
        colours[name] = EXTRA_VERDICT_COLOURS[index % len(EXTRA_VERDICT_COLOURS)]
    return colours


def _flat(values: Any, prefix: str = "") -> dict[str, float]:
    """Numeric leaves of a nested mapping as ``a/b`` names."""
    out: dict[str, float] = {}
    if isinstance(values, dict):
        for key, value in values.items():
            if isinstance(value, dict):
                out.update(_flat(value, f"{prefix}{key}/"))
            elif as_number(value) is not None:
                out[f"{prefix}{key}"] = float(value)
    return out


def _train_rank(key: str) -> tuple[int, str]:
    """Losses first, then rewards, then gradient norms, then the rest (alphabetically)."""
    for rank, word in enumerate(("loss", "reward", "grad")):
        if word in key:
            return rank, key
    return 3, key


#: At most this many trainer figures are drawn (a 3 x 3 grid); the rest stay in metrics.jsonl.
MAX_TRAIN_PLOTS = 9


def _train(metrics: list[dict[str, Any]]) -> Any | None:
    """Small multiples of the numeric ``train`` figures the trainer logged."""
    rows = [(as_number(row.get("iteration")), _flat(row.get("train"))) for row in metrics]
    keys = sorted({k for _, train in rows for k in train}, key=_train_rank)[:MAX_TRAIN_PLOTS]
    if not keys:
        return None
    from matplotlib.figure import Figure

    ncols = min(3, len(keys))
    nrows = -(-len(keys) // 3)
    fig = Figure(figsize=(3.2 * ncols, 2.4 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel().tolist()
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    for ax, key, colour in zip(axes, keys, PALETTE * 2):
        points = [(int(x), train[key]) for x, train in rows if x is not None and key in train]
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        ax.plot(xs, ys, marker="o", color=colour)
        ax.set_title(key, fontsize="small")
        ax.grid(True, alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
        _integer_x(ax, xs)
    return fig


def _pipeline(metrics: list[dict[str, Any]]) -> Any | None:
    """Per iteration, the generator's and the trainer's busy and idle seconds (``pipeline`` rows,
    asynchronous training); beside them the oldest sample trained and the mean importance weight
    when the rows have them. ``None`` for a run without pipeline figures."""
    rows = [(int(x), row["pipeline"], _flat(row.get("train"))) for row in metrics
            if isinstance(row.get("pipeline"), dict)
            and (x := as_number(row.get("iteration"))) is not None]
    if not rows:
        return None
    extra = any("staleness_max" in p or "tis_mean_weight" in t for _, p, t in rows)
    fig, axes = _figure(ncols=2 if extra else 1, width=4.8 if extra else 6.4)
    ax = axes[0]
    xs = [x for x, _, _ in rows]
    sides = (("generator", -0.2, PALETTE[:2]), ("trainer", 0.2, PALETTE[2:4]))
    for side, offset, colours in sides:
        busy = [as_number(p.get(f"{side}_busy_seconds")) or 0.0 for _, p, _ in rows]
        idle = [as_number(p.get(f"{side}_idle_seconds")) or 0.0 for _, p, _ in rows]
        where = [x + offset for x in xs]
        ax.bar(where, busy, width=0.38, color=colours[0], label=f"{side} busy")
        ax.bar(where, idle, width=0.38, bottom=busy, color=colours[1], label=f"{side} idle")
    ax.set_xlabel("iteration")
    ax.set_ylabel("seconds")
    _integer_x(ax, xs)
    ax.legend(loc="best", fontsize="small", frameon=False)
    if extra:
        ax = axes[1]
        stale = [(x, as_number(p.get("staleness_max"))) for x, p, _ in rows]
        stale = [(x, y) for x, y in stale if y is not None]
        if stale:
            ax.plot([x for x, _ in stale], [y for _, y in stale], marker="o", color=PALETTE[0],
                    label="staleness max (updates)")
        weights = [(x, t["tis_mean_weight"]) for x, _, t in rows if "tis_mean_weight" in t]
        if weights:
            ax.plot([x for x, _ in weights], [y for _, y in weights], marker="s",
                    color=PALETTE[2], label="mean importance weight")
        ax.set_xlabel("iteration")
        _integer_x(ax, xs)
        ax.legend(loc="best", fontsize="small", frameon=False)
    return fig


def _by_family_iteration(envs: list[EnvView], value: Callable[[EnvView], float | None]
                         ) -> dict[str, tuple[list[int], list[float]]]:
    groups: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for env in envs:
        number = value(env)
        if env.iteration is not None and number is not None:
            groups[env.family][env.iteration].append(number)
    return {family: (sorted(per), [fmean(per[i]) for i in sorted(per)])
            for family, per in sorted(groups.items())}


def _family_curves(envs: list[EnvView]) -> Any:
    fig, axes = _figure(ncols=2, width=3.6, height=3.0)
    for ax, (label, value) in zip(axes, (("mean regret", lambda e: e.regret),
                                         ("mean designer reward", lambda e: e.designer_reward))):
        seen: list[int] = []
        for (family, (xs, ys)), colour in zip(_by_family_iteration(envs, value).items(),
                                              PALETTE * 4):
            ax.plot(xs, ys, marker="o", label=family, color=colour)
            seen.extend(xs)
        ax.set_xlabel("iteration")
        ax.set_title(label, fontsize="medium")
        _integer_x(ax, seen)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        axes[1].legend(handles, labels, loc="best", fontsize="small", frameon=False)
    return fig


def _family_counts(envs: list[EnvView], families: list[str], key: Callable[[EnvView], str],
                   order: tuple[str, ...], colours: dict[str, str]) -> Any:
    """Horizontal stacked bars: environments per family, split by ``key`` (status, verdict)."""
    fig, (ax,) = _figure(height=max(1.6, 0.5 * len(families) + 1.0))
    counts: dict[str, dict[str, int]] = {f: {} for f in families}
    for env in envs:
        name = key(env)
        counts[env.family][name] = counts[env.family].get(name, 0) + 1
    names = [n for n in order if any(counts[f].get(n) for f in families)]
    names += sorted({n for f in families for n in counts[f]} - set(names))
    left = [0] * len(families)
    for index, name in enumerate(names):
        widths = [counts[f].get(name, 0) for f in families]
        ax.barh(families, widths, left=left, label=name.replace("_", " "), height=0.6,
                color=colours.get(name, PALETTE[index % len(PALETTE)]))
        left = [a + b for a, b in zip(left, widths)]
    ax.set_xlabel("environments")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.invert_yaxis()
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return fig


def _family_success(envs: list[EnvView], families: list[str], threshold: float) -> Any:
    fig, (ax,) = _figure()
    width = 0.38
    positions = list(range(len(families)))
    for offset, (label, attr, colour) in zip(
            (-width / 2, width / 2), (("unhinted", "unhinted_rewards", PALETTE[0]),
                                      ("hinted", "hinted_rewards", PALETTE[1]))):
        rates = [success_rate([r for e in envs if e.family == family
                               for r in getattr(e, attr)], threshold) or 0.0
                 for family in families]
        ax.bar([p + offset for p in positions], rates, width=width, label=label, color=colour)
    ax.set_xticks(positions, families)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("episodes fully solved")
    ax.legend(loc="best", fontsize="small", frameon=False)
    return fig


def render_plots(data: RunData) -> list[Plot]:
    """Every plot the run's data allows (none before the first iteration ends)."""
    plots: list[Plot] = []

    def add(plot_id: str, title: str, caption: str, fig: Any, section: str = "run") -> None:
        if fig is not None:
            plots.append(Plot(plot_id, title, caption, _svg(fig, plot_id), section))

    m = data.metrics
    if m:
        add("plot-regret", "Regret and designer reward",
            "Mean regret (hinted minus unhinted reward) of the environments played, and the mean "
            "designer reward of all proposals, per iteration.",
            _lines(m, {"mean_regret": "mean regret",
                       "mean_designer_reward": "mean designer reward"}, "value"))
        add("plot-counts", "Environments per iteration",
            "Proposed, valid, duplicate, played, mastered and too-hard environments.",
            _lines(m, {"envs_proposed": "proposed", "envs_valid": "valid",
                       "envs_duplicate": "duplicate", "envs_played": "played",
                       "envs_mastered": "mastered", "envs_too_hard": "too hard"}, "environments"))
        add("plot-success", "Agent success, hinted vs unhinted",
            "Share of episodes fully solved (reward at least 1) with and without the hint.",
            _lines(m, {"agent_success_unhinted": "unhinted", "agent_success_hinted": "hinted"},
                   "success rate", ylim=(-0.03, 1.03)))
        add("plot-held-out", "Held-out evaluation",
            "pass@1 of each eval suite (eval.suites), played with the policy after the training "
            "of every eval.every-th iteration: the same items each time.", _held_out(m))
        names = {str(n) for row in m if isinstance(row.get("verdicts"), dict)
                 for n in row["verdicts"]}
        add("plot-memory-status", "Memory by status over iterations",
            "Environments on the frontier and mastered in the memory after each iteration, the "
            "running total retired or found too hard, and the environments replayed from the "
            "memory in each iteration (bars).", _memory_status(m))
        add("plot-verdicts", "Validity by verdict category",
            "Final verdict of each proposal per iteration: ok is valid, every other category "
            "names why the sandbox refused the program.",
            _stacked(m, "verdicts", "proposals", _verdict_colours(names)))
        add("plot-phases", "Time per phase",
            "Seconds spent in each phase of the iteration.", _stacked(m, "seconds", "seconds"))
        add("plot-train", "Training", "Numeric figures the trainer reported per iteration.",
            _train(m))
        add("plot-pipeline", "Generator and trainer: busy and idle",
            "Seconds each side worked and waited for the other, per iteration (loop.async_level "
            "overlaps them); beside them the oldest sample trained, in updates, and the mean "
            "truncated importance weight.", _pipeline(m))
        add("plot-skill-validity", "Validity per skill",
            "Share of the designer's fresh proposals that were valid, per skill it was asked "
            "for and iteration; each cell reads valid/proposed, blank when none was proposed.",
            _validity_map(breakdown(m, "skills"), "skill"), "skill")
        add("plot-level-validity", "Validity per level",
            "The same per difficulty level asked for (1 is the easiest).",
            _validity_map(breakdown(m, "levels"), "level"), "skill")
    families = data.families
    if data.envs:
        add("plot-family-curves", "Per family: regret and designer reward",
            "Mean over the environments of each family proposed in each iteration.",
            _family_curves(data.envs), "family")
        add("plot-family-status", "Per family: environments by status",
            "Every environment in the run directory by family and status: rejected ones were "
            "invalid, duplicates were refused before play.",
            _family_counts(data.envs, families, lambda e: e.status, STATUS_ORDER,
                           STATUS_COLOURS), "family")
        verdicts = {str(e.verdict.get("category", "none")) for e in data.envs}
        add("plot-family-verdicts", "Per family: validity by verdict category",
            "Final verdict of every environment in the run directory, by family.",
            _family_counts(data.envs, families,
                           lambda e: str(e.verdict.get("category", "none")), ("ok",),
                           _verdict_colours(verdicts)), "family")
        add("plot-family-success", "Per family: agent success, hinted vs unhinted",
            "Share of all recorded episodes fully solved, per family.",
            _family_success(data.envs, families, data.success_threshold), "family")
    return plots
