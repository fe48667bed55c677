"""Registers the built-in designer prompt strategies (their options in ``options.py``)."""

from __future__ import annotations

from spade_core.hookspecs import hookimpl

from plugins.designer.options import FullProgramOptions, LadderOptions, SkeletonOptions


def _full_program(options, context):
    from plugins.designer.full_program import FullProgram

    return FullProgram(options)


def _skeleton(options, context):
    from plugins.designer.skeleton import Skeleton

    return Skeleton(options)


def _ladder(options, context):
    from plugins.designer.ladder import Ladder

    return Ladder(options, context.components)


@hookimpl
def register_prompt_strategies(register):
    register("full-program", _full_program, FullProgramOptions,
             "the designer writes the whole environment class (SPADE style)")
    register("skeleton", _skeleton, SkeletonOptions,
             "the designer fills the marked parts of its family's template")
    register("ladder", _ladder, LadderOptions,
             "RLVE's adaptive difficulty: the family's seed programs as rungs, the lowest one "
             "the memory has not retired")
