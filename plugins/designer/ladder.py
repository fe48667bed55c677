"""``ladder``: RLVE's adaptive difficulty as a designer strategy, the baseline a learned designer
must beat. The family's seed programs are the rungs, easiest first; every proposal is the lowest
rung the environment memory has not retired, so the difficulty goes up one rung once the agent's
accuracy over the memory's last ``mastery_rollouts`` plays passes its threshold
(``memory.options``: ``mastery_rollouts``, ``mastery_threshold``), which is RLVE's rule with its
plays and threshold.

The model is still asked (the loop generates a designer answer for every proposal) but its answer
is not read: the rule decides. Train it with ``trainer.options.train_designer: false``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spade_core.interfaces import EnvFamily, PromptExamples, PromptStrategy
from spade_core.interfaces.prompts import NO_TARGET
from spade_core.records import DesignTarget, Document, EnvProgram, EnvStatus

from plugins.designer.options import LadderOptions

#: Memory statuses that take a rung off the ladder: mastered (the rule's step up) and too hard
#: (the memory would refuse it as a duplicate, so the slot would be lost).
RETIRED = (EnvStatus.MASTERED, EnvStatus.TOO_HARD)


class Ladder(PromptStrategy):
    """The lowest rung of the family's seed programs that the memory has not retired."""

    def __init__(self, options: LadderOptions, components: Mapping[str, Any]) -> None:
        self.options = options
        self.components = components

    def build(self, document: Document, family: EnvFamily, examples: PromptExamples,
              target: DesignTarget = NO_TARGET) -> list[dict[str, str]]:
        rung = self.rung(family)
        return [{"role": "user", "content": (
            f"The next environment is rung {rung.description or 'of the ladder'}. "
            "Reply with OK.")}]

    def extract(self, completion: str, family: EnvFamily,
                target: DesignTarget = NO_TARGET) -> str | None:
        return self.rung(family).source

    def rung(self, family: EnvFamily) -> EnvProgram:
        """The rung for the next proposal (the last rung once every one is retired)."""
        rungs = family.seed_programs()
        if not rungs:
            raise ValueError(f"designer ladder: family {family.name!r} has no seed programs to "
                             "use as rungs")
        memory = self.components.get("env_memory")
        for program in rungs:
            record = memory.get(program.id) if memory is not None else None
            if record is None or record.status not in RETIRED:
                return program
        return rungs[-1]
