"""Options of the built-in eval suites (pydantic models, light to import: ``spade plugins``
imports them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

REASONING_GYM_BUCKETS = ("math", "algorithmic", "cognition", "logic")
BFCL_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance",
                   "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
                   "live_irrelevance")
BFCL_DEFAULT_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance")
Bucket = Literal["math", "algorithmic", "cognition", "logic"]
Category = Literal["simple", "multiple", "parallel", "parallel_multiple", "irrelevance",
                   "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
                   "live_irrelevance"]


class ReasoningGymSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    buckets: list[Bucket] = Field(default_factory=lambda: list(REASONING_GYM_BUCKETS),
                               description="buckets to evaluate: " + ", ".join(
                                   REASONING_GYM_BUCKETS))


class BfclSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    categories: list[Category] = Field(default_factory=lambda: list(BFCL_DEFAULT_CATEGORIES),
                                  description="BFCL categories: " + ", ".join(BFCL_CATEGORIES))


class PoolSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="a folder of .py programs or a .jsonl file of them")
    field: str | None = Field(default=None, description="JSONL field holding the program "
                                                        "(None: the usual ones)")
