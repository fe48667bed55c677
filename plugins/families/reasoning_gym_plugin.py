"""Registers the optional ``reasoning-gym`` environment family (extra ``spade-rl[reasoning-gym]``).

Light at import: neither reasoning-gym nor the family module is imported until the family is
built; building it without the library installed is a ``ConfigError`` naming the extra. Its
options are in ``options.py`` with the other families'.
"""

from __future__ import annotations

from typing import Any

from spade_core.hookspecs import hookimpl

from plugins.families.options import ReasoningGymOptions


def _reasoning_gym(options: ReasoningGymOptions, context: Any) -> Any:
    from plugins.families.reasoning_gym import ReasoningGymFamily

    return ReasoningGymFamily.select(options.dataset_specs(), options.categories,
                                     options.exclude, options.max_attempts, options.action)


@hookimpl
def register_env_families(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("reasoning-gym", _reasoning_gym, ReasoningGymOptions,
             "reasoning-gym's procedural datasets scored by their own score_answer (extra: "
             "spade-rl[reasoning-gym])")
