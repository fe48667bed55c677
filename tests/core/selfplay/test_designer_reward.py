"""The designer's reward (spade_core.selfplay.designer_reward): ``reward()`` (a played design's
estimate, a duplicate's and a refused proposal's configured rewards) and ``release()`` on a fake
memory (a window's designs rewarded over its plays); then regeneration windows
(``loop.schedule: window``) with the real loop, the real process sandbox
and the real FAISS memory, a scripted agent and a fake recording trainer: the same environments
in every iteration of a window and fresh ones after it; designer samples held with their
generation-time log-probs, trained once, at the next window's start, with the reward
recomputed over the window; no hinted episode and no failed attempt reaches the trainer."""

from __future__ import annotations

import json

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.difficulty_estimators as estimators_plugin
from plugins.difficulty_estimators import Regret, RegretOptions
from spade_core.config.schema import LoopSection
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import Trainer
from spade_core.records import Difficulty, EnvRecord, EnvStatus, Episode, Verdict
from spade_core.selfplay.designer_reward import Delayed, release, reward
from spade_core.selfplay.window import HeldDesign, Window

from fakes.selfplay import (
    FakeDictMemory,
    FakeSelfPlayPlugin,
    accepted_proposal,
    qa_program,
    run_real_sandbox_and_memory,
)


class FakeFiguresMemory(FakeDictMemory):
    """Keeps the figures the release adds to a window's first history entry."""

    def __init__(self):
        super().__init__()
        self.added = []

    def add_figures(self, env_id, iteration, figures):
        self.added.append((env_id, iteration, figures))
        return True


def test_reward_is_the_estimate_the_duplicate_reward_or_the_verdicts():
    played, duplicate, timeout, invalid = (accepted_proposal(qa_program(t), index=i)
                                           for i, t in enumerate(("a", "b", "c", "d")))
    played.unhinted = [Episode(env_id="", seed=0, hinted=False, first_observation="")]
    played.difficulty = Difficulty(figures={}, designer_reward=0.25)
    duplicate.refuse_as_duplicate("other", 0.99)
    timeout.reject(Verdict(False, "timeout", "no answer in time"))
    invalid.reject(Verdict(False, "syntax", "no program"))
    loop = LoopSection(duplicate_reward=-0.1, timeout_reward=-0.7, invalid_reward=-1.0)
    reward(loop, [played, duplicate, timeout, invalid])
    assert [p.designer_reward for p in (played, duplicate, timeout, invalid)] == \
        [0.25, -0.1, -0.7, -1.0]


def test_release_rewards_a_windows_designs_over_its_plays():
    program = qa_program("six times seven")
    env_id = accepted_proposal(program).env_id
    memory = FakeFiguresMemory()
    memory.add(EnvRecord(id=env_id, source=program, family="fake-qa",
                         status=EnvStatus.FRONTIER))
    memory.update_stats(env_id, 4, [1.0, 1.0], [0.0, 0.0], {}, 0.0)  # the window's start
    memory.update_stats(env_id, 5, [], [0.0, 1.0], {}, 0.0)
    asked = [{"role": "user", "content": "design"}, {"role": "assistant", "content": "..."}]
    window = Window(start=4, env_ids=[env_id], designs=[
        HeldDesign(env_id=env_id, family_name="fake-qa", messages=asked, skill="math"),
        HeldDesign(env_id="refused", family_name="fake-qa", messages=asked, skill="math",
                   fixed_reward=-1.0)])
    (played, refused), [delayed] = release(Regret(RegretOptions()), memory, window, 1.0,
                                           "regret", interval=2)
    assert (refused.group, refused.reward) == ("refused", -1.0)
    figures = played.meta["window_figures"]
    # Over the window: hinted 1.0 against every unhinted play (0, 0, 0, 1), the loop's regret.
    assert played.group == env_id and played.reward == figures["regret"] == 0.75
    assert played.meta["window_start"] == 4 and played.meta["skill"] == "math"
    assert delayed == Delayed(env_id, 4, played.reward, figures, trained=True)
    assert memory.added == [(env_id, 4, delayed.as_figures())]


#: A "broken" document makes the scripted designer answer without a program (a failed attempt).
TEXTS = ("six times seven", "broken one", "forty two", "seven sixes", "broken two", "two 21s")


class FakeRecordingTrainer(Trainer):
    """A fake trainer for tests: records every batch and answers ``record_logprobs`` with one
    log-prob per character of the completion (the shape matters, not the value)."""

    def __init__(self) -> None:
        self.batches: list[list] = []
        self.recorded: list[list] = []

    def train(self, samples):
        self.batches.append(list(samples))
        return {"samples": float(len(samples))}

    def record_logprobs(self, samples):
        self.recorded.append(list(samples))
        return [[-0.5] * len(s.messages[-1]["content"]) for s in samples]


