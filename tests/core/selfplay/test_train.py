"""The train step (spade_core.selfplay.train): the trainer's figures, ``{}`` when it reports none,
timed as the ``train`` phase."""

from __future__ import annotations

from spade_core.interfaces import TrainingSample
from spade_core.phases import PhaseTimer
from spade_core.selfplay.train import train


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
