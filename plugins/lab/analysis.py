"""The lab tournament's figures from an experiment folder (``spade experiment
experiments/curriculum-lab.yaml``): per arm, the final held-out score's interquartile mean with a
stratified-bootstrap 95 % interval, the probability of improvement over the random designer and
the fixed pool (rliable's statistics, Agarwal et al. 2021), the share of each kind among the
designs of the last regeneration window (does the signal chase leaky or noisy environments?),
where the mean held-out curve flattens, and the designer's figures: its policy's entropy at the
end, the share of its updates that had a nonzero advantage (none: the lock-in, every design a
refused duplicate) and the duplicates refused per window.

    python -m plugins.lab.analysis runs/experiments/curriculum-lab [--reps 2000] [--json]

Writes ``lab.json`` into the folder and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plugins.lab.learner import KINDS

SUITE = "lab-grid"
_KIND = re.compile(r"^\s*KIND = '(\w+)'\s*$", re.M)


def metrics_rows(run_dir: Path) -> list[dict[str, Any]]:
    """One run's ``metrics.jsonl`` rows (none when it has no file yet)."""
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def final_scores(rows: list[dict[str, Any]]) -> list[tuple[int, float]]:
    """``(iteration, held-out pass@1)`` of every evaluated iteration of one run's rows."""
    return [(int(row["iteration"]), float(row["eval"][SUITE]["pass@1"]))
            for row in rows if (row.get("eval") or {}).get(SUITE) is not None]


def last_window_kinds(run_dir: Path, first_iteration: int) -> dict[str, int]:
    """How many designs of each kind the run proposed from ``first_iteration`` on (fixed-pool
    runs count their pool's environments as drawn)."""
    counts: dict[str, int] = defaultdict(int)
    for path in (run_dir / "envs").glob("*.json"):
        details = json.loads(path.read_text(encoding="utf-8"))
        if int(details.get("iteration", -1)) < first_iteration:
            continue
        source = details.get("designer_completion") or ""
        if not source:
            program = path.with_suffix(".py")
            source = program.read_text(encoding="utf-8") if program.is_file() else ""
        found = _KIND.search(source)
        counts[found.group(1) if found else "other"] += 1
    return dict(counts)


@dataclass(frozen=True)
class DesignerFigures:
    """One run's designer figures: the policy's entropy after the last update (nats; ``None``
    for designers that are not trained), its updates and how many had a nonzero advantage (an
    update whose designs were all refused duplicates has none: the lock-in), and the duplicates
    refused per regeneration window."""

    entropy: float | None
    updates: int
    nonzero_updates: int
    duplicates_per_window: float


def designer_figures(rows: list[dict[str, Any]], iterations: int, interval: int
                     ) -> DesignerFigures:
    """The :class:`DesignerFigures` of one run's ``metrics.jsonl`` rows."""
    trains = [row.get("train") or {} for row in rows]
    entropies = [t["designer_entropy"] for t in trains if "designer_entropy" in t]
    updates = [t for t in trains if t.get("designer_samples")]
    windows = max(1, -(-iterations // max(1, interval)))
    return DesignerFigures(
        entropy=entropies[-1] if entropies else None, updates=len(updates),
        nonzero_updates=sum(1 for t in updates if t.get("designer_nonzero_advantages", 0) > 0),
        duplicates_per_window=sum(int(r.get("envs_duplicate", 0)) for r in rows) / windows)


def flat_from(curve: dict[int, float], tolerance: float = 0.01) -> int | None:
    """The first evaluated iteration after which the curve never rises more than ``tolerance``
    above its value there (where it flattens); ``None`` while it still rises at the end."""
    points = sorted(curve.items())
    for k, (iteration, value) in enumerate(points[:-1]):
        if all(later <= value + tolerance for _, later in points[k + 1:]):
            return iteration
    return None


def regeneration_window(run_dir: Path) -> int:
    """Iterations between the run's designs, from its ``config.resolved.yaml``: the window
    schedule's ``loop.regeneration_interval`` (the schema's default when unset), 1 in the
    frontier schedule (designs every iteration)."""
    from spade_core.config.schema import LoopSection
    from spade_core.config.yaml_safe import load_yaml_text

    path = run_dir / "config.resolved.yaml"
    data = load_yaml_text(path.read_bytes(), str(path)) if path.is_file() else None
    loop = {**((data or {}).get("loop") or {})}
    defaults = LoopSection.model_fields
    schedule = loop.get("schedule", defaults["schedule"].default)
    if schedule != "window":
        return 1
    return int(loop.get("regeneration_interval", defaults["regeneration_interval"].default))


def bootstrap(statistic: Any, samples: list[Any], reps: int, rng: Any) -> list[float]:
    """Percentile 95 % interval of ``statistic(*samples)`` over ``reps`` resamplings of each
    sample's runs with replacement, each sample within itself (rliable's stratified bootstrap
    with one task; rliable's own ``library`` module cannot be imported next to pandas 3, whose
    ``deprecate_kwarg`` its ``arch`` dependency calls the old way)."""
    import numpy as np

    values = [float(statistic(*[x[rng.integers(0, len(x), size=len(x))] for x in samples]))
              for _ in range(reps)]
    return [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))]


