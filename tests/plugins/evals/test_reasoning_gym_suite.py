"""The reasoning-gym suite's protocols and scoring: the reference protocol's 8 episodes per hard
dataset through ``spade eval`` and the RQ1 table (a scripted sandbox and backend, fast), its draws,
prompt and answer reading against reasoning-gym itself (the real sandbox, a few datasets), and
replies scored in the instance that generated their item; gold, wrong and half-right replies
through the real scorers, the buckets, the Appendix A.3 parameters, overrides and exclusions."""

from __future__ import annotations

import ast
import json
import random
from collections import Counter

import pytest

from spade_core.cli import main
from spade_core.hookspecs import hookimpl
from spade_core.testing import load_builtin_plugins

from fakes.cli import ROOT
from fakes.eval_backends import FakeEvenEpisodeBackend
from fakes.eval_runs import SUITES
from fakes.in_process import FakeItemsSandbox

pytest.importorskip("reasoning_gym")

QUICKSTART = str(ROOT / "configs" / "quickstart.yaml")
_suite, _three_ways = SUITES.suite, SUITES.three_ways


def _plugins(sandbox, backend):
    class FakeItemsPlugin:
        @hookimpl
        def register_generation_backends(self, register):
            register("fake-even-episode", lambda options, context: backend)

        @hookimpl
        def register_sandboxes(self, register):
            register("fake-items", lambda options, context: sandbox)

    return load_builtin_plugins(FakeItemsPlugin())


def _eval(capsys, *extra):
    sandbox, backend = FakeItemsSandbox(), FakeEvenEpisodeBackend()
    argv = ["eval", QUICKSTART, "--set", "backend=fake-even-episode", "--set", "sandbox=fake-items",
            "--suite", "reasoning-gym", *extra]
    assert main(argv, plugins=_plugins(sandbox, backend)) == 0
    return capsys.readouterr().out, sandbox, backend


def test_reference_protocol_plays_8_episodes_of_each_of_the_100_hard_datasets(capsys):
    out, sandbox, backend = _eval(
        capsys, "--set", "eval.options.reasoning-gym.protocol=reference", "--json")
    [suite] = json.loads(out)["suites"]
    per_dataset = Counter(row["id"].split("/")[0] for row in suite["items"])
    assert len(per_dataset) == 100 and set(per_dataset.values()) == {8}
    assert suite["overall"]["items"] == 800 == backend.asked == sandbox.scored
    assert {b: s["items"] for b, s in suite["buckets"].items()} == {
        "math": 8 * 31, "algorithmic": 8 * 36, "cognition": 8 * 24, "logic": 8 * 9}
    # Episodes 0..7 of each dataset, each generated once, by one instance per dataset.
    assert sorted(Counter(sandbox.generated).values()) == [1] * 800
    assert {seed for _, seed in sandbox.generated} == set(range(8))
    assert sandbox.opened == 100
    # A bucket's figure is wins / episodes: the even episodes win.
    assert all(s["pass_at_1"] == 0.5 for s in suite["buckets"].values())
    assert suite["notes"] == {"protocol": "reference", "episodes_per_dataset": 8}
    # A limit plays (and generates) only the first episodes it needs, spread over the buckets.
    out, sandbox, _ = _eval(capsys, "--option", "reasoning-gym.protocol=reference",
                            "--limit", "12", "--json")
    [suite] = json.loads(out)["suites"]
    assert {b: s["items"] for b, s in suite["buckets"].items()} == {
        "math": 3, "algorithmic": 3, "cognition": 3, "logic": 3}
    assert len(sandbox.generated) == 12 and {seed for _, seed in sandbox.generated} == {0}


