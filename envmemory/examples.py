"""The reference's choice of designer prompt examples (``memory.options.examples: reference``).

Positives: drawn at random from the highest-regret played environments of the prompt's skill
whose unhinted win rate lies in the band (0.15 to 0.85 by default); negatives: drawn at random
from the same skill's environments the agent almost always or almost never wins. The reference
draws from an unseeded RNG; here the draw is seeded by the run seed, iteration and proposal."""

from __future__ import annotations

import random
from collections.abc import Sequence

from spade_core.interfaces.prompts import PromptExamples
from spade_core.records import EnvRecord

#: Win rates above this are "too easy", below :data:`REFERENCE_TOO_HARD` "too hard".
REFERENCE_TOO_EASY = 0.9
REFERENCE_TOO_HARD = 0.1


def reference_examples(band: Sequence[EnvRecord], outside: Sequence[EnvRecord], positive: int,
                       negative: int, seed: int) -> PromptExamples:
    """``positive`` records drawn without replacement from ``band`` (the top ``max(3 *
    positive, 10)`` in the win band, highest regret first) and ``negative`` from ``outside`` (win
    rate above 0.9 or below 0.1), with an RNG seeded by ``seed``; the negatives are shown as one
    line each, without code."""
    rng = random.Random(f"spade-examples:{seed}")
    candidates = list(band)[:max(3 * positive, 10)]
    chosen = rng.sample(candidates, min(positive, len(candidates)))
    avoid = rng.sample(list(outside), min(negative, len(outside)))
    return PromptExamples(positive=chosen, negative=avoid, negative_code=False)
