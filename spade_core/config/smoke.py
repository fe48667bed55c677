"""``spade run --smoke``: the overrides that shrink a config to one small iteration, consistently.

One iteration with its own window (``loop.regeneration_interval`` 1), few environments, rollouts,
turns and attempts, shorter agent and hint replies, no in-run evaluation, and memory status
rules that one iteration's rollouts can decide (else the config check refuses a one-iteration
run: no environment could ever be mastered). Sizes already smaller stay as they are; the
designer's token budget stays (cut, its programs would all be refused and nothing played). The
user's own ``--set`` overrides are applied after these, so they win.
"""

from __future__ import annotations

import copy
from typing import Any

from spade_core.config.load import _validate_options, apply_overrides
from spade_core.config.schema import SECTION_KINDS, SpadeConfig
from spade_core.interfaces.memory import StatusRolloutOptions

#: Upper bounds of the loop's sizes in a smoke run: ``(key, at most)``.
SMOKE_LIMITS: tuple[tuple[str, int], ...] = (
    ("envs_per_iteration", 2), ("rollouts_per_env", 2), ("max_turns", 2), ("max_attempts", 2),
    ("max_repairs", 0), ("agent_max_tokens", 32), ("hint_max_tokens", 32),
)


def smoke_overrides(data: Any, overrides: list[str], registry: Any, source: str) -> list[str]:
    """``--set`` overrides (``key=value``) that make the config ``data`` (with the user's
    ``overrides`` applied) a smoke run. Problems in the config itself are left to the normal
    check, which runs next with these overrides."""
    effective = copy.deepcopy(data) if isinstance(data, dict) else {}
    apply_overrides(effective, list(overrides), source)
    out = ["run.iterations=1", "loop.regeneration_interval=1"]
    try:
        config = SpadeConfig.model_validate(effective)
    except Exception:  # noqa: BLE001 - the normal check reports it, with every other problem
        return out
    for key, limit in SMOKE_LIMITS:
        if getattr(config.loop, key) > limit:
            out.append(f"loop.{key}={limit}")
    rollouts = min(config.loop.rollouts_per_env, dict(SMOKE_LIMITS)["rollouts_per_env"])
    if config.eval.every:
        out.append("eval.every=0")
    return out + _memory_status_rollouts(config, registry, rollouts)


def _memory_status_rollouts(config: SpadeConfig, registry: Any, rollouts: int) -> list[str]:
    """Memory options that bring both status rules' rollout counts down to ``rollouts`` (one
    iteration's)."""
    try:
        component = registry.resolve(SECTION_KINDS["memory"], config.memory.plugin,
                                     "memory.plugin")
        options = _validate_options("memory.options", component, config.memory.options)
    except Exception:  # noqa: BLE001 - an unknown plugin or bad option: the normal check says
        return []
    if not isinstance(options, StatusRolloutOptions):
        return []
    counts = options.status_rollouts()
    out = []
    for key, size in ((counts.mastery_key, counts.mastery_rollouts),
                      (counts.too_hard_key, counts.too_hard_rollouts)):
        if size > rollouts:
            out.append(f"memory.options.{key}={rollouts}")
    return out
