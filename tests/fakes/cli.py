"""The checkout's root and the real ``spade`` CLI run in a subprocess, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: The repository root (``tests/fakes/cli.py`` is two folders below it).
ROOT = Path(__file__).resolve().parents[2]
SPADE = [sys.executable, "-m", "spade_core.cli"]


def run_spade(*args: str, timeout: float = 60, env: dict | None = None,
              cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the real ``spade`` CLI in a subprocess (as a user would)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([*SPADE, *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env, cwd=cwd or ROOT)
