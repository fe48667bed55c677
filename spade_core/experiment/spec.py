"""The experiment file: a base config, named arms as overrides of it, seeds, a compute budget and
the held-out suites. Validated with pydantic, unknown keys refused (``docs/experiments.md``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

#: Keys the experiment sets on every run itself: an arm or ``set`` may not override them.
RESERVED_KEYS = ("run.seed", "run.dir", "run.iterations", "eval")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class BudgetSpec(Strict):
    """What every arm gets alike: iterations and, for the arms that train, the samples per role
    and iteration (``trainer.options.max_samples``)."""

    iterations: int = Field(ge=1)
    #: ``trainer.options.max_samples`` of every arm whose trainer is not ``none``; ``None``: the
    #: base config's.
    max_samples: int | None = Field(default=None, ge=1)


class HeldoutSpec(Strict):
    """The held-out suites and when they are played: the in-run evaluation (``eval.*``) of every
    run, plus one evaluation of the untrained model per seed (compute 0)."""

    #: Suite name -> its options (as ``eval.options.<suite>``).
    suites: dict[str, dict[str, Any]] = Field(min_length=1)
    #: Evaluate after every ``every``-th iteration (``eval.every``); the last iteration should
    #: be one of them.
    every: int = Field(ge=1)
    limit: int | None = Field(default=None, ge=1)
    samples: int = Field(default=1, ge=1)
    max_new_tokens: int | None = Field(default=None, ge=1)
    #: Evaluate the untrained model once per seed (the curves' point at compute 0).
    baseline: bool = True
    #: What the report draws the held-out curves against, a panel each; ``None``: every compute
    #: measure some arm spent (agent samples, optimiser steps, tokens). The curriculum lab names
    #: ``[iterations, agent_samples]``: its simulated learner generates no real tokens.
    curves_against: list[Literal["iterations", "agent_samples", "designer_samples",
                                 "optimizer_steps", "tokens_total"]] | None = Field(
        default=None, min_length=1)


class RaySpec(Strict):
    """Run the arm x seed runs as Ray tasks on this cluster (``ray.init(address=...)``)."""

    address: str = Field(min_length=1)
    #: CPUs each run's task asks for.
    num_cpus: float = Field(default=1.0, gt=0)
    num_gpus: float = Field(default=0.0, ge=0)


class ExperimentSpec(Strict):
    """One experiment file."""

    name: str = Field(default="experiment", pattern=r"^[A-Za-z0-9._-]+$")
    #: The base config (a path, relative to the working directory or to the experiment file).
    base: str = Field(min_length=1)
    #: Overrides for every arm, in ``--set`` syntax.
    set: list[str] = Field(default_factory=list)
    #: Arm name -> overrides of the base: ``["trainer=none"]`` or ``{trainer: none}``.
    arms: dict[str, list[str] | dict[str, Any]] = Field(min_length=1)
    reference_arm: str
    #: The seeds (``run.seed``), or a count N for seeds 0..N-1.
    seeds: list[int] | int
    budget: BudgetSpec
    heldout: HeldoutSpec
    ray: RaySpec | None = None
    #: Runs at once, each in a local process of its own (``spade experiment --workers``
    #: overrides it); 1: one after another in this process. Not with ``ray``.
    workers: int = Field(default=1, ge=1)

    @field_validator("arms")
    @classmethod
    def _arm_names(cls, arms: dict[str, Any]) -> dict[str, Any]:
        for name in arms:
            if not name or not all(c.isalnum() or c in "._-" for c in name):
                raise ValueError(f"arm name {name!r}: use letters, digits, '.', '_' or '-'")
        return arms

    @field_validator("seeds")
    @classmethod
    def _seed_list(cls, seeds: list[int] | int) -> list[int]:
        if isinstance(seeds, int):
            if seeds < 1:
                raise ValueError("seeds: a count must be at least 1")
            return list(range(seeds))
        if not seeds or len(set(seeds)) != len(seeds):
            raise ValueError("seeds: give at least one seed, each once")
        return list(seeds)

    @model_validator(mode="after")
    def _consistent(self) -> "ExperimentSpec":
        if self.ray is not None and self.workers > 1:
            raise ValueError("workers: runs go to Ray's workers when ray is set; leave out "
                             "one of ray and workers")
        if self.reference_arm not in self.arms:
            raise ValueError(f"reference_arm {self.reference_arm!r} is not one of the arms "
                             f"({', '.join(self.arms)})")
        for where, overrides in [("set", self.set), *((f"arms.{a}", arm_overrides(o))
                                                      for a, o in self.arms.items())]:
            for item in overrides:
                key = item.partition("=")[0].strip()
                if any(key == r or key.startswith(r + ".") for r in RESERVED_KEYS):
                    raise ValueError(f"{where}: {key!r} is set by the experiment itself (seeds, "
                                     "budget.iterations, heldout, the run folders)")
        return self

    @property
    def seed_list(self) -> list[int]:
        """The seeds as a list (``_seed_list`` has already turned a count into one)."""
        return list(self.seeds)  # type: ignore[arg-type]


def arm_overrides(arm: list[str] | dict[str, Any]) -> list[str]:
    """An arm's overrides in ``--set`` syntax (a mapping's values written as JSON, which the
    ``--set`` reader takes as YAML)."""
    if isinstance(arm, list):
        return [str(item) for item in arm]
    return [f"{key}={value if isinstance(value, str) else json.dumps(value)}"
            for key, value in arm.items()]


def load_spec(path: str | Path) -> tuple[ExperimentSpec, Path]:
    """The experiment file at ``path`` validated, and its base config's path. Raises
    :class:`~spade_core.errors.ConfigError` naming every problem with its key."""
    from spade_core.config.load import read_config_file
    from spade_core.errors import ConfigError

    path = Path(path)
    data = read_config_file(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: an experiment file is a mapping (base, arms, reference_arm, "
                          "seeds, budget, heldout); see docs/experiments.md")
    try:
        spec = ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc']) or 'top level'}: {e['msg']}"
                    for e in exc.errors()]
        raise ConfigError(f"{path}: " + "; ".join(problems) + " (docs/experiments.md)") from None
    return spec, base_path(spec, path)


def base_path(spec: ExperimentSpec, experiment: Path) -> Path:
    """The base config: relative to the working directory, else to the experiment file."""
    from spade_core.errors import ConfigError

    base = Path(spec.base).expanduser()
    for candidate in (base, experiment.parent / base):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"{experiment}: base {spec.base!r}: no such config file (relative paths "
                      "are read from the working directory, then from the experiment's folder)")
