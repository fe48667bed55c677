"""Registers the built-in environment families, ``reasoning``, ``arithmetic`` and ``tool-use``,
through the ``register_env_families`` hook (their options in ``options.py``). Light at import:
no heavy library is loaded here."""

from __future__ import annotations

from spade_core.hookspecs import hookimpl

from plugins.families.options import ArithmeticOptions, ReasoningOptions, ToolUseOptions
from plugins.families.skills import REASONING_SKILL_SETS, TOOL_USE_SKILLS, select


def _reasoning(options: ReasoningOptions, context):
    from plugins.families.reasoning import ReasoningFamily

    return ReasoningFamily(select(REASONING_SKILL_SETS[options.skill_set], options.skills),
                           skeleton=options.skeleton, levels=options.levels,
                           skills_per_window=options.skills_per_window,
                           difficulty=options.difficulty, action=options.action)


def _arithmetic(options: ArithmeticOptions, context):
    from plugins.families.arithmetic import ArithmeticFamily

    return ArithmeticFamily(options.cells, hint=options.hint)


def _tool_use(options: ToolUseOptions, context):
    from plugins.families.steering import REFERENCE_DOMAINS
    from plugins.families.tool_use import ToolUseFamily

    domains = options.domains or (list(REFERENCE_DOMAINS) if options.domain_set == "reference"
                                  else None)
    return ToolUseFamily(select(TOOL_USE_SKILLS, options.skills), multi_step=options.multi_step,
                         levels=options.levels, task_types=options.task_types,
                         domains=domains, skills_per_window=options.skills_per_window,
                         difficulty=options.difficulty, variant_draw=options.variant_draw,
                         protocol=options.protocol, database=options.database,
                         seed=context.seed)


@hookimpl
def register_env_families(register):
    register("reasoning", _reasoning, ReasoningOptions,
             "single- and multi-turn tasks answered with \\boxed{} (SPADE game format)")
    register("arithmetic", _arithmetic, ArithmeticOptions,
             "numeric questions on a ladder of cells (digits x operation); the designer "
             "chooses the cell, the family writes the program")
    register("tool-use", _tool_use, ToolUseOptions,
             "multi-turn tool calling: subclasses of the injected ToolUseBaseEnv (SPADE format)")
