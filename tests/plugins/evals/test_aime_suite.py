"""The ``aime`` suite on fixture files written in the public AIME datasets' own formats (made-up
problems): the gold, wrong and half-right fakes score 1.0, 0.0 and 0.5 through the real scorer,
avg@k over samples, years as buckets, answer extraction, and clear errors without data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.eval.scores import run_suite
from spade_core.interfaces import EvalSettings
from spade_core.testing import load_test_plugins

import plugins.evals.plugin as evals_plugin
from fakes.eval_backends import FakeEvenSeedBackend, FakeGoldBackend
from fakes.eval_runs import three_ways
from plugins.evals.aime_suite import INSTRUCTION, boxed_integer, reply_integer

DATA = Path(__file__).parent / "data" / "aime"
SETTINGS = EvalSettings(samples=1, max_new_tokens=16, seed=0)


def _suite(options: dict | None = None):
    loaded = load_test_plugins(evals_plugin)
    return loaded.registry.build("eval_suite", "aime", {"data": str(DATA), **(options or {})},
                                 "test", BuildContext())


def test_gold_wrong_half_score_one_zero_half():
    assert three_ways(_suite(), 6, SETTINGS) == (1.0, 0.0, 0.5)


def test_same_figures_twice():
    suite = _suite()
    first = run_suite(suite, "aime", FakeGoldBackend(suite.gold(suite.items(None, 0))),
                      SETTINGS, None)
    again = run_suite(_suite(), "aime", FakeGoldBackend(suite.gold(suite.items(None, 0))),
                      SETTINGS, None)
    assert first.to_dict() == again.to_dict()


def test_years_are_buckets_from_a_column_the_file_name_or_the_dataset_id():
    suite = _suite()
    items = suite.items(None, 0)
    assert [i.bucket for i in items] == ["2024", "2024", "2025", "2025", "2026", "2026"]
    assert [i.id for i in items[:3]] == ["2024/60", "2024/61", "2025/1"]
    # --limit spreads over the years
    assert [i.bucket for i in suite.items(3, 0)] == ["2024", "2025", "2026"]
    assert [i.bucket for i in _suite({"years": [2026]}).items(None, 0)] == ["2026", "2026"]


def test_prompts_ask_for_a_boxed_answer_once():
    items = _suite().items(None, 0)
    assert items[0].prompt[-1]["content"].endswith("\n\n" + INSTRUCTION)
    prepared = items[-1].prompt[-1]["content"]  # the reference's prepared file has it already
    assert prepared.count("\\boxed{}") == 1
    assert items[0].data["answer"] == 21 and items[0].gold == ("\\boxed{21}",)


def test_avg_at_k_is_the_mean_score_over_samples():
    suite = _suite()
    gold = suite.gold(suite.items(None, 0))
    result = run_suite(suite, "aime", FakeEvenSeedBackend(gold),
                       EvalSettings(samples=4, max_new_tokens=16, seed=0), None)
    assert result.overall.pass_at_1 == 0.5  # avg@4
    assert result.overall.pass_at_k == 1.0
    assert result.overall.samples == 24


@pytest.mark.parametrize(("text", "value"), [
    ("073", 73), ("73", 73), ("x = 73", 73), ("\\text{73}", 73), ("73^\\circ", 73),
    ("$73$", 73), ("73.", 73), ("73.0", 73), ("{073}", 73), ("1,000", 1000),
    ("\\frac{1}{2}", None), ("3\\sqrt{2}", None), ("seventy", None), ("7 3 x", None), ("", None),
])
def test_boxed_integer(text, value):
    assert boxed_integer(text) == value


def test_reply_integer_takes_the_last_box_and_optionally_the_last_integer():
    assert reply_integer("first \\boxed{12}, then \\boxed{ 034 }") == 34
    assert reply_integer("so the answer is 34") is None
    assert reply_integer("so the answer is 34", last_integer=True) == 34
    assert reply_integer("\\boxed{" * 5000 + "1") is None  # unbalanced, hostile: no answer
    suite = _suite({"last_integer": True})
    item = suite.items(1, 0)[0]
    assert suite.score(item, "after all that, 21") == 1.0


def test_parquet_and_a_list_of_locations(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    rows = [json.loads(line) for line in (DATA / "aime_2025.jsonl").read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "aime_2025.parquet")
    suite = _suite({"data": [str(tmp_path / "aime_2025.parquet"), str(DATA / "aime_2024.jsonl")]})
    assert [i.id for i in suite.items(None, 0)] == ["2024/60", "2024/61", "2025/1", "2025/2"]


def test_missing_data_fails_naming_the_file_and_the_source(tmp_path):
    with pytest.raises(ConfigError, match="eval.data.aime") as missing:
        _suite({"data": None})
    assert "MathArena/aime_2025" in str(missing.value)
    gone = tmp_path / "aime-2025.jsonl"
    with pytest.raises(ConfigError, match="no such file or folder") as absent:
        _suite({"data": str(gone)})
    assert str(gone) in str(absent.value) and "HuggingFaceH4/aime_2024" in str(absent.value)
    with pytest.raises(ConfigError, match="holds no problem of 2023"):
        _suite({"years": [2023, 2024]})


def test_rows_it_cannot_read_are_named(tmp_path):
    (tmp_path / "mine.jsonl").write_text(json.dumps({"problem": "p", "answer": "12"}) + "\n")
    with pytest.raises(ConfigError, match="cannot tell the year"):
        _suite({"data": str(tmp_path / "mine.jsonl")})
    shutil.copy(DATA / "aime_2024.jsonl", tmp_path / "aime_2024.jsonl")
    (tmp_path / "mine.jsonl").write_text(json.dumps({"problem": "p", "answer": "1/2",
                                                     "year": 2024}) + "\n")
    with pytest.raises(ConfigError, match="not an integer"):
        _suite({"data": str(tmp_path)})
