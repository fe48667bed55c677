"""The ``arithmetic`` suite: held-out items of each cell, none a training program can draw, the
same for every seed, played in the sandbox and scored by the family's own program."""

from __future__ import annotations

import pytest

from plugins.evals.arithmetic_suite import heldout_pairs
from plugins.families.arithmetic import parse_cell
from plugins.families.preludes.arithmetic_task import heldout_pair

from fakes.eval_runs import SUITES


def test_items_are_held_out_pairs_of_each_cell_the_same_for_every_seed():
    suite = SUITES.suite("arithmetic", {"cells": ["2+1", "2+2", "1+1"], "items_per_cell": 500})
    items = suite.items(None, 0)
    by_cell = {cell: [i for i in items if i.bucket == cell] for cell in ("2+1", "2+2", "1+1")}
    assert {c: len(v) for c, v in by_cell.items()} == {"2+1": 500, "2+2": 500, "1+1": 61}
    assert len({i.id for i in items}) == len(items)
    for item in items:
        _, operation, _ = parse_cell(item.bucket)
        a, b = item.data["seed"] // 1000, item.data["seed"] % 1000
        assert heldout_pair(operation, a, b) and item.text == f"What is {a} {operation} {b}?"
    assert [i.id for i in suite.items(None, 7)] == [i.id for i in items]
    assert heldout_pairs("2+1")[:500] == [(i.data["seed"] // 1000, i.data["seed"] % 1000)
                                         for i in by_cell["2+1"]]


def test_a_limit_spreads_over_the_cells():
    suite = SUITES.suite("arithmetic", {"cells": ["2+1", "2-1"]})
    assert sorted(i.bucket for i in suite.items(6, 0)) == ["2+1"] * 3 + ["2-1"] * 3


@pytest.mark.slow
def test_gold_wins_wrong_loses_half_is_half_through_the_sandbox():
    suite = SUITES.suite("arithmetic", {"cells": ["2+1", "3*3"], "items_per_cell": 4})
    assert SUITES.three_ways(suite, 8) == (1.0, 0.0, 0.5)


@pytest.mark.slow
def test_more_plays_than_a_worker_opens_at_once_are_played_in_chunks(monkeypatch):
    """A cell's items share one program; 2 x 3 plays in chunks of 4 plays give each item its
    own scores, in order."""
    import plugins.evals.arithmetic_suite as module
    from fakes.eval_backends import FakeGoldBackend
    from spade_core.interfaces import EvalSettings

    monkeypatch.setattr(module, "SESSIONS_PER_CALL", 4)
    suite = SUITES.suite("arithmetic", {"cells": ["2+1"], "items_per_cell": 3})
    items = suite.items(None, 0)
    scores = suite.play(items, FakeGoldBackend(suite.gold(items)),
                        EvalSettings(samples=2, max_new_tokens=8, temperature=0.8))
    assert scores == [[1.0, 1.0]] * 3


def test_unknown_cells_are_refused_naming_the_form():
    with pytest.raises(Exception, match="DIGITS OP DIGITS"):
        SUITES.suite("arithmetic", {"cells": ["2%1"]})
