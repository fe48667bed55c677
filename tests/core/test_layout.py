"""The tests are laid out like the code: the test of product module ``a/b/c.py`` is
``tests/<mirror>/test_c.py``, where the mirror of ``spade_core/selfplay/`` is ``tests/selfplay/``,
of the rest of ``spade_core/`` ``tests/core/``, of ``sandbox/`` and ``envmemory/`` the folder of the
same name, and of ``plugins/<kind>`` ``tests/plugins/<kind>/``. A module whose behaviour another
test file exercises (a command through the CLI, a base class through its implementations) is
listed in :data:`COVERED_ELSEWHERE` with that file, so that either way its test is found from its
path alone. Helpers live in ``tests/fakes/``; no product package holds test-only code."""

from __future__ import annotations

import ast
from pathlib import Path

from fakes.cli import ROOT

PACKAGES = ("spade_core", "plugins", "sandbox", "envmemory")
#: Folders of programs and templates that run in the sandbox or are data, not modules to test.
NOT_MODULES = {"seeds", "preludes", "templates", "data"}

#: Product modules tested by a file other than their mirrored ``test_<name>.py``.
COVERED_ELSEWHERE: dict[str, str] = {
    "spade_core/atomic_files.py": "tests/selfplay/test_checkpoint.py",
    "spade_core/cli/bench_cmd.py": "tests/core/test_commands.py",
    "spade_core/cli/check_env_cmd.py": "tests/sandbox/test_cli.py",
    "spade_core/cli/config_cmd.py": "tests/core/test_cli.py",
    "spade_core/cli/doctor_cmd.py": "tests/core/test_cli.py",
    "spade_core/cli/envs_cmd.py": "tests/plugins/exports/test_envs.py",
    "spade_core/cli/plugins_cmd.py": "tests/core/test_plugins.py",
    "spade_core/cli/run_cmd.py": "tests/core/test_cli.py",
    "spade_core/cli/seeds_cmd.py": "tests/plugins/families/test_reasoning_gym.py",
    "spade_core/components.py": "tests/core/test_contracts.py",
    "spade_core/config/load.py": "tests/core/test_config.py",
    "spade_core/config/resume.py": "tests/selfplay/test_checkpoint.py",
    "spade_core/config/schema.py": "tests/core/test_reachable.py",
    "spade_core/config/yaml_safe.py": "tests/core/test_config.py",
    "spade_core/distributed.py": "tests/plugins/trainers/test_distributed.py",
    "spade_core/errors.py": "tests/core/test_api.py",
    "spade_core/cli/experiment_cmd.py": "tests/core/test_experiment.py",
    "spade_core/experiment/compute.py": "tests/core/test_experiment.py",
    "spade_core/experiment/plan.py": "tests/core/test_experiment.py",
    "spade_core/experiment/ray_runs.py": "tests/core/test_experiment.py",
    "spade_core/experiment/results.py": "tests/core/test_experiment.py",
    "spade_core/experiment/runner.py": "tests/core/test_experiment.py",
    "spade_core/experiment/spec.py": "tests/core/test_experiment.py",
    "spade_core/experiment/stats.py": "tests/core/test_experiment.py",
    "spade_core/eval/checkpoint.py": "tests/core/test_eval_cmd.py",
    "spade_core/eval/evaluate.py": "tests/plugins/evals/test_bfcl_multi_turn.py",
    "spade_core/eval/loop.py": "tests/core/test_eval_loop.py",
    "spade_core/eval/run.py": "tests/core/test_eval_cmd.py",
    "spade_core/eval/scores.py": "tests/plugins/evals/test_suites.py",
    "spade_core/eval/table.py": "tests/plugins/evals/test_suites.py",
    "spade_core/gym_registry.py": "tests/plugins/families/test_import.py",
    "spade_core/hookspecs.py": "tests/core/test_api.py",
    "spade_core/interfaces/backend.py": "tests/plugins/families/test_tool_use.py",
    "spade_core/interfaces/corpus.py": "tests/core/test_contracts.py",
    "spade_core/interfaces/estimator.py": "tests/plugins/estimators/test_estimators.py",
    "spade_core/interfaces/eval_suite.py": "tests/plugins/evals/test_bfcl_multi_turn.py",
    "spade_core/interfaces/export_format.py": "tests/plugins/exports/test_envs.py",
    "spade_core/interfaces/family.py": "tests/plugins/families/test_protocol.py",
    "spade_core/interfaces/members.py": "tests/core/test_architecture.py",
    "spade_core/interfaces/memory.py": "tests/envmemory/test_interface.py",
    "spade_core/interfaces/prompts.py": "tests/plugins/designer/test_strategies.py",
    "spade_core/interfaces/sandbox.py": "tests/sandbox/test_isolation.py",
    "spade_core/interfaces/trainer.py": "tests/core/test_contracts.py",
    "spade_core/program_files.py": "tests/core/test_api.py",
    "spade_core/records.py": "tests/core/test_contracts.py",
    "spade_core/run_info.py": "tests/plugins/console/test_progress.py",
    "spade_core/run_memory.py": "tests/envmemory/test_interface.py",
    "spade_core/sandboxed_scoring.py": "tests/sandbox/test_trusted_text.py",
    "spade_core/selfplay/artifacts.py": "tests/selfplay/test_runner.py",
    "spade_core/selfplay/hints.py": "tests/selfplay/test_runner.py",
    "spade_core/selfplay/iteration.py": "tests/selfplay/test_contamination.py",
    "spade_core/selfplay/metrics.py": "tests/selfplay/test_contamination.py",
    "spade_core/phases.py": "tests/selfplay/test_runner.py",
    "spade_core/selfplay/pool.py": "tests/selfplay/test_checkpoint.py",
    "spade_core/selfplay/rollouts.py": "tests/plugins/families/test_tool_use.py",
    "spade_core/selfplay/samples.py": "tests/selfplay/test_reference_fidelity.py",
    "spade_core/selfplay/sessions.py": "tests/sandbox/test_multi.py",
    "spade_core/testing.py": "tests/core/test_api.py",
    "plugins/backends/bench.py": "tests/plugins/backends/test_transformers_backend.py",
    "plugins/backends/chat_format.py": "tests/plugins/backends/test_transformers_backend.py",
    "plugins/backends/errors.py": "tests/plugins/backends/test_openai_backend.py",
    "plugins/backends/follower.py": "tests/plugins/backends/test_vllm_backend.py",
    "plugins/backends/model_source.py": "tests/plugins/backends/test_cache.py",
    "plugins/backends/options.py": "tests/plugins/backends/test_docs.py",
    "plugins/backends/plugin.py": "tests/plugins/backends/test_openai_backend.py",
    "plugins/backends/vllm_server.py": "tests/plugins/backends/test_vllm_backend.py",
    "plugins/backends/vllm_worker.py": "tests/plugins/backends/test_vllm_backend.py",
    "plugins/console/plugin.py": "tests/plugins/console/test_progress.py",
    "plugins/corpora/base.py": "tests/plugins/corpora/test_jsonl.py",
    "plugins/corpora/options.py": "tests/plugins/corpora/test_bundled.py",
    "plugins/corpora/paths.py": "tests/plugins/corpora/test_bundled.py",
    "plugins/corpora/plugin.py": "tests/plugins/corpora/test_bundled.py",
    "plugins/designer/full_program.py": "tests/plugins/designer/test_strategies.py",
    "plugins/designer/options.py": "tests/plugins/designer/test_strategies.py",
    "plugins/designer/plugin.py": "tests/plugins/designer/test_strategies.py",
    "plugins/designer/prompt_parts.py": "tests/plugins/designer/test_strategies.py",
    "plugins/designer/skeleton.py": "tests/plugins/designer/test_strategies.py",
    "plugins/evals/acebench_checker.py": "tests/plugins/evals/test_acebench_suite.py",
    "plugins/evals/bfcl_checker.py": "tests/plugins/evals/test_suites.py",
    "plugins/evals/bfcl_format.py": "tests/plugins/evals/test_suites.py",
    "plugins/evals/bfcl_languages.py": "tests/plugins/evals/test_suites.py",
    "plugins/evals/bfcl_suite.py": "tests/plugins/evals/test_suites.py",
    "plugins/evals/items.py": "tests/plugins/evals/test_suites.py",
    "plugins/evals/options.py": "tests/plugins/evals/test_suites.py",
    "plugins/evals/episode_steps.py": "tests/plugins/evals/test_bfcl_multi_turn.py",
    "plugins/evals/plugin.py": "tests/plugins/evals/test_bfcl_multi_turn.py",
    "plugins/evals/pool_suite.py": "tests/core/test_eval_cmd.py",
    "plugins/exports/envs_cmd.py": "tests/plugins/exports/test_envs.py",
    "plugins/exports/formats.py": "tests/plugins/exports/test_envs.py",
    "plugins/exports/mcp_bench.py": "tests/plugins/exports/test_mcp_server.py",
    "plugins/exports/model_cmd.py": "tests/plugins/exports/test_model.py",
    "plugins/exports/openenv_env.py": "tests/plugins/exports/test_envs.py",
    "plugins/exports/openenv_export.py": "tests/plugins/exports/test_envs.py",
    "plugins/exports/plugin.py": "tests/plugins/exports/test_envs.py",
    "plugins/exports/runtime.py": "tests/plugins/exports/test_envs.py",
    "plugins/exports/serve_cmd.py": "tests/plugins/exports/test_mcp_server.py",
    "plugins/exports/verifiers_export.py": "tests/plugins/exports/test_envs.py",
    "plugins/families/base.py": "tests/plugins/families/test_answers.py",
    "plugins/families/options.py": "tests/plugins/families/test_protocol.py",
    "plugins/families/plugin.py": "tests/plugins/families/test_protocol.py",
    "plugins/families/program.py": "tests/plugins/families/test_protocol.py",
    "plugins/families/reasoning.py": "tests/plugins/families/test_answers.py",
    "plugins/families/reasoning_gym_plugin.py": "tests/plugins/families/test_reasoning_gym.py",
    "plugins/families/skills.py": "tests/plugins/families/test_steering.py",
    "plugins/families/solutions.py": "tests/plugins/families/test_tool_use.py",
    "plugins/families/text_audit.py": "tests/sandbox/test_trusted_text.py",
    "plugins/loggers/plugin.py": "tests/plugins/loggers/test_loggers.py",
    "plugins/report/envcards.py": "tests/plugins/report/test_build.py",
    "plugins/report/neighbours.py": "tests/plugins/report/test_build.py",
    "plugins/report/plots.py": "tests/plugins/report/test_build.py",
    "plugins/report/plugin.py": "tests/plugins/report/test_build.py",
    "plugins/report/rundata.py": "tests/plugins/report/test_build.py",
    "plugins/trainers/options.py": "tests/plugins/trainers/test_grpo.py",
    "plugins/trainers/plugin.py": "tests/core/test_api.py",
    "plugins/trainers/preflight.py": "tests/plugins/trainers/test_grpo.py",
    "plugins/trainers/samples.py": "tests/plugins/trainers/test_grpo.py",
    "sandbox/batch.py": "tests/sandbox/test_multi.py",
    "sandbox/bench.py": "tests/sandbox/test_multi.py",
    "sandbox/bench_program.py": "tests/sandbox/test_cli.py",
    "sandbox/build.py": "tests/sandbox/test_trusted_text.py",
    "sandbox/executors.py": "tests/sandbox/test_isolation.py",
    "sandbox/guards.py": "tests/sandbox/test_policy.py",
    "sandbox/limits.py": "tests/sandbox/test_multi.py",
    "sandbox/modules.py": "tests/sandbox/test_imports.py",
    "sandbox/options.py": "tests/sandbox/test_ray.py",
    "sandbox/ownership.py": "tests/sandbox/test_isolation.py",
    "sandbox/plugin.py": "tests/sandbox/test_cli.py",
    "sandbox/process_sandbox.py": "tests/sandbox/test_process_session.py",
    "sandbox/protocol.py": "tests/sandbox/test_multi.py",
    "sandbox/ray_bench.py": "tests/sandbox/test_ray.py",
    "sandbox/ray_host.py": "tests/sandbox/test_ray.py",
    "sandbox/ray_sandbox.py": "tests/sandbox/test_ray.py",
    "sandbox/ray_slots.py": "tests/sandbox/test_ray.py",
    "sandbox/replacements.py": "tests/sandbox/test_ray.py",
    "sandbox/replies.py": "tests/sandbox/test_multi.py",
    "sandbox/server.py": "tests/sandbox/test_isolation.py",
    "sandbox/violations.py": "tests/sandbox/test_corpus.py",
    "sandbox/worker.py": "tests/sandbox/test_corpus.py",
    "envmemory/bench.py": "tests/envmemory/test_memory_cmd.py",
    "envmemory/dedupe_eval.py": "tests/envmemory/test_memory_cmd.py",
    "envmemory/embed.py": "tests/envmemory/test_memory.py",
    "envmemory/index.py": "tests/envmemory/test_memory.py",
    "envmemory/mastery.py": "tests/envmemory/test_memory.py",
    "envmemory/options.py": "tests/envmemory/test_durability.py",
    "envmemory/plugin.py": "tests/envmemory/test_interface.py",
    "envmemory/store.py": "tests/envmemory/test_durability.py",
}


