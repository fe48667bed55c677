"""Live progress bars per phase while an iteration runs, and a table of the latest iterations
each time one ends, on stderr (entry point ``console``).

It implements the run-event hooks only, so it never changes what a run does. It draws on the
rich console in ``run_info.extra["console"]`` when there is one, else on its own stderr console,
which it then puts there for others. ``SPADE_LIVE_TABLE=0`` turns the table off; ``SPADE_PROGRESS``
chooses bars (a terminal), one line per phase (a log file) or nothing (see ``progress.py``).
"""

from __future__ import annotations

import math
import os
from typing import Any

from plugins.console.progress import PhaseBars, PhaseLines, make_progress
from spade_core.hookspecs import hookimpl

#: How many iterations the table shows: the latest and the ones before it, for comparison.
ROWS = 5
#: Columns of every table: (header, metrics key).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("iter", "iteration"), ("prop", "envs_proposed"), ("valid", "envs_valid"),
    ("dup", "envs_duplicate"), ("play", "envs_played"), ("mast", "envs_mastered"),
    ("hard", "envs_too_hard"))
#: The curriculum's columns, shown when the rows have them (runs with replay): environments
#: replayed this iteration, then the memory's frontier and mastered counts after it.
STATUS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("repl", "envs_replayed"), ("front", "frontier_size"), ("mast Σ", "envs_mastered_total"))
#: Figures after the counts.
FIGURE_COLUMNS: tuple[tuple[str, str], ...] = (("regret", "mean_regret"),
                                               ("d.rew", "mean_designer_reward"))
#: Figures of the environments played, "n/a" in an iteration that played none.
PLAY_KEYS = frozenset({"mean_regret", "agent_success_unhinted", "agent_success_hinted"})
#: At most this many skills (or levels) are named in the caption; the rest are counted.
CAPTION_BREAKDOWN = 6
#: Width of this plugin's own console when stderr is not a terminal (a log file, where rich would
#: assume 80 and squeeze the table's status columns) and ``COLUMNS`` does not say.
LOG_WIDTH = 100
ENV_SWITCH = "SPADE_LIVE_TABLE"

_history: dict[str, list[dict[str, Any]]] = {}
_bars: dict[str, PhaseBars | PhaseLines] = {}


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def _key(run_info: Any) -> str:
    return str(getattr(run_info, "run_dir", id(run_info)))


