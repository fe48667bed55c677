"""The experiment's one JSON file (``results.json``): per suite and bucket, each arm's held-out
score against compute over seeds (the curves), the table at the last evaluation every run reached
(each arm's mean and its difference to the reference arm, paired by seed, with 95 % intervals),
the compute each run spent, and the checks that arms of one seed shared their seeds, first
designs and held-out items and that their compute agrees within one batch."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

from spade_core.experiment.compute import cumulative, largest_step, read_rows
from spade_core.experiment.plan import PlannedRun, baseline_file, trainer_name
from spade_core.experiment.spec import ExperimentSpec
from spade_core.experiment.stats import mean_interval, paired

OVERALL = "overall"


def _summary(run: PlannedRun) -> dict[str, Any]:
    path = run.dir / "summary.json"
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except json.JSONDecodeError:
        return {}


def _stored_seed(run: PlannedRun) -> int | None:
    """``run.seed`` as the run stored it in ``config.resolved.yaml``."""
    from spade_core.config.yaml_safe import load_yaml_text

    path = run.dir / "config.resolved.yaml"
    if not path.is_file():
        return None
    data = load_yaml_text(path.read_bytes(), str(path)) or {}
    return (data.get("run") or {}).get("seed")


def first_designs(run: PlannedRun) -> list[str]:
    """Ids of the environments the run proposed or drew in its first iteration."""
    ids = []
    for file in sorted((run.dir / "envs").glob("*.json")):
        try:
            row = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            continue
        if row.get("iteration") == 0:
            ids.append(row["id"])
    return sorted(ids)


def design_group(config: dict[str, Any]) -> str:
    """What decides a run's first designs: its loop mode and pool draw, designer, generation
    backend, families and corpus. Arms that differ in these (a random designer against a
    learned one, a fixed pool against self-play) are expected to propose different first
    environments; arms that differ only in the estimator or the trainer are not."""
    loop = config.get("loop") or {}
    return json.dumps({"loop": {k: loop.get(k) for k in ("mode", "pool", "pool_order",
                                                         "pool_seed")},
                       **{k: config.get(k) for k in ("designer", "backend", "families",
                                                     "corpus")}},
                      sort_keys=True, default=str)


def _scores(figures: dict[str, Any]) -> dict[str, float]:
    """``{"overall": pass@1, bucket: pass@1}`` of one suite's in-run figures."""
    return {OVERALL: figures["pass@1"], **figures.get("buckets", {})}


def _baseline_scores(path: Path) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Per suite, the untrained model's scores and the digest of its items."""
    from spade_core.eval.loop import items_digest

    payload = json.loads(path.read_text(encoding="utf-8"))
    scores, digests = {}, {}
    for suite in payload["suites"]:
        scores[suite["suite"]] = {OVERALL: suite["overall"]["pass_at_1"],
                                  **{b: v["pass_at_1"] for b, v in suite["buckets"].items()}}
        digests[suite["suite"]] = items_digest([item["id"] for item in suite.get("items", [])])
    return scores, digests


def _run_record(run: PlannedRun) -> dict[str, Any]:
    rows = read_rows(run.dir)
    compute = cumulative(rows)
    summary = _summary(run)
    points = []
    for row, spent in zip(rows, compute):
        if "eval" in row:
            points.append({"iterations": row["iteration"] + 1, "compute": spent,
                           "scores": {s: _scores(f) for s, f in row["eval"].items()},
                           "items_digest": {s: f.get("items_digest")
                                            for s, f in row["eval"].items()},
                           "bucket_items": {s: f.get("bucket_items", {})
                                            for s, f in row["eval"].items()}})
    return {"arm": run.arm, "seed": run.seed, "dir": str(run.dir),
            "status": summary.get("status", "not started" if not rows else "unfinished"),
            "iterations_completed": len(rows), "run_seed": _stored_seed(run),
            "trainer": trainer_name(run.config), "mode": (run.config.get("loop") or {}).get(
                "mode", "selfplay"), "overrides": run.overrides,
            "compute": compute[-1] if compute else {},
            "batch": {"agent_samples": largest_step(rows, "agent_samples"),
                      "optimizer_steps": largest_step(rows, "optimizer_steps")},
            "first_designs": first_designs(run), "design_group": design_group(run.config),
            "points": points}