class FakeTrainerPlugin:
    def __init__(self) -> None:
        self.trainers: list[FakeRecordingTrainer] = []

    def _build(self, options, context):
        self.trainers.append(FakeRecordingTrainer())
        return self.trainers[-1]

    @hookimpl
    def register_trainers(self, register):
        register("fake-recording", self._build)


def _run(tmp_path, iterations=4, interval=2, **loop):
    trainers = FakeTrainerPlugin()
    plugin = FakeSelfPlayPlugin(texts=TEXTS, learn_after=3)
    run_dir, rows = run_real_sandbox_and_memory(
        tmp_path, (plugin, designer_plugin, estimators_plugin, trainers), iterations,
        {"envs_per_iteration": 2, "rollouts_per_env": 2, "max_turns": 1, "max_attempts": 1,
         "schedule": "window", "regeneration_interval": interval, "hint_plays_per_env": 3,
         **loop},
        estimator="blend", trainer="fake-recording")
    return run_dir, rows, trainers.trainers[-1]


@pytest.mark.slow
def test_two_windows(tmp_path):
    run_dir, rows, trainer = _run(tmp_path)
    windows = [r["window"] for r in rows]
    assert [w["start"] for w in windows] == [0, 0, 2, 2]
    assert [w["offset"] for w in windows] == [0, 1, 0, 1]
    # Iterations 0 and 2 design (two documents each, one broken); 1 and 3 replay the window.
    assert [r["envs_proposed"] for r in rows] == [2, 0, 2, 0]
    assert [r["envs_replayed"] for r in rows] == [0, 1, 0, 1]
    assert [r["envs_played"] for r in rows] == [1, 1, 1, 1]
    played = [[b.group for b in batch if b.role == "agent"] for batch in trainer.batches]
    assert played[0] == played[1] and played[2] == played[3] and played[0] != played[2]
    # Only unhinted episodes reach the trainer: 2 per environment and iteration.
    for batch in trainer.batches:
        agents = [s for s in batch if s.role == "agent"]
        assert len(agents) == 2 and not any(s.meta["hinted"] for s in agents)
    # Hinted plays happen at a window's start only (3 of them), and never again in it.
    replays = [json.loads(line) for line in (run_dir / "replays.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in replays] == [1, 3]
    assert all(r["hinted_rewards"] == [] and len(r["unhinted_rewards"]) == 2 for r in replays)
    first = json.loads((run_dir / "envs" / f"{played[0][0]}.json").read_text())
    assert len(first["hinted_rewards"]) == 3
    # Designer samples: held at iteration 0 (the broken attempt is discarded, not held), released
    # once at iteration 2, never at 1 or 3; the last window's are never trained.
    designer = [[s for s in batch if s.role == "designer"] for batch in trainer.batches]
    assert [len(d) for d in designer] == [0, 0, 1, 0]
    [released] = designer[2]
    assert released.group == played[0][0]
    assert released.meta["window_start"] == 0
    assert released.meta["rollout_logps"] == [-0.5] * len(released.messages[-1]["content"])
    # The delayed blend over the window: regret 1 - mean(first iteration's unhinted plays) from
    # the scripted agent (right only when hinted until it has seen 3 episodes), win rate the mean
    # reward of the window's 4 unhinted plays: figures written by the estimator, checked here.
    figures = released.meta["window_figures"]
    assert figures["window_episodes"] == 4.0
    assert released.reward == pytest.approx(
        0.4 * min(max(figures["regret"] / 0.15, 0.0), 1.0) + 0.6 * figures["plateau_term"])
    # The delayed reward the designer was trained with sits in the environment's file beside
    # the immediate estimate (the last window's design, never released, has none).
    assert first["delayed"] == {"window_start": 0, "released_at": 2,
                                "designer_reward": released.reward, "figures": figures,
                                "trained": True}
    assert "delayed" not in json.loads(
        (run_dir / "envs" / f"{played[2][0]}.json").read_text())
    # env_reward_scale: 2 agent samples / 1 design x interval 2 = 4.
    assert released.meta["advantage_scale"] == 4.0
    assert [w["designs_held"] for w in windows][:2] == [1, 1]  # the broken attempt is not held
    assert [w["designs_released"] for w in windows] == [0, 0, 1, 0]
    assert len(trainer.recorded) == 2  # log-probs recorded when each window opened
