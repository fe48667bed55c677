"""The run context handed to run-event hooks and component factories."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RunContext:
    """Where a run lives and what it was configured with."""

    run_dir: Path
    config: dict[str, Any]
    seed: int = 0
    iteration: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
