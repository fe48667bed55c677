"""spade_core/experiment/ray_runs.py: an experiment's runs as Ray tasks, here against a stand-in
``ray`` module (the real cluster start takes longer than the whole test): every run submitted,
each finished run reported with its lines, a failed run raised after the others ended, and a
clear error without Ray."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from spade_core.errors import ConfigError
from spade_core.experiment.plan import PlannedRun
from spade_core.experiment.ray_runs import _task, run_on_ray
from spade_core.experiment.spec import RaySpec


class Ref:
    """An object reference: what the task returned or raised."""

    def __init__(self, value, error):
        self.value, self.error = value, error


class FakeRay(types.ModuleType):
    """Runs each remote call at once, in this process; ``wait`` returns them in order."""

    def __init__(self):
        super().__init__("ray")
        self.inits: list[dict] = []

    def init(self, **kwargs):
        self.inits.append(kwargs)

    def remote(self, **resources):
        def wrap(fn):
            return types.SimpleNamespace(remote=lambda *args: self._call(fn, args))
        return wrap

    def _call(self, fn, args):
        try:
            return Ref(fn(*args), None)
        except Exception as exc:  # noqa: BLE001 - raised again by get, as Ray does
            return Ref(None, exc)

    def wait(self, refs, num_returns):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        if ref.error is not None:
            raise ref.error
        return ref.value


def _runs(tmp_path: Path) -> list[PlannedRun]:
    return [PlannedRun(arm=arm, seed=seed, dir=tmp_path / arm / str(seed), config={})
            for arm in ("ref", "good") for seed in (0, 1)]


def test_every_run_is_a_task_and_a_failure_is_raised_after_the_others(tmp_path, monkeypatch):
    ray = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", ray)
    ran, finished, lines = [], [], []

    def execute(run, iterations, plugins, report):
        ran.append((run.arm, run.seed, iterations, plugins, os.getcwd()))
        report(f"iteration of {run.label}")
        if run.arm == "good" and run.seed == 0:
            raise RuntimeError("out of memory")
        return "fresh"

    with pytest.raises(RuntimeError, match="out of memory"):
        run_on_ray(RaySpec(address="auto"), _runs(tmp_path), 2, execute, lines.append,
                   after_run=lambda run, state: finished.append((run.arm, run.seed, state)))
    assert [r[:4] for r in ran] == [("ref", 0, 2, None), ("ref", 1, 2, None),
                                    ("good", 0, 2, None), ("good", 1, 2, None)]
    assert {r[4] for r in ran} == {os.getcwd()}
    assert finished == [("ref", 0, "fresh"), ("ref", 1, "fresh"), ("good", 1, "fresh")]
    assert ray.inits[0]["address"] == "auto"
    assert lines[0] == "spade experiment: 4 runs submitted to Ray at auto"
    assert any("failed: out of memory" in line for line in lines)


def test_a_task_runs_in_the_drivers_folder_and_returns_its_last_lines(tmp_path, monkeypatch):
    monkeypatch.chdir(Path("/"))

    def execute(run, iterations, plugins, report):
        for i in range(30):
            report(f"line {i}")
        return os.getcwd()

    state, lines = _task(execute, _runs(tmp_path)[0], 1, str(tmp_path))
    assert state == str(tmp_path) and lines == [f"line {i}" for i in range(10, 30)]


def test_without_ray_the_error_says_what_to_install_or_leave_out(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigError, match=r"spade-rl\[ray\].*leave out the ray key"):
        run_on_ray(RaySpec(address="auto"), _runs(tmp_path), 1, lambda *a: "done",
                   lambda line: None)
