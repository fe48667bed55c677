from __future__ import annotations

from pathlib import Path

import pytest

from plugins.lab.lab_backend import (DESIGNER_MARK, HINT_SYSTEM, HINT_TEXT, LabBackend,
                                     LabBackendOptions)
from plugins.lab.learner import Cell
from plugins.lab.programs import cell_of_program, program
from plugins.lab.lab_trainer import LabTrainer, LabTrainerOptions
from spade_core.config.load import load_config
from spade_core.errors import ConfigError
from spade_core.plugins import load_plugins

ROOT = Path(__file__).resolve().parents[3]
AGENT = {"role": "system", "content": "Solve the lab task."}
DESIGN = [{"role": "system", "content": "x"}, {"role": "user", "content": DESIGNER_MARK}]


def ask(backend, messages):
    return backend.generate([messages], max_new_tokens=8, temperature=1.0)[0].text


def test_designer_hint_and_agent_calls_are_told_apart():
    backend = LabBackend(LabBackendOptions(), seed=1)
    design = ask(backend, [{"role": "system", "content": "x"},
                           {"role": "user", "content": DESIGNER_MARK}])
    assert cell_of_program(design) in backend.learner.cells
    assert ask(backend, [{"role": "system", "content": HINT_SYSTEM}]) == HINT_TEXT


def test_the_agent_answers_right_as_often_as_the_model_says():
    backend = LabBackend(LabBackendOptions(initial_ability=[2.0]), seed=3)
    namespace: dict = {}
    exec(program(Cell(0, 2.0), 11), namespace)  # noqa: S102 - the lab's own template
    env = namespace["LabEnv"]()
    wins = []
    for seed in range(400):
        observation, _ = env.reset(seed)
        reply = ask(backend, [AGENT, {"role": "user", "content": observation}])
        reward = env.step(reply)[1]
        assert reply.startswith("solve:") == (reward == 1.0)
        wins.append(reward)
    assert 0.42 < sum(wins) / len(wins) < 0.58  # p = sigmoid(2 - 2) = 0.5
    assert len(backend.actions[11]) == 64  # the latest unhinted actions are kept per environment


def test_rlve_moves_a_skill_up_after_its_latest_plays_pass_the_threshold():
    backend = LabBackend(LabBackendOptions(designer="rlve", skills=1, rlve_plays=2,
                                           rlve_threshold=1.0, difficulties=[0.0, 1.0]))
    assert backend.choose_cell() == Cell(0, 0.0)
    backend._rlve_observe(Cell(0, 0.0), True)
    assert backend.choose_cell() == Cell(0, 0.0)
    backend._rlve_observe(Cell(0, 0.0), True)
    assert backend.choose_cell() == Cell(0, 1.0)


def test_rlve_moves_up_when_its_level_is_refused_as_a_duplicate():
    """A design at the current level that the loop never played was refused as a duplicate of a
    mastered environment: at the update the level moves up, instead of waiting for plays at a
    level that can no longer be played (the deadlock of issue 47)."""
    backend = LabBackend(LabBackendOptions(designer="rlve", skills=1, difficulties=[0.0, 1.0]))
    trainer = LabTrainer(LabTrainerOptions(train_designer=False), backend)
    played = ask(backend, DESIGN)
    assert cell_of_program(played) == Cell(0, 0.0)
    namespace: dict = {}
    exec(played.strip("`").removeprefix("python"), namespace)  # noqa: S102 - the lab's template
    observation, _ = namespace["LabEnv"]().reset(0)
    ask(backend, [AGENT, {"role": "user", "content": observation}])
    trainer.train([])
    assert backend.choose_cell() == Cell(0, 0.0)  # played: the level waits for its rlve_plays
    ask(backend, DESIGN)  # refused: never played
    trainer.train([])
    assert backend.choose_cell() == Cell(0, 1.0)


