"""Options of the ``faiss`` environment memory (config section ``memory.options``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from envmemory.representation import DEFAULT_REPRESENTATION
from spade_core.interfaces.memory import StatusRollouts, StatusRolloutOptions


class MemoryOptions(BaseModel, StatusRolloutOptions):
    """Where the memory lives, how environments are embedded and compared, and the status rules."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(default="memory", min_length=1,
                      description="memory folder, relative to the run directory unless absolute")
    embedder: str = Field(default="minilm", min_length=1,
                          description="embedder name: minilm, hashing, or one from the "
                                      "spade.embedders entry-point group")
    embedder_options: dict[str, Any] = Field(default_factory=dict,
                                             description="keyword options for the embedder")
    representation: Literal["description", "strings", "task", "code", "normalized_code",
                            "mix"] = Field(default=DEFAULT_REPRESENTATION,
                                           description="text embedded for each environment")
    similarity_threshold: float | None = Field(
        default=None, gt=0.0, le=1.0,
        description="cosine similarity to a mastered environment at or above which a candidate "
                    "is refused (default: the embedder's measured threshold, 0.65 for minilm)")
    structural_match: bool = Field(default=True,
                                   description="also refuse a candidate whose canonical code "
                                               "(names, method order, literals masked) equals a "
                                               "mastered one")
    mastery_threshold: float = Field(default=0.9, gt=0.0, le=1.0,
                                     description="unhinted success rate that makes an env mastered")
    mastery_rollouts: int = Field(default=16, ge=1,
                                  description="unhinted rollouts the mastery rate is taken over")
    too_hard_threshold: float = Field(default=0.05, ge=0.0, lt=1.0,
                                      description="hinted success rate at or below which an env "
                                                  "is too hard")
    too_hard_rollouts: int = Field(default=16, ge=1,
                                   description="hinted rollouts the too-hard rate is taken over")
    frontier_win_low: float = Field(default=0.15, ge=0.0, le=1.0,
                                    description="lowest win rate of a positive example")
    frontier_win_high: float = Field(default=0.85, ge=0.0, le=1.0,
                                     description="highest win rate of a positive example")
    examples: Literal["top-regret", "reference"] = Field(
        default="top-regret",
        description="designer prompt examples: 'top-regret' (the family's frontier environments "
                    "in the win band, highest regret first, and the latest mastered or too-hard "
                    "ones, with code: deterministic); 'reference' (the reference's draw: positives "
                    "at random from the top max(3n, 10) by regret among the same skill's played "
                    "environments in the win band, one negative at random from the same skill's "
                    "with win rate above 0.9 or below 0.1, shown as one line; seeded by the run)")
    switch_size: int = Field(default=10_000, ge=1,
                             description="dedupe index size at which exact search becomes IVF")
    nprobe: int | None = Field(default=None, ge=1,
                               description="IVF lists searched per query (default: enough lists to "
                                           "scan about 2,000 vectors, at least 8)")
    save_every: int = Field(default=1000, ge=1,
                            description="dedupe index additions between saves (at least 10% of "
                                        "the index, so large indexes are not rewritten constantly)")
    synchronous: Literal["normal", "full"] = Field(
        default="normal", description="SQLite synchronous mode: normal survives kill -9; full "
                                      "also survives power loss, slower")
    def status_rollouts(self) -> StatusRollouts:
        """The mastery and too-hard rollout counts, for the config's reachability check."""
        return StatusRollouts(self.mastery_rollouts, self.too_hard_rollouts)

    readonly: bool = Field(
        default=False,
        description="open the memory only to read it: no writer lock (works while a run writes "
                    "it), settings taken from the stored memory, the embedding model loaded only "
                    "for text or program searches; writes are refused. For reports and tools, "
                    "never for a run")


class NoMemoryOptions(BaseModel):
    """The ``none`` memory takes no options."""

    model_config = ConfigDict(extra="forbid")