def _checks(spec: ExperimentSpec, records: list[dict[str, Any]],
            baseline_digests: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Per seed: the arms' run seeds, first designs (among arms of the same
    :func:`design_group`) and held-out items (the untrained model's evaluation included) agree;
    the trained arms' compute agrees within one batch. ``first_designs_differ_as_expected``:
    the first designs agree within each group but differ between groups, as they should."""
    out: dict[str, Any] = {"same_seeds": True, "same_first_designs": True,
                           "first_designs_differ_as_expected": False,
                           "same_heldout_items": True, "budget_agrees": True, "per_seed": {}}
    for seed in spec.seed_list:
        mine = [r for r in records if r["seed"] == seed and r["iterations_completed"]]
        if not mine:
            continue
        seeds_ok = all(r["run_seed"] == seed for r in mine)
        designs: dict[str, list[list[str]]] = {}
        for r in mine:
            designs.setdefault(r["design_group"], []).append(r["first_designs"])
        designs_ok = all(all(d == group[0] for d in group) for group in designs.values())
        expected = designs_ok and len({tuple(r["first_designs"]) for r in mine}) > 1
        digests = {json.dumps(p["items_digest"], sort_keys=True)
                   for r in mine for p in r["points"]}
        if str(seed) in baseline_digests and any(r["points"] for r in mine):
            digests.add(json.dumps(baseline_digests[str(seed)], sort_keys=True))
        items_ok = len(digests) <= 1
        trained = [r for r in mine if r["trainer"] not in (None, "none")
                   and r["iterations_completed"] >= spec.budget.iterations]
        budget: dict[str, Any] = {}
        budget_ok = True
        for key in ("agent_samples", "optimizer_steps"):
            values = [r["compute"].get(key, 0.0) for r in trained]
            batch = max((r["batch"][key] for r in trained), default=0.0)
            spread = (max(values) - min(values)) if values else 0.0
            agrees = spread <= batch
            budget[key] = {"spread": spread, "one_batch": batch, "agrees": agrees}
            budget_ok = budget_ok and agrees
        iterations = {r["iterations_completed"] for r in mine}
        out["per_seed"][str(seed)] = {
            "same_seeds": seeds_ok, "same_first_designs": designs_ok,
            "first_designs_differ_as_expected": expected,
            "same_heldout_items": items_ok, "iterations": sorted(iterations),
            "first_designs": {r["arm"]: r["first_designs"] for r in mine},
            "budget": budget, "budget_agrees": budget_ok}
        out["same_seeds"] &= seeds_ok
        out["same_first_designs"] &= designs_ok
        out["first_designs_differ_as_expected"] |= expected
        out["same_heldout_items"] &= items_ok
        out["budget_agrees"] &= budget_ok
    return out


def _curves(spec: ExperimentSpec, records: list[dict[str, Any]],
            baselines: dict[int, dict[str, dict[str, float]]]) -> dict[str, Any]:
    """``{suite: {bucket: {arm: [point]}}}``; a point: iterations, mean compute over the seeds
    and each seed's score, with the mean and its interval. The untrained model's score is every
    arm's point at iteration 0."""
    curves: dict[str, Any] = {}
    for suite in spec.heldout.suites:
        buckets: list[str] = [OVERALL]
        for r in records:
            for p in r["points"]:
                for b in p["scores"].get(suite, {}):
                    if b not in buckets:
                        buckets.append(b)
        curves[suite] = {}
        for bucket in buckets:
            by_arm: dict[str, list[dict[str, Any]]] = {}
            for arm in spec.arms:
                at: dict[int, dict[str, Any]] = {}
                for seed, scores in baselines.items():
                    if bucket in scores.get(suite, {}):
                        entry = at.setdefault(0, {"seeds": {}, "compute": []})
                        entry["seeds"][seed] = scores[suite][bucket]
                        entry["compute"].append({})
                for r in records:
                    if r["arm"] != arm:
                        continue
                    for p in r["points"]:
                        score = p["scores"].get(suite, {}).get(bucket)
                        if score is None:
                            continue
                        entry = at.setdefault(p["iterations"], {"seeds": {}, "compute": []})
                        entry["seeds"][r["seed"]] = score
                        entry["compute"].append(p["compute"])
                points = []
                for iterations in sorted(at):
                    entry = at[iterations]
                    keys = {k for c in entry["compute"] for k in c}
                    mean_compute = {k: sum(c.get(k, 0.0) for c in entry["compute"])
                                    / len(entry["compute"]) for k in sorted(keys)}
                    points.append({"iterations": iterations, "compute": mean_compute,
                                   "per_seed": {str(s): v for s, v in
                                                sorted(entry["seeds"].items())},
                                   **mean_interval(entry["seeds"])})
                by_arm[arm] = points
            curves[suite][bucket] = by_arm
    return curves


def _table(spec: ExperimentSpec, records: list[dict[str, Any]]) -> dict[str, Any]:
    """At the last evaluation every finished run reached: per suite and bucket, each arm's mean
    over seeds and its paired difference to the reference arm."""
    reached = [max((p["iterations"] for p in r["points"]), default=0) for r in records
               if r["iterations_completed"]]  # a stopped experiment: the runs that started
    at = min(reached) if reached else 0
    table: dict[str, Any] = {"at_iterations": at, "reference_arm": spec.reference_arm,
                             "suites": {}}
    if not at:
        return table
    for suite in spec.heldout.suites:
        scores: dict[str, dict[str, dict[int, float]]] = {}
        for r in records:
            point = next((p for p in r["points"] if p["iterations"] == at), None)
            if point is None:
                continue
            for bucket, value in point["scores"].get(suite, {}).items():
                scores.setdefault(bucket, {}).setdefault(r["arm"], {})[r["seed"]] = value
        table["suites"][suite] = {
            bucket: {"arms": {arm: {"per_seed": {str(s): v for s, v in sorted(v.items())},
                                    **mean_interval(v)} for arm, v in by_arm.items()},
                     "vs_reference": paired(by_arm, spec.reference_arm)}
            for bucket, by_arm in scores.items()}
    return table


def _constant_answer(spec: ExperimentSpec, records: list[dict[str, Any]]) -> dict[str, Any]:
    """For suites bucketed by answer (``bucket: answer``): the score of always giving one answer
    (the largest answer's share of the items), which the table's scores must beat."""
    out = {}
    for suite, options in spec.heldout.suites.items():
        if options.get("bucket") != "answer":
            continue
        counts = next((p["bucket_items"].get(suite) for r in records for p in r["points"]
                       if p["bucket_items"].get(suite)), None)
        if counts:
            out[suite] = {"score": max(counts.values()) / sum(counts.values()),
                          "items_per_answer": counts}
    return out


def build_results(spec: ExperimentSpec, runs: list[PlannedRun], folder: Path,
                  base_file: Path, finished: dict[str, dict[str, Any]] | None = None
                  ) -> dict[str, Any]:
    """The experiment's results from its runs' files. ``finished`` (by run folder): records of
    runs that had completed their budget when last read, which an experiment rewriting its
    results as runs end passes again instead of reading those runs' files each time (a run's
    first designs are read from every ``envs/*.json`` of it)."""
    records = []
    for run in runs:
        record = finished.get(str(run.dir)) if finished is not None else None
        if record is None:
            record = _run_record(run)
            if finished is not None and record["status"] == "completed" \
                    and record["iterations_completed"] >= spec.budget.iterations:
                finished[str(run.dir)] = record
        records.append(record)
    baselines: dict[int, dict[str, dict[str, float]]] = {}
    baseline_digests: dict[str, dict[str, str]] = {}
    for seed in spec.seed_list:
        path = baseline_file(folder, seed)
        if path.is_file():
            baselines[seed], baseline_digests[str(seed)] = _baseline_scores(path)
    checks = _checks(spec, records, baseline_digests)
    return {
        "experiment": spec.name, "base": str(base_file), "reference_arm": spec.reference_arm,
        "seeds": spec.seed_list, "arms": {a: {"overrides": next(
            (r.overrides for r in runs if r.arm == a), [])} for a in spec.arms},
        "budget": spec.budget.model_dump(), "heldout": spec.heldout.model_dump(),
        "complete": all(r["status"] == "completed"
                        and r["iterations_completed"] >= spec.budget.iterations
                        for r in records),
        "table": _table(spec, records),
        "curves": _curves(spec, records, baselines),
        "constant_answer": _constant_answer(spec, records),
        "checks": checks,
        "baseline": {str(s): v for s, v in baselines.items()},
        "runs": records,
        "machine": (f"{platform.machine()}, {os.cpu_count()} cores, Python "
                    f"{platform.python_version()}, load average "
                    f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"),
    }
