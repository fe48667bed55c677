"""SIGTERM during a run: the iteration in progress finishes, a checkpoint is written, the run ends
with a message saying where, and ``--resume`` continues with no iteration lost or repeated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from spade_core.config.load import resolve_config
from spade_core.checkpoint_files import latest_checkpoint, read_state
from spade_core.selfplay.run_loop import run
from spade_core.selfplay.stop import RunStopped, StopRequest

from fakes.cli import ROOT
from fakes.selfplay import FAKE_RUN_CONFIG
from fakes.training import load_training_plugins, training_config


def _rows(run_dir):
    path = run_dir / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_sigterm_stops_cleanly_with_a_checkpoint_and_resume_continues(tmp_path, mode):
    run_dir, iterations = tmp_path / "run", 30
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    args = [sys.executable, str(ROOT / "tests" / "fakes" / "training.py"), str(run_dir),
            str(iterations), "frontier", "--delay=0.1", "--report"]
    child = subprocess.Popen(args + (["--async"] if mode == "async" else []), env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while len(_rows(run_dir)) < 2 and child.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 143, stderr
    assert "SIGTERM received: the run stops after the iteration in progress" in stderr
    done = len(_rows(run_dir))
    assert 2 <= done < iterations
    message = (f"stopped by SIGTERM after {done} iterations: checkpoint iter-{done:06d} is in "
               f"{run_dir / 'checkpoints'}; continue with `spade run --resume {run_dir}`")
    assert message in stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["iterations_completed"] == done
    assert read_state(latest_checkpoint(run_dir))["next_iteration"] == done

    loaded = load_training_plugins()
    sections = {"loop": dict(FAKE_RUN_CONFIG["loop"], async_level=1)} if mode == "async" else {}
    resolved = resolve_config(training_config(run_dir, iterations, **sections), loaded.registry,
                              "t.yaml")
    run(resolved, loaded, report=lambda m: None, resume=run_dir)
    rows = _rows(run_dir)
    assert [r["iteration"] for r in rows] == list(range(iterations))
    assert [r["train"]["updates"] for r in rows] == list(range(1, iterations + 1))


def test_a_second_signal_stops_at_once_and_the_handler_is_put_back():
    before = signal.getsignal(signal.SIGTERM)
    messages = []
    stop = StopRequest()
    stop.install(messages.append)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.requested and "SIGTERM received" in messages[0]
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
    finally:
        stop.uninstall()
    assert signal.getsignal(signal.SIGTERM) is before
    error = stop.stopped(1, ROOT / "runs" / "x")
    assert isinstance(error, RunStopped) and error.exit_code == 143
    assert "after 1 iteration: checkpoint iter-000001" in str(error)