def test_repeated_kinds_or_difficulties_are_refused_naming_the_key():
    registry = load_plugins().registry
    for key, value in (("kinds", "[ordinary, leaky, ordinary]"), ("difficulties", "[0, 1, 1]")):
        with pytest.raises(ConfigError, match=rf"backend\.options\.{key}: .*repeated"):
            load_config(ROOT / "configs/lab.yaml", registry, [f"backend.options.{key}={value}"])


def test_state_round_trips():
    backend = LabBackend(LabBackendOptions(), seed=2)
    backend.learner.theta[0] = 1.5
    other = LabBackend(LabBackendOptions(), seed=9)
    other.load_state_dict(backend.state_dict())
    assert other.learner.theta == backend.learner.theta
    assert other.choose_cell() == backend.choose_cell()


def test_the_exploration_floor_draws_uniformly_from_a_concentrated_policy():
    """The lock-in (issue 47): a policy held on one cell whose designs are all refused as
    duplicates gets the same reward for every design, zero advantages and no gradient, forever.
    ``designer_epsilon`` draws that share of the designs uniformly, so some rewards differ."""
    cells = 3 * 8 * 3
    for epsilon in (0.0, 0.2):
        backend = LabBackend(LabBackendOptions(designer_epsilon=epsilon), seed=4)
        backend.learner.logits[0] = 50.0  # all its mass on one cell
        elsewhere = sum(backend.choose_cell() != backend.learner.cells[0] for _ in range(4000))
        expected = epsilon * (cells - 1) / cells * 4000
        assert abs(elsewhere - expected) <= 4 * (expected + 1) ** 0.5


def test_trap_share_sets_the_share_of_leaky_and_noisy_designs_of_the_random_designer():
    for share in (0.0, 0.1, 1 / 3):
        backend = LabBackend(LabBackendOptions(designer="random", trap_share=share), seed=5)
        kinds = [backend.choose_cell().kind for _ in range(3000)]
        for kind in ("leaky", "noisy"):
            assert abs(kinds.count(kind) / 3000 - share) < 0.03


def test_the_oracle_designs_each_skill_at_the_difficulty_nearest_even_odds():
    backend = LabBackend(LabBackendOptions(designer="oracle", initial_ability=[0.4, 2.6, -3.0]))
    assert [backend.choose_cell() for _ in range(4)] == [
        Cell(0, 0.0), Cell(1, 3.0), Cell(2, -2.0), Cell(0, 0.0)]


def test_random_designers_of_one_seed_agree_wherever_no_trap_was_drawn():
    """Common random numbers: with and without traps, one seed designs the same ordinary cells
    except where the first drew a trap, so the two random arms are compared seed by seed."""
    traps = LabBackend(LabBackendOptions(designer="random", trap_share=0.1), seed=3)
    ordinary = LabBackend(LabBackendOptions(designer="random", trap_share=0.0), seed=3)
    pairs = [(traps.choose_cell(), ordinary.choose_cell()) for _ in range(500)]
    assert all(a == b for a, b in pairs if a.kind == "ordinary")
    assert 60 < sum(a.kind != "ordinary" for a, _ in pairs) < 140


def test_the_oracle_leaves_a_cell_the_memory_refused_as_mastered():
    """The memory may call a cell mastered from a few lucky plays while the true success is
    still the nearest to 0.5: its designs are then refused, never played, and an oracle that kept
    designing it froze (2 of 5 seeds of the slow-capability scenario, at 39 and 67 %). A cell whose
    designs were all refused since the last update is not designed again."""
    backend = LabBackend(LabBackendOptions(designer="oracle", skills=1, initial_ability=[0.4],
                                           difficulties=[0.0, 1.0, 2.0]))
    trainer = LabTrainer(LabTrainerOptions(train_designer=False), backend)
    assert cell_of_program(ask(backend, DESIGN)) == Cell(0, 0.0)  # refused: never played
    trainer.train([])
    assert backend.choose_cell() == Cell(0, 1.0)  # the next nearest to 0.5
    other = LabBackend(LabBackendOptions(), seed=1)
    other.load_state_dict(backend.state_dict())
    assert other.oracle_refused == {Cell(0, 0.0)}
