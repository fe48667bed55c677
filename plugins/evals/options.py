"""Options of the built-in eval suites (pydantic models, light to import: ``spade plugins``
imports them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

REASONING_GYM_BUCKETS = ("math", "algorithmic", "cognition", "logic")
BFCL_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance",
                   "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
                   "live_irrelevance", "multi_turn_base", "multi_turn_miss_func",
                   "multi_turn_miss_param", "multi_turn_long_context")
BFCL_DEFAULT_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance")
Bucket = Literal["math", "algorithmic", "cognition", "logic"]
Category = Literal["simple", "multiple", "parallel", "parallel_multiple", "irrelevance",
                   "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
                   "live_irrelevance", "multi_turn_base", "multi_turn_miss_func",
                   "multi_turn_miss_param", "multi_turn_long_context"]


class ReasoningGymSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    buckets: list[Bucket] = Field(default_factory=lambda: list(REASONING_GYM_BUCKETS),
                               description="buckets to evaluate: " + ", ".join(
                                   REASONING_GYM_BUCKETS))
    datasets: list[str | dict[str, Any]] = Field(default_factory=list, description=(
        "further reasoning-gym datasets, as names or {name, config} mappings, evaluated as "
        "the bucket 'extra' (generated and scored in the sandbox like the others)"))
    overrides: dict[str, dict[str, Any]] = Field(default_factory=dict, description=(
        "hard dataset -> config fields replacing its published hard parameters (appendix A.3 "
        "of arXiv 2505.24760), e.g. {sokoban: {max_w: 12}}"))
    exclude: list[str] = Field(default_factory=list, description=(
        "hard datasets left out of their buckets"))


class BfclSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    categories: list[Category] = Field(default_factory=lambda: list(BFCL_DEFAULT_CATEGORIES),
                                  description="BFCL categories: " + ", ".join(BFCL_CATEGORIES)
                                              + " (multi_turn_* are opt-in)")
    max_steps: int | None = Field(default=None, ge=1, description=(
        "multi-turn: steps with tool calls per user turn before an entry is force-terminated "
        "(None: BFCL's MAXIMUM_STEP_LIMIT, 20)"))


class PoolSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="a folder of .py programs or a .jsonl file of them")
    field: str | None = Field(default=None, description="JSONL field holding the program "
                                                        "(None: the usual ones)")
