"""Refuse a run in which no environment can ever get the rollouts its memory's status rules need.

An environment is played ``loop.rollouts_per_env`` times unhinted per iteration it is played in:
in the window schedule, every iteration of its window (``loop.regeneration_interval``); in the
frontier schedule, again only through replay (a fixed pool's draw included), at most
``loop.replay_max_age`` iterations; never more than ``run.iterations``. When
that is fewer rollouts than both the memory's mastery and too-hard counts, no environment can
ever leave the frontier by its statistics: the curriculum cannot work, so the config is refused.
A fixed pool drawn as the reference draws it (``loop.pool_order: shuffle``) is not checked: it
draws every environment whatever its status, so no status rule decides anything there.
"""

from __future__ import annotations

from typing import Any

from spade_core.config.schema import SpadeConfig
from spade_core.interfaces.memory import StatusRolloutOptions


def most_rollouts(config: SpadeConfig) -> tuple[int, list[str]]:
    """Most unhinted (and hinted) rollouts one environment can get in the run, and the keys
    that bound it."""
    loop, iterations = config.loop, config.run.iterations
    if loop.schedule == "window":  # played in every iteration of its window, never after
        plays = min(iterations, loop.regeneration_interval)
        keys = ["run.iterations" if iterations <= loop.regeneration_interval
                else "loop.regeneration_interval"]
    elif loop.mode == "fixed-pool" or loop.replay_envs > 0:
        plays = min(iterations, loop.replay_max_age)
        keys = ["run.iterations" if iterations <= loop.replay_max_age else "loop.replay_max_age"]
    else:
        plays, keys = 1, ["loop.replay_envs"]
    return plays * loop.rollouts_per_env, ["loop.rollouts_per_env", *keys]


def status_rollout_problems(config: SpadeConfig, memory_options: Any) -> list[str]:
    """A message when no environment of the run can get the rollouts either of the memory's
    status rules needs, so none can ever leave the frontier by its statistics (empty when one
    can, or when the memory declares no rollout counts)."""
    if not isinstance(memory_options, StatusRolloutOptions):
        return []
    if config.loop.mode == "fixed-pool" and config.loop.pool_order == "shuffle":
        return []
    counts = memory_options.status_rollouts()
    rollouts, keys = most_rollouts(config)
    if rollouts >= min(counts.mastery_rollouts, counts.too_hard_rollouts):
        return []
    return [f"memory.options.{counts.mastery_key} and memory.options.{counts.too_hard_key}: the "
            f"status rules read {counts.mastery_rollouts} unhinted and {counts.too_hard_rollouts} "
            f"hinted rollouts, but no environment can get more than {rollouts} of each in this "
            f"run ({', '.join(keys)}), so none could ever become mastered or too hard; raise "
            "those or lower a count"]


#: Backends that generate with the very module a trainer updates in place: generation and
#: training cannot overlap on them (``loop.async_level``).
SHARED_MODULE_BACKENDS = ("transformers",)


def async_problems(config: SpadeConfig, resolved: Any) -> list[str]:
    """A message when ``loop.async_level`` asks for overlap the selected backend cannot give: the
    ``transformers`` backend generates with the module the trainer updates in place, so a
    generation running during an update would read half-updated weights."""
    if config.loop.async_level == 0:
        return []
    backend = resolved.components.get("backend")
    trainer = resolved.components.get("trainer")
    if backend is None or backend.component.name not in SHARED_MODULE_BACKENDS:
        return []
    if trainer is not None and trainer.component.name == "none":
        return []  # nothing is updated: nothing to race with
    return [f"loop.async_level {config.loop.async_level}: backend "
            f"{backend.component.name!r} generates with the module the trainer updates in "
            "place, so generating during an update would read half-written weights; select "
            "backend vllm-server (or vllm; weights pushed after each update, docs/training.md, "
            "\"Asynchronous training\") or set loop.async_level 0"]
