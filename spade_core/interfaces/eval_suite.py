"""Held-out evaluation suites: fixed items, played by the policy, scored by the suite's own scorer.

A suite yields :class:`EvalItem` s (deterministic for a seed) and scores replies. Single-turn
suites implement :meth:`EvalSuite.score` and inherit :meth:`EvalSuite.play`, which asks the
backend for ``settings.samples`` replies per item; interactive suites (environment programs
played through a sandbox) override :meth:`EvalSuite.play` instead. pass@k and the tables are
computed by the caller from what ``play`` returns.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spade_core.interfaces.backend import GenerationBackend


@dataclass(frozen=True)
class EvalItem:
    """One held-out item: the conversation the agent sees, and what scoring needs."""

    id: str
    #: The group the item is reported under (a difficulty bucket, a BFCL category).
    bucket: str
    #: Chat messages sent to the backend (empty for interactive items, whose first observation
    #: comes from the environment).
    prompt: tuple[dict[str, str], ...] = ()
    #: Tool schemas passed to the backend with the prompt (``None``: no tools).
    tools: tuple[dict[str, Any], ...] | None = None
    #: Replies, turn by turn, that solve the item (test fakes and sanity checks answer with them).
    gold: tuple[str, ...] = ()
    #: The item's text as a designer could copy it (the contamination guard compares with it).
    text: str = ""
    #: Whatever the suite's scorer needs (the dataset entry, the possible answers, a program).
    data: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class EvalSettings:
    """How items are played: samples per item, generation limits and the seed."""

    samples: int = 1
    max_new_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0
    #: Agent turns per episode for interactive suites.
    max_turns: int = 4
    #: A sample counts as solved when its score reaches this (``loop.success_threshold``).
    success_threshold: float = 1.0


class EvalSuite(ABC):
    """A held-out benchmark. Required: :meth:`items`; and a scorer unless :meth:`play` is
    overridden (interactive suites).

    Replies are untrusted text. The default is to score them in the sandbox: a suite overrides
    :meth:`score_many` with :func:`spade_core.eval.sandboxed_scoring.score_in_sandbox`. Only a suite
    whose :meth:`score` interprets no text (no ``eval``, ``exec``, ``compile``, ``sympify``,
    ``parse_expr``, ``pickle`` or third-party scorer reachable from a reply) sets
    :attr:`scores_in_process` and is scored by :meth:`score` in this process."""

    #: The suite's registered name (set by the class or the factory).
    name: str = ""
    #: ``True`` only when :meth:`score` is safe to run in the host process on hostile text.
    scores_in_process: bool = False

    @abstractmethod
    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        """At most ``limit`` items (``None``: all), the same ones for the same seed, spread over
        the buckets."""

    def score(self, item: EvalItem, reply: str) -> float:
        """The reply's score in [0, 1] by the benchmark's own rules (single-turn suites)."""
        raise NotImplementedError(f"{type(self).__name__} scores by play(), not score()")

    def extract(self, item: EvalItem, reply: str) -> str | None:
        """The answer the scorer reads from ``reply``, for ``--save-replies``; ``None`` when the
        suite does not say (the default). Host code: plain string processing only."""
        return None

    def score_many(self, pairs: Sequence[tuple[EvalItem, str]]) -> list[float]:
        """Scores of many ``(item, reply)`` pairs, in order. Suites that score in the sandbox
        override it; this default calls :meth:`score` in this process, which only a suite that
        declared :attr:`scores_in_process` may do."""
        if not self.scores_in_process:
            raise NotImplementedError(
                f"eval suite {self.name or type(self).__name__}: replies are untrusted and are "
                "scored in the sandbox by default; override score_many with "
                "spade_core.eval.sandboxed_scoring.score_in_sandbox, or set scores_in_process = True "
                "if score() interprets no text (docs/eval.md, 'Writing a suite')")
        return [float(self.score(item, reply)) for item, reply in pairs]

    def play(self, items: Sequence[EvalItem], backend: GenerationBackend,
             settings: EvalSettings) -> list[list[float]]:
        """Scores of ``settings.samples`` replies per item, in order. The default asks the
        backend once per sample index for every item sharing a tool set (seed ``seed + j`` for
        sample ``j``), so results depend only on the items, the backend and the seed; each
        sample's replies are scored in one :meth:`score_many` call."""
        scores: list[list[float]] = [[] for _ in items]
        groups: dict[str, list[int]] = {}
        for index, item in enumerate(items):
            groups.setdefault(repr(item.tools), []).append(index)
        for sample in range(settings.samples):
            replies: dict[int, str] = {}
            for indices in groups.values():
                tools = items[indices[0]].tools
                generations = backend.generate(
                    [list(items[i].prompt) for i in indices],
                    max_new_tokens=settings.max_new_tokens, temperature=settings.temperature,
                    seed=settings.seed + sample, tools=list(tools) if tools is not None else None)
                for i, generation in zip(indices, generations, strict=True):
                    replies[i] = generation.text
            order = sorted(replies)
            for i, value in zip(order, self.score_many([(items[i], replies[i]) for i in order]),
                                strict=True):
                scores[i].append(float(value))
        return scores

    def gold(self, items: Sequence[EvalItem]) -> dict[str, tuple[str, ...]]:
        """The solving replies of each item, keyed by the text of the first user message the
        agent sees (what a test fake can recognise). Interactive suites override it."""
        return {first_user_text(item.prompt): item.gold for item in items}

    def close(self) -> None:
        """Release what the suite holds; the default holds nothing."""


def first_user_text(conversation: Sequence[dict[str, Any]]) -> str:
    """The content of the first user message of a conversation (``""`` when there is none)."""
    for message in conversation:
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""
