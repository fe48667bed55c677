"""The reasoning-gym suite's protocols and scoring: the reference protocol's 8 episodes per hard
dataset through ``spade eval`` and the RQ1 table (a scripted sandbox and backend, fast), its draws,
prompt and answer reading against reasoning-gym itself (the real sandbox, a few datasets), and
replies scored in the instance that generated their item."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from spade_core.cli import main
from spade_core.hookspecs import hookimpl
from spade_core.testing import load_builtin_plugins

from fakes.cli import ROOT
from fakes.eval_backends import FakeEvenEpisodeBackend
from fakes.in_process import FakeItemsSandbox

pytest.importorskip("reasoning_gym")

QUICKSTART = str(ROOT / "configs" / "quickstart.yaml")


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
