"""The ``gpqa-diamond`` suite on a fixture CSV in GPQA's own columns (made-up questions): the
gold, wrong and half-right fakes score 1.0, 0.0 and 0.5 through the real scorer, the choice
orders follow the reference's seeded stream, further shuffles are averaged, letter extraction,
and clear errors without data."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.eval.scores import run_suite
from spade_core.interfaces import EvalSettings
from spade_core.testing import load_test_plugins

import plugins.evals.plugin as evals_plugin
from fakes.eval_backends import FakeGoldBackend
from fakes.eval_runs import three_ways
from plugins.evals.gpqa_suite import chosen_letter

DATA = Path(__file__).parent / "data" / "gpqa" / "gpqa_diamond.csv"
SETTINGS = EvalSettings(samples=1, max_new_tokens=16, seed=0)


def _suite(options: dict | None = None):
    loaded = load_test_plugins(evals_plugin)
    return loaded.registry.build("eval_suite", "gpqa-diamond",
                                 {"data": str(DATA), **(options or {})}, "test", BuildContext())


def test_gold_wrong_half_score_one_zero_half():
    assert three_ways(_suite(), 4, SETTINGS) == (1.0, 0.0, 0.5)


def test_two_shuffles_are_averaged_over_twice_the_items():
    suite = _suite({"shuffles": 2})
    items = suite.items(None, 0)
    assert len(items) == 8 and len({i.id for i in items}) == 8
    assert three_ways(suite, 8, SETTINGS) == (1.0, 0.0, 0.5)


def test_same_figures_twice():
    items = _suite().items(None, 0)
    first = run_suite(_suite(), "gpqa-diamond", FakeGoldBackend(_suite().gold(items)), SETTINGS,
                      None)
    again = run_suite(_suite(), "gpqa-diamond", FakeGoldBackend(_suite().gold(items)), SETTINGS,
                      None)
    assert first.to_dict() == again.to_dict()


def test_choice_orders_follow_one_seeded_stream_in_file_order():
    """The reference's order: random.Random(42), one shuffle of [correct, incorrect 1-3] per
    question in file order; the correct answer's new place is the letter."""
    items = {i.id: i for i in _suite().items(None, 0)}
    rng = random.Random(42)
    for ident in ("recFixture001", "recFixture002", "recFixture003", "recFixture004"):
        order = [0, 1, 2, 3]
        rng.shuffle(order)
        item = items[ident]
        assert item.data["answer"] == "ABCD"[order.index(0)]
        correct = item.data["choices"]["ABCD".index(item.data["answer"])]
        assert correct in ("20 m/s", "6", "DNA", "coulomb")
    text = items["recFixture003"].prompt[0]["content"]
    assert "with a comma" in text and "\nin most organisms?" in text and "\nA. " in text


def test_buckets_are_the_domains():
    suite = _suite()
    assert [i.bucket for i in suite.items(None, 0)] == [
        "physics", "physics", "chemistry", "biology"]
    assert [i.bucket for i in suite.items(3, 0)] == ["physics", "chemistry", "biology"]


@pytest.mark.parametrize(("reply", "letter"), [
    ("\\boxed{C}", "C"), ("\\boxed{(c)}", "C"), ("\\boxed{\\text{B}}", "B"),
    ("\\boxed{C: 2.4}", "C"), ("\\boxed{A.}", "A"), ("x \\boxed{A} then \\boxed{D}", "D"),
    ("The answer is (B).", "B"), ("Answer: D", "D"), ("answer: a", None),
    ("\\boxed{Dog}", None), ("\\boxed{spade-wrong-answer}", None), ("no letter here", None),
    ("\\boxed{E}", None),
])
def test_chosen_letter(reply, letter):
    assert chosen_letter(reply) == letter


def test_hostile_replies_are_read_in_linear_time():
    import time

    started = time.perf_counter()
    for reply in ("answer" + " " * 50_000 + "x", ("answer is " + " " * 200) * 2_000,
                  "\\boxed{" + "(" * 50_000 + "}"):
        assert chosen_letter(reply) is None
    assert time.perf_counter() - started < 2.0


def test_missing_data_or_columns_fail_clearly(tmp_path):
    gone = tmp_path / "gpqa_diamond.csv"
    with pytest.raises(ConfigError, match="no such file or folder") as absent:
        _suite({"data": str(gone)})
    assert str(gone) in str(absent.value) and "Idavidrein/gpqa" in str(absent.value)
    with pytest.raises(ConfigError, match="eval.data.gpqa-diamond"):
        _suite({"data": None})
    (tmp_path / "other.csv").write_text("question,answer\nq,a\n")
    with pytest.raises(ConfigError, match="'Correct Answer'"):
        _suite({"data": str(tmp_path / "other.csv")})
