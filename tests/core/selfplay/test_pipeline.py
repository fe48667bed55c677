"""Asynchronous training's parts (spade_core.selfplay.pipeline): the versioned backend and its
ledger, and the background trainer's staleness bound. The loop that uses them is tested in
test_async_loop.py."""

from __future__ import annotations

from spade_core.interfaces import Generation, GenerationBackend, TrainingSample
from spade_core.selfplay.pipeline import (
    BackgroundTrainer,
    Generated,
    VersionedBackend,
    reply_key,
    stamp_samples,
)

from fakes.training import FakeCountingTrainer


class FakeEchoBackend(GenerationBackend):
    def generate(self, conversations, **kwargs):
        return [Generation(text=f"reply {len(c)}", logprobs=[-1.0, -2.0]) for c in conversations]


def test_the_ledger_records_version_and_logprobs_and_stamps_each_turn():
    backend = VersionedBackend(FakeEchoBackend(), version=3)
    first = [{"role": "user", "content": "a"}]
    backend.generate([first], max_new_tokens=4, temperature=1.0)
    backend.mark(4)
    second = first + [{"role": "assistant", "content": "reply 1"},
                      {"role": "user", "content": "b"}]
    backend.generate([second], max_new_tokens=4, temperature=1.0)
    ledger = backend.take_ledger()
    assert ledger[reply_key(first, "reply 1")] == (3, [-1.0, -2.0])
    assert backend.take_ledger() == {}  # taken once
    sample = TrainingSample(role="agent", reward=1.0,
                            messages=second + [{"role": "assistant", "content": "reply 3"}])
    unknown = TrainingSample(role="agent", reward=0.0, messages=[
        {"role": "user", "content": "x"}, {"role": "assistant", "content": "never generated"}])
    stamp_samples([sample, unknown], ledger, iteration=7, floor=2)
    # the oldest version among its replies; log-probs per assistant message
    assert sample.meta["policy_version"] == 3 and sample.meta["sample_id"] == "7:0"
    assert sample.meta["turn_logps"] == [[1, [-1.0, -2.0]], [3, [-1.0, -2.0]]]
    assert sample.meta["turn_versions"] == [[1, 3], [3, 4]]
    assert unknown.meta["policy_version"] == 2 and "turn_logps" not in unknown.meta


def test_the_background_trainer_drops_samples_older_than_the_bound():
    trainer = FakeCountingTrainer()
    background = BackgroundTrainer(trainer, None, level=1, version=5)
    samples = [TrainingSample(role="agent", messages=[], reward=0.0,
                              meta={"policy_version": v, "sample_id": f"0:{v}"})
               for v in (5, 4, 3)]
    held = TrainingSample(role="designer", messages=[], reward=0.0, meta={"window_start": 0})
    background.submit(Generated(0, samples + [held], {}))
    (done,), _ = background.collect(keep=0)
    background.close()
    assert done.staleness == [0, 1] and done.dropped == 1  # version 3 is 2 updates old
    assert [t[1] for t in trainer.trained] == ["0:5", "0:4"]
    assert trainer.samples_seen == 3  # the held design is the window's, never dropped
    assert background.version == 6 == done.version


