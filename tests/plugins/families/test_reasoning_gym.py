"""The optional ``reasoning-gym`` family: real reasoning-gym datasets as environment programs,
run in the real ``process`` sandbox (bubblewrap where available), scored by each dataset's own
``score_answer``; plus its options, static checks, gymnasium wrapper, CLI and a fixed-pool run."""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from pathlib import Path

import pytest

pytest.importorskip("reasoning_gym", reason="the reasoning-gym extra is not installed")

from pydantic import ValidationError  # noqa: E402

from plugins.families import reasoning_gym as rg  # noqa: E402
from plugins.families.reasoning_gym import ReasoningGymFamily  # noqa: E402
from plugins.families.options import ReasoningGymOptions  # noqa: E402
from plugins.families.reasoning_gym_plugin import _reasoning_gym  # noqa: E402
from spade_core.errors import ConfigError, SandboxError  # noqa: E402
from spade_core.validation import validate

#: Light datasets: generated in milliseconds, no network, one exact oracle answer each.
DATASETS = ("basic_arithmetic", "chain_sum", "leg_counting", "spell_backward")
HASHING = json.dumps({"embedder": "hashing"})


def family(**options) -> ReasoningGymFamily:
    return _reasoning_gym(ReasoningGymOptions(**options), None)


def program(name: str, body: str = "", base: str = "ReasoningGymEnv") -> str:
    return f'class {rg.class_name(name)}({base}):\n    dataset = "{name}"\n{body}'


@pytest.fixture(scope="module")
def pool_family() -> ReasoningGymFamily:
    return family(datasets=list(DATASETS))


@pytest.fixture(scope="module")
def sandbox():
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    box = build_sandbox(ProcessSandboxOptions(workers=1))
    yield box
    box.close()


# ---------------------------------------------------------------------------- plugin and options

def test_options_choose_datasets_categories_and_exclusions():
    assert family().dataset_names == rg.DEFAULT_DATASETS
    logic = family(categories=["logic"], exclude=["zebra_puzzles"], max_attempts=2)
    assert "knights_knaves" in logic.dataset_names and "zebra_puzzles" not in logic.dataset_names
    assert {c.max_attempts for c in logic.choices} == {2}
    mixed = family(datasets=["chain_sum", {"name": "leg_counting", "max_attempts": 3,
                                           "config": {"min_animals": 2, "max_animals": 4}}])
    assert mixed.dataset_names == ("chain_sum", "leg_counting")
    assert mixed.choices[1] == rg.DatasetChoice("leg_counting",
                                                {"min_animals": 2, "max_animals": 4}, 3)
    with pytest.raises(ValidationError):
        ReasoningGymOptions(dataset=["chain_sum"])  # extra keys are refused
    with pytest.raises(ValidationError):
        ReasoningGymOptions(max_attempts=0)


@pytest.mark.parametrize("options,message", [
    ({"datasets": ["leg_countin"]}, r"'leg_countin' is not a reasoning-gym dataset; did you "
                                    r"mean leg_counting"),
    ({"datasets": ["no_such_task_at_all"]}, r"valid names include ab, acre, advanced_geometry"),
    ({"categories": ["maths"]}, r"unknown category 'maths'; known: algebra, algorithmic"),
    ({"exclude": ["chain_summ"]}, r"exclude: 'chain_summ' is not a reasoning-gym dataset"),
    ({"datasets": [{"name": "leg_counting", "config": {"animals": 3}}]},
     r"leg_counting: no option 'animals'; its options are min_animals, max_animals"),
    ({"datasets": [{"name": "leg_counting", "config": {"min_animals": 9, "max_animals": 2}}]},
     r"leg_counting: invalid config .*max_animals must be >= min_animals"),
    ({"datasets": [{"name": "chain_sum", "config": {"seed": 3}}]}, r"must not set seed"),
    ({"datasets": ["chain_sum"], "exclude": ["chain_sum"]}, r"no dataset left after exclude"),
])
def test_option_errors_say_what_would_be_right(options, message):
    with pytest.raises(ValidationError, match=message):  # what `spade config check` reports
        ReasoningGymOptions(**options)
    with pytest.raises(ConfigError, match=message):  # building the family directly
        ReasoningGymFamily.select(options.get("datasets"), options.get("categories"),
                                  options.get("exclude"))


