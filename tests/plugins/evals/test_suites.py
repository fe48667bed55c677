"""Eval suites scored through their real scorers: a fake backend that answers with the gold
replies scores 1.0 on each suite, one that answers wrongly 0.0, one right on every other item
0.5; plus pass@k, spreading a limit over buckets, and the registration hook."""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from spade_core.components import BuildContext
from spade_core.eval.scores import run_suite
from spade_core.interfaces import EvalSettings, EvalSuite
from spade_core.plugins import load_plugins
from spade_core.testing import check_component, load_builtin_plugins, load_test_plugins

import plugins.evals.plugin as evals_plugin
from fakes.eval_backends import (
    FakeGoldBackend,
    FakeHalfBackend,
    FakeScenarioUser,
    FakeWrongBackend,
)
from fakes.eval_runs import three_ways
from plugins.evals.items import spread
from fakes.cli import ROOT

#: The bfcl suite reads the data of bfcl-eval, installed without its pinned dependencies.
needs_bfcl = pytest.mark.skipif(importlib.util.find_spec("bfcl_eval") is None,
                                reason="pip install --no-deps bfcl-eval==2026.3.23")

SEEDS = ROOT / "plugins" / "families" / "seeds"
SETTINGS = EvalSettings(samples=1, max_new_tokens=16, seed=0, max_turns=12)


@pytest.fixture(autouse=True)
def _sandbox(scoring_sandbox):
    global SANDBOX
    SANDBOX = scoring_sandbox


SANDBOX = None


def _suite(name: str, options: dict | None = None, context: BuildContext | None = None
           ) -> EvalSuite:
    loaded = load_test_plugins(evals_plugin)
    context = context or BuildContext(components={"sandbox": SANDBOX})
    return loaded.registry.build("eval_suite", name, options or {}, "test", context)


def _three_ways(suite: EvalSuite, limit: int) -> tuple[float, ...]:
    return three_ways(suite, limit, SETTINGS)


def test_hook_register_eval_suites():
    assert load_test_plugins(evals_plugin).registry.names("eval_suite") == [
        "acebench", "aime", "bfcl", "gem", "gpqa-diamond", "livecodebench", "pool",
        "reasoning-gym", "tau2"]


def test_installed_plugin_registers_the_suites():
    loaded = load_plugins()
    assert {"aime", "bfcl", "gpqa-diamond", "pool", "reasoning-gym"} <= set(
        loaded.registry.names("eval_suite"))


@pytest.mark.parametrize("name", ["reasoning-gym", "bfcl"])
def test_suites_honour_the_interface(name):
    suite = check_component(load_test_plugins(evals_plugin), "eval_suite", name,
                            context=BuildContext(components={"sandbox": SANDBOX}))
    assert isinstance(suite, EvalSuite)


def test_reasoning_gym_gold_wrong_half():
    assert _three_ways(_suite("reasoning-gym"), 8) == (1.0, 0.0, 0.5)


def test_reasoning_gym_items_cover_every_bucket_and_are_fixed_for_a_seed():
    suite = _suite("reasoning-gym")
    items = suite.items(8, 3)
    assert [i.bucket for i in items[:4]] == ["math", "algorithmic", "cognition", "logic"]
    assert [i.text for i in items] == [i.text for i in _suite("reasoning-gym").items(8, 3)]
    assert [i.text for i in items] != [i.text for i in suite.items(8, 4)]


def test_reasoning_gym_scores_by_the_dataset_scorer():
    suite = _suite("reasoning-gym", {"buckets": ["math"]})
    item = suite.items(1, 0)[0]
    answer = item.gold[0].removeprefix("\\boxed{").removesuffix("}")
    assert suite.score(item, f"Working... so the answer is \\boxed{{{answer}}}") == 1.0
    assert suite.score(item, f"<answer>{answer}</answer>") == 1.0
    assert suite.score(item, "\\boxed{0.123456}") < 1.0


@needs_bfcl
def test_bfcl_gold_wrong_half():
    assert _three_ways(_suite("bfcl"), 10) == (1.0, 0.0, 0.5)


