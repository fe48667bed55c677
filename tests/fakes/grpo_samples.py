"""Fixed GRPO training samples on the bundled model: one multi-turn agent conversation, and
four agent plays in two groups plus two designer outputs built from it."""

from __future__ import annotations

from spade_core.interfaces import TrainingSample

CONVERSATION = [
    {"role": "system", "content": "You play a game."},
    {"role": "user", "content": "Question: what is 6 times 7?"},
    {"role": "assistant", "content": "\\boxed{41}"},
    {"role": "user", "content": "wrong, try again"},
    {"role": "assistant", "content": "\\boxed{42}"},
]


def grpo_samples() -> list[TrainingSample]:
    """Four agent plays in two groups of two (rewards 0 and 1) and two designer outputs."""
    samples = []
    for group in ("e1", "e2"):
        for k in range(2):
            conversation = [dict(m) for m in CONVERSATION]
            conversation[4]["content"] = f"\\boxed{{{40 + k}}}"
            samples.append(TrainingSample("agent", conversation, float(k), group=group))
    samples.append(TrainingSample("designer", [
        {"role": "system", "content": "You are an environment designer."},
        {"role": "user", "content": "Document: seven"},
        {"role": "assistant", "content": "QUESTION: 6*7?\nANSWER: 42"}], 1.0, group="e1"))
    samples.append(TrainingSample("designer", [
        {"role": "system", "content": "You are an environment designer."},
        {"role": "user", "content": "Document: eight"},
        {"role": "assistant", "content": "no idea"}], -0.5, group="e2"))
    return samples