def test_missing_library_is_a_config_error_naming_the_extra(monkeypatch):
    from spade_core.components import BuildContext
    from spade_core.plugins import load_plugins

    # A fake library name stands in for an environment without the extra installed.
    monkeypatch.setattr(rg, "LIBRARY", "spade_fake_missing_reasoning_gym")
    extra = r"not installed: pip install 'spade-rl\[reasoning-gym\]'"
    with pytest.raises(ConfigError, match=extra):
        family()
    component = load_plugins().registry.components[("env_family", "reasoning-gym")]
    # Built as a component, it stays a ConfigError (exit status 2) that names the component.
    with pytest.raises(ConfigError, match=r"env family 'reasoning-gym'.*spade-rl\[reasoning-gym\]"):
        component.build(ReasoningGymOptions(), BuildContext())
    # Commands that use "every installed family" leave the unavailable one out.
    from spade_core.program_files import installed_families

    names = set(installed_families())
    assert {"reasoning", "tool-use"} <= names and "reasoning-gym" not in names


# ---------------------------------------------------------------------------- programs

def test_seed_programs_are_one_small_program_per_dataset(pool_family):
    programs = pool_family.seed_programs()
    assert [p.doc_id for p in programs] == [f"reasoning-gym:{n}" for n in DATASETS]
    first = programs[2].source
    assert "class LegCountingEnv(ReasoningGymEnv):" in first and "dataset = 'leg_counting'" in first
    assert "import" not in first and all(p.family == "reasoning-gym" for p in programs)
    configured = family(datasets=[{"name": "leg_counting", "max_attempts": 2,
                                   "config": {"min_animals": 2}}]).seed_programs()[0].source
    assert "config = {'min_animals': 2}" in configured and "max_attempts = 2" in configured
    for p in programs:
        assert pool_family.static_problems(p.source) == [], p.source
    assert rg.class_name("word_sequence_reversal") == "WordSequenceReversalEnv"


@pytest.mark.parametrize("source,message", [
    (program("leg_counting", base=""), r"must subclass ReasoningGymEnv"),
    ("import reasoning_gym\n\n" + program("leg_counting"), r"must not import reasoning_gym"),
    (program("leg_countng"), r"did you mean leg_counting"),
    (program("chain_sum", "    config = {'terms': 3}\n"), r"no option 'terms'; its options are"),
    ("class PlainEnv(ReasoningGymEnv):\n    config = {}\n", r"must set dataset"),
])
def test_static_checks_refuse_wrong_programs(pool_family, source, message):
    problems = pool_family.static_problems(source)
    assert problems and re.search(message, problems[0]), problems


def test_static_checks_pick_this_family_for_its_programs(pool_family):
    from plugins.families.reasoning import ReasoningFamily
    from plugins.families.tool_use import ToolUseFamily
    from spade_core.program_files import choose_family

    families = [ReasoningFamily(), pool_family, ToolUseFamily()]
    chosen, _ = choose_family(pool_family.seed_programs()[0].source, families)
    assert chosen is pool_family
    reasoning_seed = ReasoningFamily().seed_programs()[0].source
    assert choose_family(reasoning_seed, [pool_family])[0] is None


# ---------------------------------------------------------------------------- in the sandbox

def wrong_answer(oracle_action: str) -> str:
    """The oracle's answer with a digit appended: never the answer itself."""
    inner = oracle_action[len("\\boxed{"):-1]
    return "\\boxed{" + inner + "0}"