@needs_bfcl
def test_bfcl_checker_rules():
    suite = _suite("bfcl", {"categories": ["simple", "irrelevance", "parallel"]})
    simple, irrelevance, parallel = suite.items(3, 0)
    assert simple.bucket == "simple" and parallel.bucket == "parallel"
    assert simple.tools and simple.tools[0]["function"]["parameters"]["type"] == "object"
    assert suite.score(simple, simple.gold[0]) == 1.0
    assert suite.score(simple, "The area is 25.") == 0.0  # no call
    assert suite.score(irrelevance, "I cannot help with these tools.") == 1.0
    assert suite.score(irrelevance, simple.gold[0].replace(
        simple.tools[0]["function"]["name"], irrelevance.tools[0]["function"]["name"])) == 0.0
    calls = parallel.gold[0].split("\n")
    assert len(calls) > 1
    assert suite.score(parallel, "\n".join(reversed(calls))) == 1.0  # order-free, as BFCL
    assert suite.score(parallel, calls[0]) == 0.0


@needs_bfcl
def test_bfcl_java_and_javascript_gold_wrong_half():
    # Gold writes each value as the Java / JavaScript literal BFCL's converters read back; the
    # wrong fake calls the first tool without its required arguments.
    suite = _suite("bfcl", {"categories": ["java", "javascript"]})
    assert _three_ways(suite, 10) == (1.0, 0.0, 0.5)


@needs_bfcl
def test_bfcl_java_and_javascript_use_bfcl_type_checks():
    suite = _suite("bfcl", {"categories": ["java", "javascript"]})
    java, js = suite.items(2, 0)
    assert (java.id, js.id) == ("simple_java_0", "simple_javascript_0")
    # The model sees BFCL's language-specific documents: every parameter a string, with a hint.
    for item, hint in ((java, "Java 8 SDK syntax"), (js, "JavaScript syntax")):
        function = item.tools[0]["function"]
        assert hint in function["description"]
        assert {p["type"] for p in function["parameters"]["properties"].values()} == {"string"}
    # The checker reads the original types: simple_javascript_0's isComplete is a Boolean, so
    # the literal true passes and Python's True (not a JavaScript literal) fails.
    assert '"isComplete": "true"' in js.gold[0]
    assert suite.score(js, js.gold[0]) == 1.0
    assert suite.score(js, js.gold[0].replace('"true"', '"True"')) == 0.0
    assert suite.score(js, js.gold[0].replace('"true"', "true")) == 0.0  # not a string
    (java_1,) = [i for i in _suite("bfcl", {"categories": ["java"]}).items(2, 0)
                 if i.id == "simple_java_1"]
    # A HashMap written as Java: new HashMap<String, Object>() {{ put("limit", 50); ... }}.
    assert "new HashMap<String, Object>()" in java_1.gold[0]
    assert suite.score(java_1, java_1.gold[0]) == 1.0
    assert suite.score(java_1, java_1.gold[0].replace("50", "51")) == 0.0


@needs_bfcl
def test_bfcl_live_relevance_passes_any_call():
    suite = _suite("bfcl", {"categories": ["live_relevance", "live_irrelevance"]})
    relevance, irrelevance = suite.items(2, 0)
    assert relevance.bucket == "live_relevance" and "<tool_call>" in relevance.gold[0]
    assert suite.score(relevance, relevance.gold[0]) == 1.0
    assert suite.score(relevance, "None of these tools fit.") == 0.0
    assert suite.score(relevance, "<tool_call>not json</tool_call>") == 0.0
    assert suite.score(irrelevance, irrelevance.gold[0]) == 1.0
    # Relevance and irrelevance are opposites: gold on one is wrong on the other, through play.
    items = suite.items(4, 0)
    gold = suite.gold(items)
    result = run_suite(suite, "bfcl", FakeGoldBackend(gold), SETTINGS, 4)
    assert result.buckets["live_relevance"].pass_at_1 == 1.0 == result.overall.pass_at_1
    refusing = run_suite(suite, "bfcl", FakeWrongBackend(), EvalSettings(
        samples=1, max_new_tokens=16, seed=0, max_turns=12), 4)
    assert refusing.buckets["live_irrelevance"].pass_at_1 == 0.0  # it calls a tool
    assert refusing.buckets["live_relevance"].pass_at_1 == 1.0
    half = run_suite(suite, "bfcl", FakeHalfBackend(gold), SETTINGS, 4)
    assert half.overall.pass_at_1 == 0.5


