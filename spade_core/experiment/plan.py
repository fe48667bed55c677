"""The runs of an experiment: every arm x seed, its run directory under the experiment folder and
its config (the base, the experiment's ``set``, the arm's overrides, then what the experiment fixes
for every run: seed, iterations, held-out evaluation, budget)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spade_core.experiment.spec import ExperimentSpec, arm_overrides

#: Files of an experiment folder.
SPEC_FILE = "experiment.json"
RESULTS_FILE = "results.json"
RUNS_DIR = "runs"
BASELINE_DIR = "baseline"


@dataclass
class PlannedRun:
    """One arm at one seed: an ordinary run directory."""

    arm: str
    seed: int
    dir: Path
    #: The config as YAML would hold it, every override applied.
    config: dict[str, Any] = field(repr=False)
    #: The arm's own overrides and the experiment's ``set`` (recorded in the results).
    overrides: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.arm} seed {self.seed}"


def run_dir(out: Path, arm: str, seed: int) -> Path:
    return out / RUNS_DIR / arm / f"seed-{seed}"


def baseline_file(out: Path, seed: int) -> Path:
    return out / BASELINE_DIR / f"seed-{seed}.json"


def trainer_name(data: dict[str, Any]) -> str | None:
    """The trainer a config (as YAML holds it) selects, ``None`` when it names none."""
    section = data.get("trainer")
    if isinstance(section, dict):
        section = section.get("plugin")
    return section if isinstance(section, str) else None


def fixed_keys(spec: ExperimentSpec, data: dict[str, Any], seed: int, folder: Path,
               name: str) -> None:
    """Set in ``data`` what the experiment fixes for every run (in place)."""
    run = data.setdefault("run", {})
    run.update(seed=seed, dir=str(folder), iterations=spec.budget.iterations, name=name)
    held = spec.heldout
    section = data.get("eval") if isinstance(data.get("eval"), dict) else {}
    section = dict(section)
    section.update(suites=list(held.suites), every=held.every, samples=held.samples,
                   limit=held.limit, max_new_tokens=held.max_new_tokens,
                   options={suite: dict(options) for suite, options in held.suites.items()})
    data["eval"] = section
    if spec.budget.max_samples is not None and trainer_name(data) not in (None, "none"):
        from spade_core.config.load import apply_overrides

        apply_overrides(data, [f"trainer.options.max_samples={spec.budget.max_samples}"],
                        "the experiment's budget")


def plan(spec: ExperimentSpec, base: dict[str, Any], out: Path) -> list[PlannedRun]:
    """Every run, seed by seed and, within a seed, in the order of ``arms`` (the reference arm
    first): the runs of one seed finish before the next seed starts, so a stopped experiment
    has whole seeds to compare."""
    from spade_core.config.load import apply_overrides

    arms = [spec.reference_arm] + [a for a in spec.arms if a != spec.reference_arm]
    runs = []
    for seed in spec.seed_list:
        for arm in arms:
            overrides = list(spec.set) + arm_overrides(spec.arms[arm])
            data = copy.deepcopy(base)
            apply_overrides(data, overrides, f"arms.{arm}")
            folder = run_dir(out, arm, seed)
            fixed_keys(spec, data, seed, folder, f"{spec.name}-{arm}-s{seed}")
            runs.append(PlannedRun(arm, seed, folder, data, overrides))
    return runs


def baseline_config(spec: ExperimentSpec, base: dict[str, Any], seed: int,
                    out: Path) -> dict[str, Any]:
    """The config the untrained model is evaluated with at ``seed``: the base, the experiment's
    ``set`` and the fixed keys, without any arm's overrides (the model and the held-out side are
    the same for every arm)."""
    from spade_core.config.load import apply_overrides

    data = copy.deepcopy(base)
    apply_overrides(data, list(spec.set), "set")
    fixed_keys(spec, data, seed, out / BASELINE_DIR, f"{spec.name}-baseline-s{seed}")
    return data