def analyse(folder: Path, reps: int = 2000, seed: int = 0) -> dict[str, Any]:
    import numpy as np
    from rliable import metrics

    spec = json.loads((folder / "experiment.json").read_text(encoding="utf-8"))
    iterations = int(spec["spec"]["budget"]["iterations"])
    finals: dict[str, list[float]] = defaultdict(list)
    curves: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    kinds: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    designers: dict[str, list[DesignerFigures]] = defaultdict(list)
    for run in spec["runs"]:
        run_dir = Path(run["dir"])
        rows = metrics_rows(run_dir)
        scores = final_scores(rows)
        if not scores or scores[-1][0] != iterations - 1:
            continue  # not finished
        finals[run["arm"]].append(scores[-1][1])
        for iteration, value in scores:
            curves[run["arm"]][iteration].append(value)
        interval = regeneration_window(run_dir)
        last_window = (iterations - 1) // interval * interval  # the last window's start
        for kind, n in last_window_kinds(run_dir, last_window).items():
            kinds[run["arm"]][kind] += n
        designers[run["arm"]].append(designer_figures(rows, iterations, interval))
    arms = list(finals)
    matrices = {arm: np.asarray(finals[arm], dtype=float).reshape(-1, 1) for arm in arms}
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"iterations": iterations, "reps": reps, "arms": {}}
    for arm in arms:
        total = sum(kinds[arm].values())
        out["arms"][arm] = {
            "seeds": len(finals[arm]), "mean": float(np.mean(finals[arm])),
            "iqm": float(metrics.aggregate_iqm(matrices[arm])),
            "iqm_ci95": bootstrap(metrics.aggregate_iqm, [matrices[arm]], reps, rng),
            # No design in the last window (a fixed pool replaying its environments): none.
            "kind_share": {k: kinds[arm].get(k, 0) / total for k in (*KINDS, "other")
                           if kinds[arm].get(k, 0) or k in KINDS} if total else {},
            "curve": {str(i): float(np.mean(v)) for i, v in sorted(curves[arm].items())},
            "flat_from": flat_from({i: float(np.mean(v)) for i, v in curves[arm].items()}),
            **_designer_summary(designers[arm])}
    for reference in ("random", "fixed-pool"):
        if reference not in matrices:
            continue
        for arm in arms:
            if arm == reference:
                continue
            pair = [matrices[arm], matrices[reference]]
            out["arms"][arm][f"p_improve_over_{reference}"] = {
                "p": float(metrics.probability_of_improvement(*pair)),
                "ci95": bootstrap(metrics.probability_of_improvement, pair, reps, rng)}
    return out


def _designer_summary(runs: list[DesignerFigures]) -> dict[str, float | None]:
    """An arm's designer figures over its seeds: mean final entropy, the share of designer
    updates with a nonzero advantage (pooled), mean duplicates refused per window."""
    entropies = [r.entropy for r in runs if r.entropy is not None]
    updates = sum(r.updates for r in runs)
    return {"designer_entropy": sum(entropies) / len(entropies) if entropies else None,
            "nonzero_update_share": (sum(r.nonzero_updates for r in runs) / updates
                                     if updates else None),
            "duplicates_per_window": (sum(r.duplicates_per_window for r in runs) / len(runs)
                                      if runs else 0.0)}


def markdown(result: dict[str, Any]) -> str:
    rows = ["| arm | seeds | final held-out, IQM [95 % CI] | P(better than random) | "
            "P(better than fixed pool) | last-window designs: ordinary / leaky / noisy | "
            "flat from iteration | designer entropy (nats) | designer updates with an "
            "advantage | duplicates refused per window |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    ordered = sorted(result["arms"].items(), key=lambda kv: -kv[1]["iqm"])
    for arm, a in ordered:
        def prob(ref: str) -> str:
            q = a.get(f"p_improve_over_{ref}")
            return "–" if q is None else f"{q['p']:.2f} [{q['ci95'][0]:.2f}, {q['ci95'][1]:.2f}]"
        share = a["kind_share"]
        rows.append(f"| {arm} | {a['seeds']} | {100 * a['iqm']:.1f} [{100 * a['iqm_ci95'][0]:.1f}, "
                    f"{100 * a['iqm_ci95'][1]:.1f}] | {prob('random')} | {prob('fixed-pool')} | "
                    + (" / ".join(f"{100 * share.get(k, 0.0):.0f} %" for k in KINDS)
                       if share else "no designs")
                    + f" | {'rising' if a['flat_from'] is None else a['flat_from']}"
                    + f" | {_figure(a['designer_entropy'], '{:.2f}')}"
                    + f" | {_figure(a['nonzero_update_share'], '{:.0%}')}"
                    + f" | {a['duplicates_per_window']:.2f} |")
    return "\n".join(rows)


def _figure(value: float | None, form: str) -> str:
    return "–" if value is None else form.format(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plugins.lab.analysis",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = analyse(args.folder, args.reps)
    (args.folder / "lab.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