def test_unknown_category_or_missing_option_is_a_config_error_before_any_model():
    from spade_core.errors import ConfigError

    from plugins.evals.bfcl_suite import BfclSuite
    from spade_core.eval.evaluate import resolve_suite

    registry = load_test_plugins(evals_plugin).registry
    with pytest.raises(ConfigError, match=r"--suite bfcl: invalid options \(categories.0: Input "
                                          "should be 'simple'"):
        resolve_suite(registry, "bfcl", {"categories": ["simpel"]})
    with pytest.raises(ConfigError, match="path: Field required"):
        resolve_suite(registry, "pool", {})
    with pytest.raises(ConfigError,
                       match="Installed: acebench, aime, bfcl, gem, gpqa-diamond, livecodebench, pool, "
                             "reasoning-gym, tau2"):
        resolve_suite(registry, "bfc", {})
    with pytest.raises(ConfigError, match="categories are"):
        BfclSuite(["simpel"])


@pytest.mark.slow
def test_pool_gold_wrong_half(tmp_path):
    for name in ("fraction_sum.py", "modular_power.py"):
        shutil.copy(SEEDS / "reasoning" / name, tmp_path / name)
    for name in ("bank_rebalance.py", "calendar_booking.py"):
        shutil.copy(SEEDS / "tool_use" / name, tmp_path / name)
    registry = load_plugins().registry
    sandbox = registry.build("sandbox", "process", {"workers": 1}, "test")
    families = [registry.build("env_family", f, {}, "test") for f in ("reasoning", "tool-use")]
    try:
        suite = _suite("pool", {"path": str(tmp_path)}, BuildContext(
            components={"sandbox": sandbox, "env_family": families}))
        items = suite.items(None, 0)
        assert sorted({i.bucket for i in items}) == ["reasoning", "tool-use"]
        assert _three_ways(suite, 4) == (1.0, 0.0, 0.5)
    finally:
        sandbox.close()


#: The suites whose data ships in a package: the module that package provides, options and a
#: small limit. gem leaves out Sokoban and Tower of Hanoi here (seconds per room, 31 moves);
#: Mastermind and Crosswords draw their games from the seed as Sokoban does.
OFFLINE_SUITES = [
    ("reasoning-gym", "reasoning_gym", {}, 2), ("bfcl", "bfcl_eval", {}, 4),
    ("tau2", "tau2.registry", {}, 2),
    ("gem", "gem", {"games": ["game:Mastermind-v0-hard", "game:Crosswords-v0-easy"]}, 4)]


@pytest.fixture(scope="module")
def roomy_sandbox():
    """A process sandbox with the limits the tau2 and gem suites ask for (docs/eval.md)."""
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    from plugins.evals.gem_suite import SANDBOX_LIMITS as GEM_LIMITS
    from plugins.evals.tau2_suite import SANDBOX_LIMITS as TAU2_LIMITS

    limits = {key: max(GEM_LIMITS.get(key, 0), TAU2_LIMITS.get(key, 0))
              for key in {*GEM_LIMITS, *TAU2_LIMITS}}
    box = build_sandbox(ProcessSandboxOptions(workers=2, **limits))
    yield box
    box.close()


@pytest.mark.parametrize("name, module, options, limit", OFFLINE_SUITES)
def test_offline_suites_give_the_same_figures_twice(name, module, options, limit, roomy_sandbox):
    """A fresh suite, its items and a fresh deterministic backend, twice: the same JSON."""
    if importlib.util.find_spec(module.split(".")[0]) is None:
        pytest.skip(f"the {name} suite's package is not installed (make install-test)")
    settings = EvalSettings(samples=1, max_new_tokens=16, seed=4, max_turns=12)

    def figures() -> str:
        suite = _suite(name, options, BuildContext(components={"sandbox": roomy_sandbox}))
        if name == "tau2":
            suite.user = FakeScenarioUser()
        backend = FakeHalfBackend(suite.gold(suite.items(limit, settings.seed)))
        result = run_suite(suite, name, backend, settings, limit)
        return json.dumps(result.to_dict(), sort_keys=True)

    first = figures()
    assert figures() == first
    assert 0.0 < json.loads(first)["overall"]["pass_at_1"] < 1.0


def test_spread_takes_round_robin():
    assert spread({"a": [1, 2, 3], "b": [4], "c": [5, 6]}, 5) == [1, 4, 5, 2, 6]
    assert spread({"a": [1, 2], "b": [3]}, None) == [1, 2, 3]


