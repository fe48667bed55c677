"""Shared test fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPADE = [sys.executable, "-m", "spade_core.cli"]


def run_spade(*args: str, timeout: float = 60, env: dict | None = None,
              cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the real ``spade`` CLI in a subprocess (as a user would)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([*SPADE, *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env, cwd=cwd or ROOT)


@pytest.fixture
def spade():
    return run_spade


@pytest.fixture(scope="session")
def scoring_sandbox():
    """One real process sandbox (two fork servers) shared by the eval-suite tests, which
    generate and score their items in it."""
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    box = build_sandbox(ProcessSandboxOptions(workers=2))
    yield box
    box.close()
