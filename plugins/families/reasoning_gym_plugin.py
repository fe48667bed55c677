"""Registers the optional ``reasoning-gym`` environment family (extra ``spade-rl[reasoning-gym]``).

Light at import: neither reasoning-gym nor the family module is imported until the family is
built; building it without the library installed is a ``ConfigError`` naming the extra.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from spade_core.hookspecs import hookimpl


class DatasetSpec(BaseModel):
    """One dataset with its own options."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="registered reasoning-gym dataset name, e.g. leg_counting")
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="options of the dataset's config class (not seed or size), e.g. "
                    "{min_animals: 3, max_animals: 8}")
    max_attempts: int | None = Field(default=None, ge=1, le=20,
                                     description="answers per episode (default: the family's)")


class ReasoningGymOptions(BaseModel):
    """Options of the ``reasoning-gym`` family."""

    model_config = ConfigDict(extra="forbid")
    datasets: list[str | DatasetSpec] = Field(
        default_factory=list,
        description="datasets of the pool: names or {name, config, max_attempts}; with no "
                    "datasets and no categories: basic_arithmetic, chain_sum, leg_counting, "
                    "spell_backward")
    categories: list[str] = Field(
        default_factory=list,
        description="add every dataset of these reasoning-gym categories (arithmetic, algebra, "
                    "algorithmic, arc, code, cognition, games, geometry, graphs, induction, "
                    "logic, probability)")
    exclude: list[str] = Field(
        default_factory=list,
        description="datasets to leave out (e.g. those held out for evaluation)")
    max_attempts: int = Field(default=1, ge=1, le=20,
                              description="answers per episode; the last answer's score counts")

    def dataset_specs(self) -> list[Any]:
        """``datasets`` as names and plain ``{name, config, max_attempts}`` dicts."""
        return [d if isinstance(d, str) else d.model_dump() for d in self.datasets]

    @model_validator(mode="after")
    def _known_to_the_library(self) -> "ReasoningGymOptions":
        # Names and configs are checked against the installed library, so `spade config check`
        # catches a misspelt dataset; without the library, building the family names the extra.
        import importlib.util

        from plugins.families import reasoning_gym

        if importlib.util.find_spec(reasoning_gym.LIBRARY) is None:
            return self
        from spade_core.errors import ConfigError

        try:
            reasoning_gym.ReasoningGymFamily.select(self.dataset_specs(), self.categories,
                                                    self.exclude, self.max_attempts)
        except ConfigError as exc:
            raise ValueError(str(exc).removeprefix("families: reasoning-gym: ")) from None
        return self


def _reasoning_gym(options: ReasoningGymOptions, context: Any) -> Any:
    from plugins.families.reasoning_gym import ReasoningGymFamily

    return ReasoningGymFamily.select(options.dataset_specs(), options.categories,
                                     options.exclude, options.max_attempts)


@hookimpl
def register_env_families(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("reasoning-gym", _reasoning_gym, ReasoningGymOptions,
             "reasoning-gym's procedural datasets scored by their own score_answer (extra: "
             "spade-rl[reasoning-gym])")
