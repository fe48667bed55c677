"""One environment the designer was asked for (or a stored one played again), carried through
every step of an iteration: what it was asked, what it wrote, the verdicts, the hint, the plays,
the estimate and the designer's reward."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from spade_core.config.schema import LoopSection
from spade_core.interfaces import EnvFamily, EnvRecord
from spade_core.records import (
    DesignTarget,
    Difficulty,
    Document,
    EnvProgram,
    EnvStatus,
    Episode,
    Verdict,
)
from spade_core.selfplay.hint_writer import HintDiagnostics

if TYPE_CHECKING:
    from spade_core.selfplay.built_components import Components


@dataclass
class Proposal:
    """One environment the designer was asked for, through every step it reached."""

    index: int
    family: EnvFamily
    document: Document
    prompt: list[dict[str, str]]
    completions: list[str] = field(default_factory=list)
    attempt_categories: list[str] = field(default_factory=list)
    #: The conversation each attempt was generated from: ``prompt``, or a repair turn's.
    attempt_prompts: list[list[dict[str, str]]] = field(default_factory=list)
    #: Repair turns used: rejected answers sent back with their verdict.
    repairs: int = 0
    #: The LLM validator's verdict on each attempt it judged (``True``: accepted).
    validator_verdicts: list[bool] = field(default_factory=list)
    #: What the designer was asked for: skill, level, variant (from the family's rotation).
    target: DesignTarget = field(default_factory=DesignTarget)
    #: A frontier environment from the memory, played again (no designer sample: its proposal
    #: was rewarded when it was first played).
    replayed: bool = False
    #: Iterations the environment has been played in, this one included (from the memory).
    plays: int = 0
    program: str | None = None
    verdict: Verdict | None = None
    status: str = EnvStatus.REJECTED
    duplicate_of: str | None = None
    similarity: float | None = None
    hint: str = ""
    hint_redacted: bool = False
    #: How the hint fared this iteration (set when hinted episodes were played).
    hint_diagnostics: HintDiagnostics | None = None
    #: The seeded instance's solution as actions (``None``: it has none the family can read).
    solution: list[str] | None = None
    secrets: list[str] = field(default_factory=list)
    first_observation: str = ""
    unhinted: list[Episode] = field(default_factory=list)
    hinted: list[Episode] = field(default_factory=list)
    #: Unhinted plays that raised or timed out, left out of ``unhinted`` (``loop.failed_plays:
    #: drop``, the reference): no win rate, no regret, no agent sample; kept for the counts.
    failed: list[Episode] = field(default_factory=list)
    #: Hinted rewards measured earlier (a window's later iterations play no hinted episodes; the
    #: estimate reuses those of the window's start). ``None``: this iteration's ``hinted``.
    hint_rewards: list[float] | None = None
    conversations: list[list[dict[str, str]]] = field(default_factory=list)
    difficulty: Difficulty | None = None
    designer_reward: float = 0.0

    # -- state changes: every status a proposal takes is set by one of these --------------------

    def reject(self, verdict: Verdict | None = None) -> None:
        """Refused or not played (validation, contamination, a failed first reset); ``verdict``
        says why when it is new."""
        self.status = EnvStatus.REJECTED
        if verdict is not None:
            self.verdict = verdict

    def refuse_as_duplicate(self, of: str, similarity: float) -> None:
        """A valid program the memory already holds as mastered (or near enough to one)."""
        self.status, self.duplicate_of, self.similarity = EnvStatus.DUPLICATE, of, float(similarity)

    def accept(self) -> None:
        """Valid and new: onto the frontier, to be played."""
        self.status = EnvStatus.FRONTIER

    def take_status(self, record: EnvRecord) -> None:
        """After a play: the status the memory gave it and how often it has been played."""
        self.status, self.plays = record.status, len(record.history)

    def retire(self) -> None:
        """Played too long without leaving the frontier (frontier schedule)."""
        self.status = EnvStatus.RETIRED

    # -- what the steps read ----------------------------------------------------------------

    @property
    def played(self) -> bool:
        """Whether it was played this iteration (on the frontier, with unhinted plays, kept or
        dropped as failed): it then has an estimate and its plays go into the memory."""
        return self.status == EnvStatus.FRONTIER and bool(self.unhinted or self.failed)

    @property
    def step_timeouts(self) -> int:
        """Plays this iteration, hinted or not, that the environment's own code timed out."""
        return sum(e.timed_out for e in self.unhinted + self.hinted + self.failed)

    @property
    def env_id(self) -> str:
        return EnvProgram(source=self.program or self.completions[-1], family=self.family.name).id

    def next_prompt(self, c: "Components", loop: LoopSection) -> list[dict[str, str]]:
        """What the next attempt is generated from: a repair turn on the last rejected answer
        while ``loop.max_repairs`` allows one, else the original prompt (a fresh sample)."""
        if not self.completions or self.verdict is None or self.repairs >= loop.max_repairs:
            return self.prompt
        self.repairs += 1
        return c.designer.repair(self.attempt_prompts[-1], self.completions[-1], self.verdict,
                                 self.family)
