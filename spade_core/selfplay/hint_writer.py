"""Privileged hints: a separate call (of the policy, or of ``hints.backend``) reads the
environment's source and writes 1-3 sentences on approach and answer format, never the answer (the
reference's strategy). The family picks the instructions (:meth:`EnvFamily.hint_instructions`: a
game prompt by default, a procedural one for tool use). An environment may supply its own hint as
``info["hint"]`` from ``reset``; that one wins.

Each hint is judged afterwards (:class:`HintDiagnostics`): redacted for leaking the solution, the
hinted plays doing worse than the unhinted ones, and, where the family can tell, contradicting the
solution's answer."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from spade_core.hint_prompts import HINT_SYSTEM
from spade_core.interfaces import GenerationBackend

MAX_HINT_CHARS = 600
FALLBACK_HINT = "Read the task carefully and answer in the requested format."

#: What a solution action wraps: a greedy ``\\boxed{...}`` (to the last closing brace) or an
#: ``<answer>...</answer>``, whichever comes first (:func:`_wrapped`).
_BOXED_WRAP = re.compile(r"\\boxed\{(.*)\}", re.S)
_ANSWER_WRAP = re.compile(r"<answer>(.*?)</answer>", re.S)


def hint_messages(program: str, first_observation: str,
                  system: str = HINT_SYSTEM) -> list[dict[str, str]]:
    """The hint call's conversation: ``system`` (the instructions) and the program."""
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": (
            f"Task source code:\n```python\n{program}\n```\n\n"
            f"The player sees this first:\n{first_observation}\n\nWrite the hint now."
        )},
    ]


def clean_hint(text: str) -> str:
    """First three sentences of the model's answer, without code fences or a "Hint:" label."""
    text = re.sub(r"```.*?(```|$)", " ", text, flags=re.S)
    text = re.sub(r"^\s*(hint\s*:)\s*", "", text.strip(), flags=re.I)
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    return " ".join(sentences[:3])[:MAX_HINT_CHARS].strip()


def secrets_of(actions: Sequence[str]) -> list[str]:
    """The strings a hint must not contain: each solution action and what it wraps in
    ``\\boxed{}`` or ``<answer>``."""
    found = []
    for action in actions:
        action = action.strip()
        if action:
            found.append(action)
        found.extend(inner for inner in (w.strip() for w in _wrapped(action)) if inner)
    return found


def _wrapped(text: str) -> list[str]:
    """What ``text`` wraps, in order: as ``re.finditer`` of the two patterns as alternatives
    gives it, in linear time. Each pattern searches only up to just past the last occurrence of
    its closing text (so no unclosed start is rescanned to the end: a 60,000-character solution
    of unclosed tags once took seconds), and its next match is kept until it is passed."""
    ends = {_BOXED_WRAP: text.rfind("}") + 1,
            _ANSWER_WRAP: max(text.rfind("</answer>"), -len("</answer>")) + len("</answer>")}
    found: list[str] = []
    pos = 0
    upcoming: dict[re.Pattern[str], re.Match[str] | None] = {}
    while True:
        for pattern, end in ends.items():
            match = upcoming.get(pattern, ...)
            if match is ... or (match is not None and match.start() < pos):
                upcoming[pattern] = pattern.search(text, pos, end) if pos < end else None
        candidates = [m for m in upcoming.values() if m is not None]
        if not candidates:
            return found
        first = min(candidates, key=lambda m: (m.start(), m.re is _ANSWER_WRAP))
        found.append(first.group(1))
        pos = first.end()


def redact_leaks(hint: str, secrets: Sequence[str]) -> tuple[str, bool]:
    """Drop every sentence of ``hint`` that contains a secret (as a whole word when it is one)."""
    patterns = [re.compile(rf"(?<!\w){re.escape(s)}(?!\w)", re.I) for s in secrets if s]
    sentences = re.split(r"(?<=[.!?])\s+", hint)
    kept = [s for s in sentences if not any(p.search(s) for p in patterns)]
    if len(kept) == len(sentences):
        return hint, False
    return (" ".join(kept).strip() or FALLBACK_HINT), True