@pytest.mark.parametrize("name", DATASETS)
def test_dataset_is_deterministic_solvable_and_not_trivial(sandbox, pool_family, name):
    source = program(name)
    with sandbox.open(source, family=pool_family) as a, \
            sandbox.open(source, family=pool_family) as b:
        first, info = a.reset(11)
        assert b.reset(11)[0] == first and a.solution() == b.solution()
        assert info == {"dataset": name, "seed": 11, "attempts_left": 1}
        assert "\\boxed{" in first  # the answer format is stated
        assert a.reset(12)[0] != first
    with sandbox.open(source, family=pool_family) as session:
        for seed in (1, 2, 3):
            session.reset(seed)
            oracle = session.solution()
            actions = pool_family.solution_actions(oracle)
            assert actions == [oracle] and oracle.startswith("\\boxed{")
            result = session.step(actions[0])
            assert (result.reward, result.terminated, result.info["score"]) == (1.0, True, 1.0)
            session.reset(seed)
            wrong = session.step(wrong_answer(oracle))
            assert 0.0 <= wrong.reward < 1.0 and wrong.terminated
            for junk in pool_family.probe_actions():
                session.reset(seed)
                assert session.step(junk).reward < 1.0, junk


def test_sandbox_check_and_a_512_mb_worker_accept_the_seed_programs(sandbox, pool_family):
    sources = [p.source for p in pool_family.seed_programs()]
    verdicts = validate(sandbox, sources, family=pool_family)
    assert [(v.valid, v.category) for v in verdicts] == [(True, "ok")] * len(sources), verdicts
    assert all(v.details["solution"]["reward"] == 1.0 for v in verdicts)
    # The fork server holds reasoning-gym, numpy and sympy (about 270 MB of address space), so
    # workers fit well inside the default RLIMIT_AS of 1024 MB; half of it is enough.
    small = dataclasses.replace(sandbox.limits, memory_mb=512)
    for source in sources:
        with sandbox.open(source, family=pool_family, limits=small) as session:
            session.reset(3)
            assert session.step(session.solution()).reward == 1.0


@pytest.mark.parametrize("source", [
    "import reasoning_gym\n\n" + program("leg_counting"),
    "from reasoning_gym.factory import DATASETS\n\n" + program("leg_counting"),
])
def test_programs_cannot_import_the_library(sandbox, pool_family, source):
    with pytest.raises(SandboxError) as caught:
        sandbox.open(source, family=pool_family)
    assert caught.value.verdict.category == "forbidden"
    assert "reasoning_gym" in caught.value.verdict.message


def test_programs_cannot_reach_the_library_through_the_base_class(sandbox, pool_family):
    sneaky = program("leg_counting", (
        "    def solution(self):\n"
        "        table = getattr(ReasoningGymEnv.step, '__glo' + 'bals__')['_EPISODES']\n"
        "        return str(table)\n"))
    with sandbox.open(sneaky, family=pool_family) as session:
        session.reset(1)
        with pytest.raises(SandboxError) as caught:
            session.solution()
    assert caught.value.verdict.category == "forbidden"
    private = program("leg_counting", (
        "    def solution(self):\n"
        "        return sorted(n for n in dir(self) if n.startswith('_') and not "
        "n.startswith('__'))\n"))
    with sandbox.open(private, family=pool_family) as session:
        session.reset(1)
        assert session.solution() == []  # nothing of the library hangs on the instance


def test_bad_program_attributes_fail_at_load_with_a_clear_message(sandbox, pool_family):
    bad = program("chain_sum", "    config = {'min_terms': 5, 'max_terms': 2, 'size': 3}\n")
    with pytest.raises(SandboxError) as caught:
        sandbox.open(bad, family=pool_family)
    assert caught.value.verdict.category == "runtime_error"
    assert "must not set size" in caught.value.verdict.message


def test_options_that_name_files_are_refused_in_programs(sandbox, pool_family):
    # spell_backward reads its word list from data_file: a program naming a file there would
    # have trusted library code read any file the worker sees.
    hostile = program("spell_backward", "    config = {'data_file': '/etc/passwd'}\n")
    [problem] = pool_family.static_problems(hostile)
    assert "must not set data_file" in problem
    computed = program("spell_backward", "    config = {'data' + '_file': '/etc/passwd'}\n")
    with pytest.raises(SandboxError) as caught:  # computed config: the worker refuses it too
        sandbox.open(computed, family=pool_family)
    assert caught.value.verdict.category == "runtime_error"
    assert "must not set data_file" in caught.value.verdict.message
    assert "data_file" not in rg.option_names(rg.registry()["spell_backward"][1])
    with pytest.raises(ConfigError, match="must not set data_file"):
        rg.ReasoningGymFamily.select(datasets=[{"name": "spell_backward",
                                                "config": {"data_file": "words.txt"}}])


