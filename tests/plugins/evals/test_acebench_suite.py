"""The ``acebench`` suite on fixture files in ACEBench's own format (made-up entries): the gold,
wrong and half-right fakes score 1.0, 0.0 and 0.5 on each bucket through the real checker,
ACEBench's checking rules, hostile replies, clear errors without data, and the rq2 table's
ACEBench columns."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.eval.paper_table import paper_table
from spade_core.eval.scores import run_suite
from spade_core.interfaces import EvalSettings
from spade_core.testing import load_test_plugins

import plugins.evals.plugin as evals_plugin
from fakes.eval_backends import FakeGoldBackend, FakeHalfBackend, FakeScenarioUser
from fakes.eval_runs import three_ways
from plugins.evals.acebench_checker import decode_calls, process_accuracy, special_verdict
from plugins.evals.acebench_suite import CATEGORIES

DATA = Path(__file__).parent / "data" / "acebench"
SETTINGS = EvalSettings(samples=1, max_new_tokens=16, seed=0)
PRESENT = sorted(p.stem[len("data_"):] for p in DATA.glob("data_*.json"))


def _suite(options: dict | None = None):
    loaded = load_test_plugins(evals_plugin)
    suite = loaded.registry.build("eval_suite", "acebench",
                                  {"data": str(DATA), "categories": PRESENT, **(options or {})},
                                  "test", BuildContext())
    suite.user = FakeScenarioUser()
    return suite


@pytest.mark.parametrize("bucket", ["normal", "special", "agent"])
def test_gold_wrong_half_on_each_bucket(bucket):
    suite = _suite({"categories": [c for c in PRESENT if c in CATEGORIES[bucket]]})
    count = len(suite.items(None, 0))
    assert count % 2 == 0
    assert three_ways(suite, count, SETTINGS) == (1.0, 0.0, 0.5)


def test_gold_wrong_half_overall_and_buckets():
    suite = _suite()
    items = suite.items(None, 0)
    assert {i.bucket for i in items} == {"normal", "special", "agent"}
    assert three_ways(suite, len(items), SETTINGS) == (1.0, 0.0, 0.5)


def test_items_follow_acebench():
    items = {i.id: i for i in _suite().items(None, 0)}
    dialogue = items["normal_multi_turn_user_adjust_0"]
    assert len(dialogue.data["steps"]) == 2 and len(dialogue.gold) == 2
    system = items["normal_single_turn_single_function_1"].prompt[0]["content"]
    assert "May 2, 2024" in system and "RecipeFinder_search" in system
    assert "Maria Lopez" in items["normal_preference_0"].prompt[0]["content"]
    assert items["special_incomplete_0"].gold == (
        '["Missing necessary parameters (from_station, date) for the api '
        '(RailBooking_reserveSeat)"]',)
    assert items["agent_multi_turn_0"].gold[-1] == "finish conversation"


def test_a_dialogue_passes_only_when_every_step_does():
    suite = _suite({"categories": ["normal_multi_turn_user_adjust"]})
    (item,) = suite.items(None, 0)
    first, second = item.data["steps"]
    backend = FakeGoldBackend({first.prompt[1]["content"]: (item.gold[0],),
                               second.prompt[1]["content"]: ("[NoteKeeper_shareNote(title='x')]",)})
    assert suite.play([item], backend, SETTINGS) == [[0.0]]


@pytest.mark.parametrize(("reply", "ok"), [
    ("[WeatherPlanner_getForecast(city='Lisbon', days=3, units='metric')]", True),
    ("[WeatherPlanner_getForecast(city='lisbon', days=3)]", True),  # optional left out
    ("<think>hmm</think>[WeatherPlanner_getForecast(days=3, city='LISBON')]", True),
    ("[WeatherPlanner_getForecast(city='Lisbon')]", False),  # required days missing
    ("[WeatherPlanner_getForecast(city='Lisbon', days='3')]", False),  # wrong type
    ("[WeatherPlanner_getForecast(city='Porto', days=3)]", False),  # wrong value
    ("[WeatherPlanner_getForecast(city='Lisbon', days=3, extra=1)]", False),  # extra param
    ("[RecipeFinder_search(ingredients=['x'])]", False),  # wrong function
    ("[WeatherPlanner_getForecast(city='Lisbon', days=3), WeatherPlanner_getForecast("
     "city='Lisbon', days=3)]", False),  # wrong count
    ("WeatherPlanner_getForecast(city='Lisbon', days=3)", False),  # not a list
])
def test_normal_checker_rules(reply, ok):
    suite = _suite({"categories": ["normal_single_turn_single_function"]})
    item = suite.items(None, 0)[0]
    assert suite.score(item, reply) == (1.0 if ok else 0.0)


def test_special_wording_and_process_accuracy():
    assert special_verdict("special_error_param", {"days": ["three-ish"]},
                           '["There is incorrect value (three-ish) for the parameters (days)"]')
    assert not special_verdict("special_error_param", {"days": ["three-ish"]},
                               "There is incorrect value (3) for days")
    assert not special_verdict("special_incomplete", {"Api": ["a", "b"]},
                               "Missing necessary parameters (a) for the api (Api)")
    assert special_verdict("special_irrelevant", "x", "Due to the limitations of the function")
    assert process_accuracy(["[a()]", "[b()]"], ["[b()]", "[a()]"]) == 0.5
    assert process_accuracy(["[a()]", "[b()]"], ["[x()]", " [a()]", "[b()] "]) == 1.0
    assert process_accuracy([["[z()]"], ["[a()]"]], ["[a()]"]) == 1.0


def test_hostile_replies_are_not_run_and_stay_cheap():
    started = time.perf_counter()
    for reply in ("[__import__('os').system('echo hi')]", "[f(x=(lambda: 1)())]",
                  "[" * 100_000, "[f(a=" + "[" * 500 + "]" * 500 + ")]",
                  "[f(x=9**9**9**9)]", "[f(**{'a': 1})]"):
        calls = decode_calls(reply)
        assert calls is None or all(isinstance(c, dict) for c in calls)
    assert decode_calls("[f(x=9**9**9**9)]") == [{"f": {"x": "9 ** 9 ** 9 ** 9"}}]
    assert time.perf_counter() - started < 2.0


def test_missing_data_fails_clearly(tmp_path):
    with pytest.raises(ConfigError, match="eval.data.acebench") as unset:
        _suite({"data": None})
    assert "github.com/ACEBench/ACEBench" in str(unset.value)
    with pytest.raises(ConfigError, match="no such folder"):
        _suite({"data": str(tmp_path / "gone")})
    copy = tmp_path / "data_en"
    shutil.copytree(DATA, copy)
    (copy / "possible_answer" / "data_special_irrelevant.json").unlink()
    with pytest.raises(ConfigError) as missing:
        _suite({"data": str(tmp_path)})
    assert str(copy / "possible_answer" / "data_special_irrelevant.json") in str(missing.value)
    with pytest.raises(ConfigError, match="data_normal_multi_turn_user_switch.json is missing"):
        _suite({"categories": None})


def test_rq2_table_shows_the_acebench_columns():
    suite = _suite()
    items = suite.items(None, 0)
    gold = run_suite(suite, "acebench", FakeGoldBackend(suite.gold(items)), SETTINGS, None)
    half = run_suite(suite, "acebench", FakeHalfBackend(suite.gold(items)), SETTINGS, None)
    table = paper_table("rq2", [gold], [half])
    rows = {line.split("  ")[0]: line for line in table.splitlines()}
    for column in ("ACEBench Normal", "ACEBench Special", "ACEBench Agent"):
        assert "100.0" in rows[column] and "n/a" not in rows[column]
    assert "100.0 ± 0.0" in rows["ACEBench"]
    assert "acebench/overall" in rows["ACEBench"]


def test_acebench_buckets_average_categories_and_overall_weighs_buckets():
    """As ACEBench's summary: a bucket is the mean of its categories, the overall 0.578 normal
    + 0.2676 special + 0.1545 agent."""
    from spade_core.eval.paper_table import cell
    from spade_core.eval.scores import summarise
    from spade_core.interfaces import EvalItem

    ids = {"normal_atom_bool_0": 1.0, "normal_similar_api_0": 0.0, "normal_similar_api_1": 0.0,
           "special_irrelevant_0": 1.0, "agent_multi_step_0": 0.0}
    items = [EvalItem(id=i, bucket=i.split("_")[0]) for i in ids]
    result = summarise("acebench", items, [[s] for s in ids.values()], 1, 1.0)
    assert cell([result], "acebench", "normal").mean == 0.5  # not 1/3: categories weigh alike
    assert cell([result], "acebench", "overall").mean == pytest.approx(0.578 * 0.5 + 0.2676)
    partial = summarise("acebench", items[:4], [[s] for s in list(ids.values())[:4]], 1, 1.0)
    assert cell([partial], "acebench", "overall") is None