def test_the_rq1_table_plays_the_reference_protocol_and_says_when_it_did_not(capsys, tmp_path):
    out, sandbox, _ = _eval(capsys, "--table", "rq1", "--out", str(tmp_path / "ref.json"))
    assert len(sandbox.generated) == 800
    rows = {line.split("  ")[0]: line for line in out.splitlines()}
    for column in ("RG Math", "RG Algorithmic", "RG Cognition", "RG Logic"):
        assert "50.0 ±" in rows[column]
    assert "note:" not in out
    # The config or --option still choose: the default protocol, and the table says so.
    out, sandbox, _ = _eval(capsys, "--table", "rq1", "--limit", "8",
                            "--option", "reasoning-gym.protocol=default")
    assert len(sandbox.generated) == 8
    assert "note: reasoning-gym was played with protocol default, not the paper's reference" \
        in out


def test_reference_draws_prompt_and_answer_reading_match_reasoning_gym(scoring_sandbox):
    """Real sandbox, two datasets, 3 episodes: episode k is ``random.seed(k);
    random.choice(dataset)`` of the dataset built with seed 42 and size 500; one user message
    in reasoning-gym's default prompt; the last <answer> is read before any \\boxed{}; only a
    full score wins."""
    import reasoning_gym
    from reasoning_gym.utils import SYSTEM_PROMPTS

    from plugins.evals.reasoning_gym_suite import REFERENCE_SUFFIX, ReasoningGymSuite

    suite = ReasoningGymSuite([], scoring_sandbox, datasets=["leg_counting", "word_sorting"],
                              protocol="reference", episodes=3)
    try:
        items = suite.items(None, 5)
        assert [i.id for i in items] == ["leg_counting/0", "word_sorting/0", "leg_counting/1",
                                         "word_sorting/1", "leg_counting/2", "word_sorting/2"]
        for item in items:
            name, episode = item.data["dataset"], item.data["seed"]
            dataset = reasoning_gym.create_dataset(name, seed=42, size=500)
            random.seed(episode)
            entry = random.choice(dataset)
            [message] = item.prompt
            assert message["role"] == "user"
            question = entry["question"].rstrip() + "\n\n" + REFERENCE_SUFFIX
            first, *rest = SYSTEM_PROMPTS["default"].strip().splitlines()
            assert message["content"] == "\n".join([first, "Problem: " + question, *rest])
            assert item.gold == (f"<answer>{entry['answer']}</answer>",)
        leg = items[0]
        answer = leg.gold[0][len("<answer>"):-len("</answer>")]
        replies = [leg.gold[0],
                   f"\\boxed{{0}} then <ANSWER> {answer} </ANSWER>",  # the tag, any case
                   f"<answer>0</answer> \\boxed{{{answer}}}",  # the tag wins over the box
                   f"no tag: \\boxed{{{answer}}}",  # else the last box
                   f"\\boxed {answer}"]  # a box without braces is no answer
        scores = suite.score_many([(leg, reply) for reply in replies])
        assert scores == [1.0, 1.0, 0.0, 1.0, 0.0]
        assert suite.extract(leg, replies[1]) == answer
        # word_sorting gives partial credit for a partly right list: no win.
        sort = items[1]
        words = sort.gold[0][len("<answer>"):-len("</answer>")].split(", ")
        partial = "<answer>" + ", ".join(reversed(words)) + "</answer>"
        assert suite.score_many([(sort, partial)]) == [0.0]
    finally:
        suite.close()


def test_replies_are_scored_in_the_instance_that_generated_their_item(scoring_sandbox):
    from plugins.evals.reasoning_gym_suite import ReasoningGymSuite

    suite = ReasoningGymSuite([], scoring_sandbox, datasets=["leg_counting", "chain_sum"])
    try:
        items = suite.items(6, 0)
        assert len(items) == 6 and len(suite._desks) == 2
        gold = [(item, item.gold[0]) for item in items]
        for _ in range(3):  # three samples of every item
            assert suite.score_many(gold) == [1.0] * 6
        assert len(suite._desks) == 2  # nothing opened, nothing generated again
        # A dead instance: its items are generated again in a fresh one, scores unchanged.
        desk = suite._holder[(items[0].data["program"], items[0].data["seed"])]
        desk.close()
        assert suite.score_many(gold) == [1.0] * 6
        assert len(suite._desks) == 3
    finally:
        suite.close()
    assert suite._desks == []


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
