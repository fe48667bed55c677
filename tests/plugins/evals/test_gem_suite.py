"""The gem suite (GEM's text games through gem-llm): the test fakes score 1.0 / 0.0 / 0.5 by
winning or losing the real games in the real sandbox, the items are the games' seeded first
observations, an episode ends at ``max_turns``, and ids that are not offline GEM games or a
missing package are clear errors."""

from __future__ import annotations

import sys

import pytest

from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.interfaces import EvalSettings, EvalSuite
from spade_core.testing import load_test_plugins

import plugins.evals.plugin as evals_plugin
from fakes.eval_backends import FakeGoldBackend, FakeWrongBackend
from fakes.eval_runs import needs_suite_env, three_ways

pytestmark = needs_suite_env("gem")

#: Seed 4: every game's first episode is quick to generate (Sokoban's room in under a second).
SETTINGS = EvalSettings(samples=1, max_new_tokens=16, seed=4)
QUICK = ["game:Mastermind-v0-hard", "game:TowerofHanoi-v0-hard", "game:Crosswords-v0-easy"]
SANDBOX = None


@pytest.fixture(scope="module")
def gem_sandbox():
    """A process sandbox with the limits docs/eval.md asks for on gem runs."""
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    from plugins.evals.gem_suite import SANDBOX_LIMITS

    box = build_sandbox(ProcessSandboxOptions(workers=2, **SANDBOX_LIMITS))
    yield box
    box.close()


@pytest.fixture(autouse=True)
def _sandbox(gem_sandbox):
    global SANDBOX
    SANDBOX = gem_sandbox


def _suite(options: dict | None = None) -> EvalSuite:
    return load_test_plugins(evals_plugin).registry.build(
        "eval_suite", "gem", options or {}, "test", BuildContext(components={"sandbox": SANDBOX}))


def test_gold_wrong_half():
    assert three_ways(_suite({"games": QUICK}), 4, SETTINGS) == (1.0, 0.0, 0.5)
    # The games ran in sandbox workers: the host never imported GEM.
    assert "gem.envs" not in sys.modules


def test_the_gold_player_solves_sokoban():
    """The easy room (6x6, 2 boxes) takes milliseconds to generate, the hard one seconds; the
    gold player's search is the same."""
    suite = _suite({"games": ["game:Sokoban-v0-easy"]})
    items = suite.items(1, SETTINGS.seed)
    gold = suite.gold(items)
    moves = next(iter(gold.values()))
    assert 0 < len(moves) <= 40 and set(moves) <= {"\\boxed{up}", "\\boxed{down}",
                                                   "\\boxed{left}", "\\boxed{right}"}
    assert suite.play(items, FakeGoldBackend(gold), SETTINGS) == [[1.0]]


def test_items_are_the_games_seeded_first_observations():
    suite = _suite({"games": QUICK})
    items = suite.items(6, 0)
    assert [i.bucket for i in items] == ["Mastermind-v0-hard", "TowerofHanoi-v0-hard",
                                         "Crosswords-v0-easy"] * 2
    assert [i.id for i in items[:3]] == ["Mastermind-v0-hard-0", "TowerofHanoi-v0-hard-0",
                                         "Crosswords-v0-easy-0"]
    first = items[0].prompt[0]["content"]
    assert first.startswith("You are playing a game. Make valid actions to win.\nObservation: "
                            "You are playing Mastermind.")
    assert "Crosswords" in items[2].text and "Current Board:" in items[2].text
    assert [i.text for i in items] == [i.text for i in _suite({"games": QUICK}).items(6, 0)]
    crosswords = [i.text for i in items if i.bucket == "Crosswords-v0-easy"]
    assert crosswords[0] != crosswords[1]


def test_an_episode_ends_at_max_turns_and_a_partial_return_is_no_win():
    suite = _suite({"games": ["game:TowerofHanoi-v0-hard"], "max_turns": 30})
    items = suite.items(1, 0)
    gold = suite.gold(items)
    assert len(next(iter(gold.values()))) == 31  # 2**5 - 1 moves: one more than allowed
    assert suite.play(items, FakeGoldBackend(gold), SETTINGS) == [[0.0]]
    assert _suite({"games": ["game:TowerofHanoi-v0-hard"]}).play(
        items, FakeGoldBackend(gold), SETTINGS) == [[1.0]]
    assert suite.play(items, FakeWrongBackend(), SETTINGS) == [[0.0]]


def test_options_and_a_missing_environment(monkeypatch, tmp_path):
    with pytest.raises(ConfigError, match="nltk"):
        _suite({"games": ["game:Wordle-v0-hard"]})
    with pytest.raises(ConfigError, match="not a GEM game id"):
        _suite({"games": ["math:GSM8K"]})
    with pytest.raises(ConfigError, match="game:Nope-v0-hard did not start"):
        _suite({"games": ["game:Nope-v0-hard"]}).items(1, 0)
    with pytest.raises(Exception, match="episodes"):
        _suite({"episodes": 0})
    monkeypatch.setenv("SPADE_SUITES_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match="run `spade suites install gem`"):
        _suite()