def test_gymnasium_wrapper_passes_check_env(sandbox, pool_family):
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    from spade_core.gym_env import make_env, register_program

    source = pool_family.seed_programs()[2].source
    env = make_env(source, sandbox=sandbox, family=pool_family)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=".*not having a spec")
        check_env(env.unwrapped)
    env.close()
    register_program("spade-test/LegCounting-v0", source, sandbox_factory=lambda: sandbox,
                     family=pool_family)
    try:
        env = gymnasium.make("spade-test/LegCounting-v0")
        observation, info = env.reset(seed=9)
        assert "legs" in observation and info["seed"] == 9
        with sandbox.open(source, family=pool_family) as session:
            session.reset(9)
            oracle = session.solution()
        _, reward, terminated, _, _ = env.step(oracle)
        assert (reward, terminated) == (1.0, True)
        env.close()
    finally:
        gymnasium.registry.pop("spade-test/LegCounting-v0", None)


def test_math_verify_imports_in_the_process_sandbox(sandbox):
    """The reasoning family's ``family.modules`` (SPADE games' ``from math_verify import parse,
    verify``) is honoured by the process sandbox."""
    from plugins.families.reasoning import ReasoningFamily

    reasoning = ReasoningFamily()
    seed = next(p for p in reasoning.seed_programs() if p.description.startswith("fraction_sum"))
    assert "from math_verify import parse, verify" in seed.source
    with sandbox.open(seed.source, family=reasoning) as session:
        session.reset(4)
        actions = reasoning.solution_actions(session.solution())
        result = session.step(actions[0])
        assert (result.reward, result.terminated) == (1.0, True)


# ---------------------------------------------------------------------------- CLI and fixed pool

@pytest.fixture(scope="module")
def imported_pool(tmp_path_factory):
    """``spade seeds`` writes the pool, ``spade envs import`` stores it in a run's memory."""
    from fakes.cli import run_spade

    root = tmp_path_factory.mktemp("rg")
    folder = root / "pool"
    options = json.dumps({"datasets": ["chain_sum", {"name": "leg_counting",
                                                     "config": {"max_animals": 4}}]})
    written = run_spade("seeds", "reasoning-gym", "--options", options, "--out", str(folder),
                        timeout=120)
    assert written.returncode == 0, written.stderr
    run_dir = root / "imported"
    result = run_spade("envs", "import", str(folder), "--family", "reasoning-gym", "--run-dir",
                       str(run_dir), "--memory-options", HASHING, "--workers", "1", "--json",
                       timeout=180)
    return folder, run_dir, result


@pytest.mark.slow
def test_seeds_and_envs_import_make_a_fixed_pool(imported_pool):
    from fakes.cli import run_spade

    folder, run_dir, result = imported_pool
    assert sorted(p.name for p in folder.glob("*.py")) == ["chain_sum.py", "leg_counting.py"]
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["family"], r["valid"], r["status"]) for r in rows] == \
        [("reasoning-gym", True, "frontier")] * 2
    stats = json.loads(run_spade("memory", "stats", str(run_dir), "--json").stdout)
    assert stats["by_status"]["frontier"] == 2
    checked = run_spade("check-env", "--family", "reasoning-gym", "--workers", "1", "--json",
                        str(folder / "leg_counting.py"), timeout=120)
    assert checked.returncode == 0 and json.loads(checked.stdout)["valid"] is True, checked.stderr
    again = run_spade("seeds", "reasoning-gym", "--options", '{"datasets": ["chain_sum"]}',
                      "--out", str(folder))
    assert again.returncode == 0 and "exists, kept" in again.stderr
    bad = run_spade("seeds", "reasoning-gym", "--options", '{"datasets": ["chain_sums"]}',
                    "--out", str(folder))
    assert bad.returncode == 2 and "did you mean chain_sum" in bad.stderr
    jsonl = folder.parent / "reasoning.jsonl"  # any family's seeds, as one JSONL
    assert run_spade("seeds", "reasoning", "--out", str(jsonl)).returncode == 0
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    from plugins.families.reasoning import ReasoningFamily

    assert len(rows) == len(ReasoningFamily().seed_programs())
    assert {r["family"] for r in rows} == {"reasoning"}
    assert all(r["code"].lstrip().startswith('"""') for r in rows)
    assert run_spade("seeds", "reasoning", "--out", str(jsonl)).returncode == 2  # no --force


