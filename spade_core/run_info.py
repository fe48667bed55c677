"""What run-event hooks receive as ``run_info`` (``spade_run_start`` and the others in
``hookspecs.py``); component factories receive a :class:`spade_core.components.BuildContext`
instead."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RunInfo:
    """Where a run lives and what it was configured with, as the run-event hooks see it."""

    run_dir: Path
    config: dict[str, Any]
    seed: int = 0
    #: The iteration the run starts at: 0, or the first one played after a resume.
    iteration: int = 0
    #: What plugins share during the run (e.g. ``console``, ``resumed_from``, ``checkpoint``).
    extra: dict[str, Any] = field(default_factory=dict)
