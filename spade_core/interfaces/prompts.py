"""Designer prompt strategies: how the designer is asked to write an environment."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from spade_core.records import DesignTarget, Document, Verdict

if TYPE_CHECKING:
    from spade_core.interfaces.family import EnvFamily
    from spade_core.records import EnvRecord


@dataclass(frozen=True)
class PromptExamples:
    """Examples the memory supplies: frontier environments to imitate, mastered or too-hard ones to
    avoid."""

    positive: list["EnvRecord"] = field(default_factory=list)
    negative: list["EnvRecord"] = field(default_factory=list)
    #: Show negatives with their code (this project's default), or as one line each naming the
    #: environment, why to avoid it and its win rate (the reference's "Avoid generating ...").
    negative_code: bool = True


#: The empty design target: no skill, level or variant asked for.
NO_TARGET = DesignTarget()


class NoProgram(ValueError):
    """Raised by :meth:`PromptStrategy.extract` (or :meth:`EnvFamily.canonical_slots`) to say *why*
    an answer holds no program (a slot missing, a value outside the run's choices); the loop puts
    the reason into the proposal's verdict, where returning ``None`` gives only "no program"."""


class PromptStrategy(ABC):
    """Builds the designer's chat messages and extracts the program from its answer."""

    @abstractmethod
    def build(self, document: Document, family: "EnvFamily", examples: PromptExamples,
              target: DesignTarget = NO_TARGET) -> list[dict[str, str]]:
        """Chat messages (``{"role": ..., "content": ...}``) asking for one environment aimed
        at ``target`` (a skill, a level, a variant; the empty target asks for any)."""

    @abstractmethod
    def extract(self, completion: str, family: "EnvFamily",
                target: DesignTarget = NO_TARGET) -> str | None:
        """The environment program in an answer to :meth:`build` with ``target`` (whose template
        may depend on the target), or ``None`` if there is none; raise :class:`NoProgram` with a
        reason instead of returning ``None`` where the reason helps the designer's repair turn."""

    def repair(self, messages: list[dict[str, str]], completion: str, verdict: Verdict,
               family: "EnvFamily") -> list[dict[str, str]]:
        """The conversation of a repair turn: the designer's rejected answer goes back to it with
        the verdict (category and message), asking for the whole program again, fixed. The
        default appends the answer and one user message to ``messages``; a strategy whose
        answers have another shape (e.g. skeleton slots) may word the request differently."""
        where = f" (line {verdict.line})" if verdict.line else ""
        return [*messages, {"role": "assistant", "content": completion},
                {"role": "user", "content": (
                    f"Validation rejected that environment: [{verdict.category}] "
                    f"{verdict.message}{where}. Fix exactly this problem and answer again with "
                    "the whole environment, in the same format as before.")}]

    def close(self) -> None:
        """Release resources; the default has none."""
