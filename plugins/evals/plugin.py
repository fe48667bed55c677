"""Registers the built-in eval suites ``reasoning-gym``, ``bfcl`` and ``pool`` and the
``spade eval`` command. Light at import: each factory imports its suite module when built."""

from __future__ import annotations

from typing import Any

from spade_core.commands import from_module
from spade_core.hookspecs import hookimpl


def _reasoning_gym(options: Any, context: Any) -> Any:
    from plugins.evals.reasoning_gym_suite import build

    return build(options, context)


def _bfcl(options: Any, context: Any) -> Any:
    from plugins.evals.bfcl_suite import build

    return build(options, context)


def _pool(options: Any, context: Any) -> Any:
    from plugins.evals.pool_suite import build

    return build(options, context)


@hookimpl
def register_eval_suites(register):  # noqa: ANN001, ANN201 - pluggy hook
    from plugins.evals.options import BfclSuiteOptions, PoolSuiteOptions, ReasoningGymSuiteOptions

    register("reasoning-gym", _reasoning_gym, ReasoningGymSuiteOptions,
             "reasoning-gym hard buckets (math, algorithmic, cognition, logic), own scorers")
    register("bfcl", _bfcl, BfclSuiteOptions,
             "Berkeley Function Calling Leaderboard v4 categories, BFCL's AST checker")
    register("pool", _pool, PoolSuiteOptions,
             "a folder or JSONL of environment programs, played unhinted in the sandbox")


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("eval", *from_module("plugins.evals.command"),
             help="held-out evaluation: pass@1/pass@k per bucket on eval suites")