def generate_hints(
    backend: GenerationBackend,
    programs: Sequence[str],
    first_observations: Sequence[str],
    provided: Sequence[str | None],
    *,
    max_new_tokens: int,
    temperature: float,
    seed: int,
    systems: Sequence[str] | None = None,
    top_p: float | None = None,
    top_k: int | None = None,
) -> list[str]:
    """One hint per program: the environment's own ``info["hint"]`` when it gave one, otherwise
    the model's, generated in one batched call; ``systems`` are the instructions per program
    (default :data:`HINT_SYSTEM`)."""
    systems = list(systems) if systems is not None else [HINT_SYSTEM] * len(programs)
    need = [i for i, hint in enumerate(provided) if not hint]
    hints = [str(h) if h else "" for h in provided]
    if need:
        generations = backend.generate(
            [hint_messages(programs[i], first_observations[i], systems[i]) for i in need],
            max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, top_k=top_k,
            seed=seed)
        for i, generation in zip(need, generations, strict=True):
            hints[i] = clean_hint(generation.text) or FALLBACK_HINT
    return [clean_hint(h) if h else h for h in hints]


# -- judging hints -------------------------------------------------------------------------------

_WRAPPED_CLAIMS = (
    (re.compile(r"\\boxed\{([^{}]*)\}"), "}"),
    (re.compile(r"<answer>(.*?)</answer>", re.S), "</answer>"),
)
_STATED_CLAIM = re.compile(r"\banswers?\s*(?:\bis\b|=|:)\s*[\"'`]?([^\"'`.,;!?\n]+)", re.I)
#: First words of a description rather than an answer ("the answer is a whole number").
_NOT_A_VALUE = {"a", "an", "the", "one", "some", "either", "in", "your", "not", "any", "what",
                "which", "how", "given", "always", "never", "usually", "just", "only", "between",
                "expected", "written", "formatted", "case", "whatever"}


def answer_claims(hint: str) -> list[str]:
    """The answers ``hint`` states outright: ``\\boxed{X}``, ``<answer>X</answer>`` and "the
    answer is X" (X up to the next punctuation, at most four words, not a description such as
    "a whole number"). Placeholders such as ``<value>`` or ``...`` are not claims. Plain text
    handling only: nothing in the hint is evaluated."""
    found = []
    for pattern, closing in _WRAPPED_CLAIMS:  # searched up to their last closing: linear
        end = hint.rfind(closing)
        if end >= 0:
            found += [m.group(1).strip() for m in pattern.finditer(hint, 0, end + len(closing))]
    for match in _STATED_CLAIM.finditer(hint):
        claim = match.group(1).strip()
        words = claim.lower().split()
        if words and len(words) <= 4 and words[0] not in _NOT_A_VALUE and claim[0] not in "\\<":
            found.append(claim)
    return [c for c in found if c and not _placeholder(c)]


def _placeholder(claim: str) -> bool:
    bare = claim.strip("<>[]{}() ")
    return (not bare or set(bare) <= set(".\u2026_- ") or claim.startswith("<")
            or claim.lower() in {"x", "n", "your answer", "answer"})


def solution_answer(actions: Sequence[str] | None) -> str | None:
    """The answer a solution ends with: what its last action wraps in ``\\boxed{}`` or
    ``<answer>``, or the last action itself; ``None`` without actions."""
    if not actions:
        return None
    last = actions[-1].strip()
    inner = secrets_of([last])
    return inner[-1] if len(inner) > 1 else last or None


def contradicts_answer(hint: str, actions: Sequence[str] | None,
                       same: Callable[[str, str], bool]) -> bool | None:
    """Whether ``hint`` claims an answer that ``same`` says differs from the solution's answer
    (:func:`solution_answer`); ``None`` (cannot tell) when the hint claims none or the solution
    has no answer. A helper for families' :meth:`EnvFamily.hint_contradicts`."""
    answer = solution_answer(actions)
    claims = answer_claims(hint)
    if answer is None or not claims:
        return None
    return any(not same(claim, answer) for claim in claims)


@dataclass
class HintDiagnostics:
    """How one environment's hint fared in one iteration (``envs/<id>.json``, metrics counts).

    ``hurt`` and ``contradicts`` are ``None`` when they cannot be told: no hinted plays this
    iteration, or a family (or solution) that cannot say what the answer is."""

    #: ``model``: written by the hint call; ``env``: the environment's own ``info["hint"]``;
    #: ``kept``: a replay's hint from its first play.
    source: str = "model"
    redacted: bool = False
    #: Mean hinted reward below mean unhinted reward.
    hurt: bool | None = None
    contradicts: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def hint_hurt(hinted: Sequence[float], unhinted: Sequence[float]) -> bool | None:
    """Whether the hinted plays did worse on average than the unhinted ones (``None`` without
    both)."""
    if not hinted or not unhinted:
        return None
    return sum(hinted) / len(hinted) < sum(unhinted) / len(unhinted)
