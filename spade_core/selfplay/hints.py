"""Privileged hints: a separate call of the same model reads the environment's source and writes
1-3 sentences on approach and answer format, never the answer (the reference's strategy). An
environment may supply its own hint as ``info["hint"]`` from ``reset``; that one wins."""

from __future__ import annotations

import re
from collections.abc import Sequence

from spade_core.interfaces import GenerationBackend

HINT_SYSTEM = (
    "You are a coach. You read the source code of a training task and write a hint for a player "
    "who cannot see the code. In 1 to 3 sentences say how to approach the task and the exact "
    "format the answer must have. Never state the answer itself or any value that gives it away. "
    "For tool-use tasks, name the tools to call and in what order, with placeholders such as "
    "<path> instead of concrete argument values."
)

MAX_HINT_CHARS = 600
FALLBACK_HINT = "Read the task carefully and answer in the requested format."

_WRAPPED = re.compile(r"\\boxed\{(.*)\}|<answer>(.*?)</answer>", re.S)


def hint_messages(program: str, first_observation: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": HINT_SYSTEM},
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
        for match in _WRAPPED.finditer(action):
            inner = (match.group(1) or match.group(2) or "").strip()
            if inner:
                found.append(inner)
    return found


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
    top_p: float | None = None,
    top_k: int | None = None,
) -> list[str]:
    """One hint per program: the environment's own ``info["hint"]`` when it gave one, otherwise
    the model's, generated in one batched call."""
    need = [i for i, hint in enumerate(provided) if not hint]
    hints = [str(h) if h else "" for h in provided]
    if need:
        generations = backend.generate(
            [hint_messages(programs[i], first_observations[i]) for i in need],
            max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, top_k=top_k,
            seed=seed)
        for i, generation in zip(need, generations, strict=True):
            hints[i] = clean_hint(generation.text) or FALLBACK_HINT
    return [clean_hint(h) if h else h for h in hints]
