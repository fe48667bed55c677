"""The reasoning-gym prelude's base class, ReasoningGymEnv, run in this process: a program's
dataset and options are checked at load with messages that say what would be right, answers are
read from a box, answer tags or the whole reply, attempts are counted, and the oracle answer is
an action that scores 1. Its isolation in the sandbox is tested with the family
(tests/plugins/families/test_reasoning_gym.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("reasoning_gym", reason="the reasoning-gym extra is not installed")

from plugins.families.preludes.reasoning_gym_base import ReasoningGymEnv  # noqa: E402


def env(dataset: str, **attributes) -> ReasoningGymEnv:
    return type("ProgramEnv", (ReasoningGymEnv,), {"dataset": dataset, **attributes})()


def test_answer_tags_plain_text_and_several_attempts():
    session = env("chain_sum", max_attempts=2)
    session.reset(5)
    answer = session.solution()[len("\\boxed{"):-1]
    observation, _, terminated, truncated, info = session.step(
        "I think it is \\boxed{" + answer + "1}")
    assert (terminated, truncated, info["attempts_left"]) == (False, False, 1)
    assert "1 attempt left" in observation
    _, reward, terminated, _, _ = session.step(f"<answer>{answer}</answer>")
    assert (reward, terminated) == (1.0, True)
    assert session.step("\\boxed{1}")[0].startswith("The episode is over")
    session.reset(5)
    assert session.step(f"  {answer} ")[1] == 1.0  # the whole reply as the answer


def test_the_same_seed_gives_the_same_question_and_the_oracle_scores_one():
    first, second = env("leg_counting"), env("leg_counting")
    question, info = first.reset(11)
    assert second.reset(11)[0] == question and first.solution() == second.solution()
    assert info == {"dataset": "leg_counting", "seed": 11, "attempts_left": 1}
    assert "\\boxed{" in question and first.reset(12)[0] != question
    assert first.step(first.solution())[1:3] == (1.0, True)


@pytest.mark.parametrize("attributes, message", [
    ({"dataset": None}, "must name a reasoning-gym dataset"),
    ({"dataset": "leg_countin"}, "is not a reasoning-gym dataset"),
    ({"config": {"size": 3}}, "must not set size"),
    ({"config": {"colour": 1}}, "leg_counting has no option colour"),
    ({"max_attempts": 0}, "max_attempts must be a positive int"),
])
def test_a_wrong_dataset_option_or_attempt_count_fails_at_load(attributes, message):
    attributes = {"dataset": "leg_counting", **attributes}
    with pytest.raises(ValueError, match=message):
        env(**attributes)


def test_step_before_reset_asks_for_reset_and_close_forgets_the_episode():
    session = env("leg_counting")
    with pytest.raises(RuntimeError, match="call reset"):
        session.step("\\boxed{1}")
    session.reset(1)
    session.close()
    with pytest.raises(RuntimeError, match="call reset"):
        session.solution()