def _num(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "–"
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def _nothing_played(row: dict[str, Any]) -> bool:
    """Whether the row's iteration played no environment (its regret and success are
    placeholders); rows without ``envs_played`` count as played."""
    return "envs_played" in row and not row.get("envs_played")


def _pct(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "–"
    return f"{100 * value:.0f}%"


def _breakdown(row: dict[str, Any], field: str, label: str, prefix: str = "") -> str | None:
    """Caption entry of ``row[field]`` (``skills`` or ``levels``): ``valid/proposed`` per name
    that had fresh proposals, e.g. ``skills: logic 1/2, math 3/4``; None when there is none."""
    parts = row.get(field)
    if not isinstance(parts, dict):
        return None
    entries = []
    for name, counts in parts.items():
        counts = counts if isinstance(counts, dict) else {}
        proposed, valid = counts.get("proposed"), counts.get("valid")
        if isinstance(proposed, int) and not isinstance(proposed, bool) and proposed > 0:
            text = f"{prefix}{name or '(none)'} {_num(valid)}/{proposed}"
            entries.append((str(name), text))
    if not entries:
        return None
    entries.sort(key=lambda e: (not e[0].isdigit(), int(e[0]) if e[0].isdigit() else 0, e[0]))
    shown = [text for _, text in entries[:CAPTION_BREAKDOWN]]
    if len(entries) > CAPTION_BREAKDOWN:
        shown.append(f"+{len(entries) - CAPTION_BREAKDOWN} more")
    return f"{label}: " + ", ".join(shown)


def _memory_caption(rows: list[dict[str, Any]]) -> str | None:
    """The retired environments of the last iteration and of the run so far (the counts by
    status are columns); None for rows from before replay."""
    last = rows[-1]
    if "envs_retired" not in last:
        return None
    so_far = sum(r["envs_retired"] for r in rows if isinstance(r.get("envs_retired"), int))
    return f"retired or too hard {_num(last.get('envs_retired'))} ({so_far} so far)"


def _held_out_caption(rows: list[dict[str, Any]]) -> str | None:
    """pass@1 per suite of the latest in-run evaluation (``eval.every``), e.g. ``held-out
    reasoning-gym 12.5%``, naming its iteration when an earlier row holds it; None without."""
    for row in reversed(rows):
        figures = row.get("eval")
        if not isinstance(figures, dict) or not figures:
            continue
        parts = []
        for suite, result in figures.items():
            score = result.get("pass@1") if isinstance(result, dict) else None
            parts.append(f"{suite} {_pct1(score)}")
        when = "" if row is rows[-1] else f" (iteration {_num(row.get('iteration'))})"
        return f"held-out{when} " + ", ".join(parts)
    return None


def _pct1(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "–"
    return f"{100 * value:.1f}%"


def iteration_table(rows: list[dict[str, Any]], total: int | None = None) -> Any:
    """A rich Table of ``rows`` (metrics of finished iterations, oldest first), the last one in
    bold; the caption names the last iteration's per-skill and per-level validity."""
    from rich import box
    from rich.table import Table

    last = rows[-1]
    title = f"iteration {last.get('iteration', '?')}"
    if total:
        title += f" of {total}"
    # Two spaces between columns and no rules: 75 characters wide without the status columns, so
    # it fits an 80-column terminal; about 95 with them, which fit LOG_WIDTH in a log file.
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False, padding=(0, 1), collapse_padding=True)
    shown = rows[-ROWS:]
    by_status = [(h, k) for h, k in STATUS_COLUMNS if any(k in row for row in shown)]
    columns = (*COLUMNS, *by_status, *FIGURE_COLUMNS)
    for header, _ in columns:
        table.add_column(header, justify="right")
    table.add_column("succ u/h", justify="right")
    table.add_column("secs", justify="right")
    for row in shown:
        seconds = row.get("seconds") if isinstance(row.get("seconds"), dict) else {}
        spent = sum(v for v in seconds.values() if isinstance(v, (int, float)))
        unplayed = _nothing_played(row)
        cells = ["n/a" if unplayed and key in PLAY_KEYS else _num(row.get(key))
                 for _, key in columns]
        cells.append("n/a" if unplayed else f"{_pct(row.get('agent_success_unhinted'))}/"
                     f"{_pct(row.get('agent_success_hinted'))}")
        cells.append(_num(float(spent), 1))
        table.add_row(*cells, style="bold" if row is last else "dim")
    verdicts = last.get("verdicts") if isinstance(last.get("verdicts"), dict) else {}
    seconds = last.get("seconds") if isinstance(last.get("seconds"), dict) else {}
    slowest = sorted(((v, k) for k, v in seconds.items() if isinstance(v, (int, float))),
                     reverse=True)[:3]
    caption = [entry for entry in (_held_out_caption(rows), _memory_caption(rows),
                                   _hints_caption(last),
                                   _breakdown(last, "skills", "skills"),
                                   _breakdown(last, "levels", "levels", prefix="L"))
               if entry]
    if verdicts:
        caption.append("verdicts " + ", ".join(f"{k} {v}" for k, v in verdicts.items()))
    if slowest:
        caption.append("slowest " + ", ".join(f"{k} {v:.1f}s" for v, k in slowest))
    if _nothing_played(last):
        caption.insert(0, f"warning: nothing played in iteration {last.get('iteration', '?')} "
                          f"(valid {_num(last.get('envs_valid'))} of "
                          f"{_num(last.get('envs_proposed'))}): regret and success n/a")
    if caption:
        table.caption = "; ".join(caption)
        table.caption_justify = "left"
    return table


def _hints_caption(row: dict[str, Any]) -> str:
    """How the iteration's hints fared: redacted, hurt (hinted plays worse than unhinted), and
    contradicting the solution's answer of those the family could check; empty without hints."""
    counts = {k: row.get(k) for k in ("hints", "hints_redacted", "hints_hurt", "hints_checked",
                                      "hints_contradict")}
    if not all(isinstance(v, int) for v in counts.values()) or not counts["hints"]:
        return ""
    return (f"hints {counts['hints']}: redacted {counts['hints_redacted']}, hurt "
            f"{counts['hints_hurt']}, contradict {counts['hints_contradict']}/"
            f"{counts['hints_checked']} checked")


def _console(run_info: Any) -> Any:
    from rich.console import Console

    extra = getattr(run_info, "extra", None)
    given = extra.get("console") if isinstance(extra, dict) else None
    if isinstance(given, Console):
        return given
    console = Console(stderr=True)
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console.width = LOG_WIDTH
    if isinstance(extra, dict):
        extra["console"] = console
    return console


def _planned(run_info: Any) -> int | None:
    config = getattr(run_info, "config", None)
    section = config.get("run") if isinstance(config, dict) else None
    total = section.get("iterations") if isinstance(section, dict) else None
    return total if isinstance(total, int) else None


@hookimpl
def spade_run_start(run_info: Any) -> None:
    _history[_key(run_info)] = []
    progress = make_progress(_console(run_info))
    if progress is not None:
        _bars[_key(run_info)] = progress


@hookimpl
def spade_phase_progress(run_info: Any, iteration: int, phase: str, completed: int,
                         total: int | None) -> None:
    bars = _bars.get(_key(run_info))
    if bars is not None:
        bars.update(iteration, phase, completed, total, _planned(run_info))


@hookimpl
def spade_iteration_end(run_info: Any, iteration: int, metrics: dict[str, Any]) -> None:
    bars = _bars.get(_key(run_info))
    if bars is not None:
        bars.stop()
    rows = _history.setdefault(_key(run_info), [])
    rows.append({"iteration": iteration, **metrics})
    if enabled():
        _console(run_info).print(iteration_table(rows, _planned(run_info)))


@hookimpl
def spade_run_end(run_info: Any, status: str, error: str | None) -> None:
    _history.pop(_key(run_info), None)
    bars = _bars.pop(_key(run_info), None)
    if bars is not None:
        bars.stop()
