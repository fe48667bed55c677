"""Records that cross module boundaries: documents, programs, verdicts, episodes, difficulty.

They are plain dataclasses so that plugins can build them without importing anything heavy, and so
that they serialise to JSON (``dataclasses.asdict``) for run logs and the environment memory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

#: Verdict categories every sandbox reports; ``ok`` is the only valid one.
VERDICT_CATEGORIES: tuple[str, ...] = (
    "ok",
    "syntax",
    "forbidden",
    "interface",
    "runtime_error",
    "timeout",
    "memory",
    "output_limit",
    "crash",
    "nondeterministic",
    "unsolvable",
    "trivial",
    "endless",
)


def program_id(source: str) -> str:
    """Stable id of an environment program: sha256 of its source with line endings and trailing
    whitespace normalised, so that the same program saved twice gets the same id."""
    lines = [line.rstrip() for line in source.replace("\r\n", "\n").split("\n")]
    normalised = "\n".join(lines).strip() + "\n"
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Document:
    """One grounding document from a corpus."""

    id: str
    text: str
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EnvProgram:
    """An environment program: untrusted Python source and what is known about where it came from."""

    source: str
    family: str
    doc_id: str | None = None
    description: str = ""

    @property
    def id(self) -> str:
        return program_id(self.source)


@dataclass(frozen=True)
class StepResult:
    """What one ``step(action)`` returned, already type-checked and size-capped by the sandbox."""

    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """The outcome of validating one program. ``category`` is one of :data:`VERDICT_CATEGORIES`."""

    valid: bool
    category: str
    message: str
    observation: str = ""
    seconds: float = 0.0
    line: int | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Turn:
    """One agent action and what the environment answered."""

    action: str
    observation: str
    reward: float
    terminated: bool = False
    truncated: bool = False


@dataclass
class Episode:
    """One play of an environment by the agent, hinted or not.

    ``reward`` follows the reference definition: the last step's reward clipped to [-1, 1] if the
    episode terminated, else 0.
    """

    env_id: str
    seed: int
    hinted: bool
    first_observation: str
    turns: list[Turn] = field(default_factory=list)
    reward: float = 0.0
    error: str | None = None


@dataclass(frozen=True)
class Difficulty:
    """What a difficulty estimator says about one environment.

    ``figures`` holds named numbers for logs and the memory (e.g. ``regret``, ``win_rate``);
    ``designer_reward`` is what the designer is trained on.
    """

    figures: dict[str, float]
    designer_reward: float