def test_reasoning_gym_spade_eval_uses_the_appendix_a3_parameters(monkeypatch, capsys):
    """``spade eval configs/quickstart.yaml --suite reasoning-gym --limit 20 --json``: every
    dataset the suite generates runs at its published hard parameters (the data file, and a few
    values checked by hand against the reference's ``rg_a3_hard.py``)."""
    import json
    
    from spade_core.cli import main
    from spade_core.hookspecs import hookimpl

    from fakes.eval_backends import FakeWrongBackend
    from plugins.evals.reasoning_gym_suite import A3_DATA, ReasoningGymSuite

    class FakeBackendPlugin:
        @hookimpl
        def register_generation_backends(self, register):
            register("fake-wrong", lambda options, context: FakeWrongBackend())

    built: dict[str, str] = {}
    original = ReasoningGymSuite.program

    def spy(self, spec):
        built[spec.name] = original(self, spec)
        return built[spec.name]

    monkeypatch.setattr(ReasoningGymSuite, "program", spy)
    plugins = load_builtin_plugins(FakeBackendPlugin())
    assert main(["eval", str(ROOT / "configs" / "quickstart.yaml"), "--set", "backend=fake-wrong",
                 "--suite", "reasoning-gym", "--limit", "20", "--json"], plugins=plugins) == 0
    [suite] = json.loads(capsys.readouterr().out)["suites"]
    assert suite["overall"]["items"] == 20 and suite["skipped"] == {}
    assert {b: s["items"] for b, s in suite["buckets"].items()} == {
        "math": 5, "algorithmic": 5, "cognition": 5, "logic": 5}
    published = {name: (bucket, config) for bucket, datasets in
                 json.loads(A3_DATA.read_text())["buckets"].items()
                 for name, config in datasets.items()}
    assert len(published) == 100
    played = {row["id"].split("/")[0] for row in suite["items"]}
    assert len(played) == 20 and played <= set(built)
    for row in suite["items"]:
        name = row["id"].split("/")[0]
        assert row["bucket"] == published[name][0]
        source = built[name]
        config = ast.literal_eval(source.split("config = ", 1)[1]) if published[name][1] else {}
        assert config == published[name][1], name
    # By hand, from the reference's A3_HARD_CONFIGS and RG_GOLDEN_GOOSE.
    assert published["leg_counting"] == ("math", {"max_animals": 30, "max_instances": 256,
                                                  "min_animals": 20, "min_instances": 64})
    assert published["knights_knaves"][0] == "logic"
    assert published["rush_hour"] == ("cognition", {"max_moves": 50, "min_moves": 25})
    assert published["count_primes"] == ("algorithmic", {"max_n": 50000, "min_n": 10000})
    assert published["syllogism"] == ("logic", {"allow_all": True, "allow_no": True,
                                                "allow_some": False, "allow_some_not": False})
    assert {"leg_counting", "rush_hour", "count_primes", "syllogism"} <= played


def test_reasoning_gym_overrides_exclude_and_unknown_datasets_are_reported(monkeypatch):
    from plugins.evals import reasoning_gym_suite as rg

    suite = _suite("reasoning-gym", {"buckets": ["logic"], "exclude": ["acre"],
                                     "overrides": {"aiw": {"max_entities": 4}}})
    specs = {d.name: d.config for d in suite.buckets["logic"]}
    assert "acre" not in specs and specs["aiw"]["max_entities"] == 4
    assert specs["aiw"]["task_type_weights"] == [0.5, 0.25, 0.25]
    with pytest.raises(Exception, match="not one of the hard datasets"):
        _suite("reasoning-gym", {"overrides": {"nope": {}}})
    # A dataset or a parameter the installed reasoning-gym lacks is left out with its reason.
    monkeypatch.setitem(rg.HARD_BUCKETS, "logic", (
        *rg.HARD_BUCKETS["logic"], rg.HardDataset("no_such_dataset"),
        rg.HardDataset("syllogism", {"no_such_key": 1})))
    suite = _suite("reasoning-gym", {"buckets": ["logic"]})
    assert "not a dataset" in suite.skipped["no_such_dataset"]
    assert "no_such_key" in suite.skipped["syllogism"]
