"""Designer prompt strategies: how the designer is asked to write an environment."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from spade_core.records import Document

if TYPE_CHECKING:
    from spade_core.interfaces.family import EnvFamily
    from spade_core.interfaces.memory import EnvRecord


@dataclass(frozen=True)
class PromptExamples:
    """Examples the memory supplies: frontier environments to imitate, mastered or too-hard ones to
    avoid."""

    positive: list["EnvRecord"] = field(default_factory=list)
    negative: list["EnvRecord"] = field(default_factory=list)


class PromptStrategy(ABC):
    """Builds the designer's chat messages and extracts the program from its answer."""

    @abstractmethod
    def build(
        self, document: Document, family: "EnvFamily", examples: PromptExamples
    ) -> list[dict[str, str]]:
        """Chat messages (``{"role": ..., "content": ...}``) asking for one environment."""

    @abstractmethod
    def extract(self, completion: str, family: "EnvFamily") -> str | None:
        """The environment program inside the designer's completion, or ``None`` if there is none."""

    def close(self) -> None:
        """Release resources; the default has none."""
