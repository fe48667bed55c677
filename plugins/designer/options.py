"""Options of the built-in designer prompt strategies (config section ``designer``):
``full-program`` and ``skeleton``. Light at import: pydantic only."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class FullProgramOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    document_chars: int = Field(default=3000, ge=200, description="grounding text shown")
    example_chars: int = Field(default=1500, ge=0, description="characters per memory example")


class SkeletonOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    document_chars: int = Field(default=1500, ge=200, description="grounding text shown")
    max_value_chars: int = Field(default=2000, ge=1, description="longest value kept per part")