def mirror(module: Path) -> Path:
    """The test folder of a product module (a path relative to the root)."""
    top, *rest = module.parts
    if top == "spade_core":
        return Path("tests/selfplay" if rest[0] == "selfplay" else "tests/core")
    if top == "plugins":
        return Path("tests/plugins") / rest[0].removesuffix(".py")
    return Path("tests") / top


def has_logic(path: Path) -> bool:
    """A module that defines a function or a class (not only re-exports and constants)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
               for node in tree.body)


def product_modules() -> list[Path]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if NOT_MODULES & set(relative.parts) or path.name in ("__init__.py", "__main__.py"):
                continue
            if has_logic(path):
                found.append(relative)
    return found


def test_every_module_with_logic_has_a_test_found_from_its_path():
    missing = []
    for module in product_modules():
        named = mirror(module) / f"test_{module.stem}.py"
        if not (ROOT / named).is_file() and str(module) not in COVERED_ELSEWHERE:
            missing.append(f"{module}: add {named} or list it in COVERED_ELSEWHERE")
    assert not missing, "\n".join(missing)


def test_the_covered_elsewhere_table_is_current():
    modules = {str(m) for m in product_modules()}
    stale = [f"{m}: no such module with logic" for m in COVERED_ELSEWHERE if m not in modules]
    stale += [f"{m}: {t} does not exist" for m, t in COVERED_ELSEWHERE.items()
              if not (ROOT / t).is_file()]
    stale += [f"{m}: {mirror(Path(m)) / ('test_' + Path(m).stem + '.py')} exists, unlist it"
              for m in COVERED_ELSEWHERE if (ROOT / mirror(Path(m)) / f"test_{Path(m).stem}.py")
              .is_file()]
    assert not stale, "\n".join(stale)


def test_tests_live_in_the_mirrored_folders_and_helpers_in_fakes():
    allowed = {"core", "selfplay", "sandbox", "envmemory", "plugins", "fakes"}
    stray = [str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("*.py")
             if p.name != "conftest.py"]
    stray += [str(p.relative_to(ROOT)) for p in (ROOT / "tests").iterdir()
              if p.is_dir() and p.name not in allowed and not p.name.startswith((".", "__"))]
    kinds = {p.name for p in (ROOT / "plugins").iterdir()
             if (p.is_dir() and (p / "__init__.py").is_file()) or p.suffix == ".py"}
    kinds = {k.removesuffix(".py") for k in kinds} - {"__init__"}
    stray += [str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "plugins").iterdir()
              if p.is_dir() and p.name not in kinds and not p.name.startswith((".", "__"))]
    assert not stray, stray


def test_no_product_package_holds_test_fakes():
    fakes = [str(p.relative_to(ROOT)) for package in PACKAGES
             for p in (ROOT / package).rglob("*.py")
             if "fake" in p.stem.lower() and not NOT_MODULES & set(p.relative_to(ROOT).parts)]
    assert not fakes, fakes