@pytest.mark.slow
def test_fixed_pool_run_plays_the_imported_environments(imported_pool, tmp_path):
    import envmemory.plugin as memory_plugin
    import plugins.designer.plugin as designer_plugin
    import plugins.difficulty_estimators as estimators_plugin
    import plugins.families.reasoning_gym_plugin as family_plugin
    import plugins.trainers.plugin as trainers_plugin
    import sandbox.plugin as sandbox_plugin
    from envmemory.store import RecordStore
    from fakes.selfplay import FAKE_RUN_CONFIG, FakeSelfPlayPlugin
    from spade_core.config.load import resolve_config
    from spade_core.selfplay.run_loop import run
    from spade_core.testing import load_test_plugins

    _, pool_dir, _ = imported_pool
    loaded = load_test_plugins(FakeSelfPlayPlugin(), family_plugin, sandbox_plugin,
                               memory_plugin, designer_plugin, estimators_plugin, trainers_plugin)
    data = dict(FAKE_RUN_CONFIG)
    data.update({
        "run": {"name": "rg", "iterations": 2, "dir": str(tmp_path / "run")},
        "loop": {"envs_per_iteration": 2, "rollouts_per_env": 2, "max_turns": 1,
                 "mode": "fixed-pool", "pool": str(pool_dir)},
        "families": ["reasoning-gym"],
        "sandbox": {"plugin": "process", "options": {"workers": 1}},
        "memory": {"plugin": "faiss", "options": {"embedder": "hashing", "mastery_rollouts": 4,
                                                  "too_hard_rollouts": 4}},
    })
    resolved = resolve_config(data, loaded.registry, "rg.yaml")
    run_dir = run(resolved, loaded, report=lambda message: None)
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [(r["mode"], r["envs_played"], r["designer_attempts"]) for r in rows] == \
        [("fixed-pool", 2, 0)] * 2
    store = RecordStore(run_dir / "memory", readonly=True)
    try:
        records = list(store.records())
    finally:
        store.close()
    assert len(records) == 2 and {r.family for r in records} == {"reasoning-gym"}
    assert all(r.stats.get("rollouts_unhinted", 0) > 0 for r in records), \
        [r.stats for r in records]


@pytest.mark.slow
def test_imported_pool_plays_through_gymnasium_as_documented(imported_pool, sandbox,
                                                              pool_family):
    """The held-out evaluation recipe of docs/environments.md: register the run's memory with
    gymnasium and play each environment over several seeds."""
    import gymnasium

    from spade_core.gym_registry import register_run_memory

    _, run_dir, _ = imported_pool
    ids = register_run_memory(run_dir, sandbox_factory=lambda: sandbox,
                              families={"reasoning-gym": pool_family})
    try:
        assert len(ids) == 2 and all(i.startswith("spade/reasoning-gym-") for i in ids)
        for env_id in ids:
            env = gymnasium.make(env_id)
            rewards = []
            for seed in range(3):
                question, info = env.reset(seed=seed)
                assert info["seed"] == seed and question
                _, reward, terminated, _, _ = env.step("\\boxed{-1}")
                rewards.append(reward)
                assert terminated
            assert all(0.0 <= r < 1.0 for r in rewards)
            env.close()
    finally:
        for env_id in ids:
            gymnasium.registry.pop(env_id, None)
