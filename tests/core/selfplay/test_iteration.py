"""One iteration's steps (spade_core.selfplay.iteration) as the hooks see them: environments
accepted and mastered, the iteration's end and each phase's progress, with fakes; and the train
step: the trainer's figures, ``{}`` when it reports none, timed as the ``train`` phase."""

from __future__ import annotations

from spade_core.interfaces import TrainingSample
from spade_core.phases import PhaseTimer
from spade_core.selfplay.iteration import train

from fakes.selfplay import make_run


def test_hook_spade_iteration_end(tmp_path):
    _, recorder = make_run(tmp_path)
    ends = [e for e in recorder.events if e[0] == "iteration_end"]
    assert [e[1] for e in ends] == [0, 1] and "mean_regret" in ends[0][2]


def test_hook_spade_phase_progress(tmp_path):
    _, recorder = make_run(tmp_path)
    progress = [e for e in recorder.events if e[0] == "phase_progress" and e[1] == 0]
    phases = {e[2] for e in progress}
    assert {"sample", "design", "validate", "dedupe", "hint", "rollout", "estimate",
            "remember", "train"} <= phases
    rollout = [e for e in progress if e[2] == "rollout"]
    # 2 environments x 3 seeds, hinted and unhinted: the bar ends full and never goes back.
    assert rollout[-1][3:] == (12, 12)
    assert [e[3] for e in rollout] == sorted(e[3] for e in rollout)
    for phase in phases:
        last = [e for e in progress if e[2] == phase][-1]
        assert last[4] is None or last[3] <= last[4], last


def test_hook_spade_env_accepted(tmp_path):
    _, recorder = make_run(tmp_path)
    assert len([e for e in recorder.events if e[0] == "env_accepted"]) == 4


def test_hook_spade_env_mastered(tmp_path):
    _, recorder = make_run(tmp_path)
    assert not [e for e in recorder.events if e[0] == "env_mastered"]  # regret 1: not mastered
    _, recorder = make_run(tmp_path / "b", always_right=True)
    assert [e for e in recorder.events if e[0] == "env_mastered"]


class _Trainer:
    def __init__(self, figures):
        self.figures, self.seen = figures, []

    def train(self, samples):
        self.seen.append(list(samples))
        return self.figures


def test_train_returns_the_trainers_figures_and_times_the_phase():
    progress = []
    timer = PhaseTimer(on_progress=lambda *event: progress.append(event))
    samples = [TrainingSample(role="agent", messages=[], reward=1.0)] * 3
    trainer = _Trainer({"loss": 0.25})
    assert train(trainer, samples, timer) == {"loss": 0.25}
    assert trainer.seen == [samples]
    assert "train" in timer.seconds and progress[-1] == ("train", 3, 3)


def test_a_trainer_that_reports_nothing_gives_empty_figures():
    assert train(_Trainer(None), [], PhaseTimer()) == {}
