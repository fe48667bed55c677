"""Helpers shared by the suites: spreading a limit over buckets and extracting final answers."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TypeVar

from plugins.families.answers import extract_boxed

T = TypeVar("T")
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def spread(buckets: Mapping[str, Sequence[T]], limit: int | None) -> list[T]:
    """At most ``limit`` items taken round robin over the buckets (in their order), so a small
    limit still covers every bucket; ``None`` takes everything, bucket by bucket."""
    if limit is None:
        return [item for items in buckets.values() for item in items]
    taken: list[T] = []
    depth = 0
    while len(taken) < limit and any(depth < len(items) for items in buckets.values()):
        for items in buckets.values():
            if depth < len(items) and len(taken) < limit:
                taken.append(items[depth])
        depth += 1
    return taken


def per_bucket(limit: int | None, buckets: int) -> int | None:
    """How many items each bucket must hold for :func:`spread` to reach ``limit``."""
    return None if limit is None else -(-limit // max(buckets, 1))


def final_answer(reply: str) -> str:
    """The answer of a reply, as the reasoning families read it: the last ``\\boxed{}``, else the
    last ``<answer>...</answer>``, else the whole reply."""
    boxed = extract_boxed(reply)
    if boxed is not None:
        return boxed.strip()
    tags = _ANSWER_TAG.findall(reply)
    if tags:
        return tags[-1].strip()
    return reply.strip()


def answer_reply(answer: str) -> str:
    """A reply whose :func:`final_answer` is exactly ``answer``: boxed when the box reads back
    unchanged, else in answer tags."""
    boxed = "\\boxed{" + answer + "}"
    if answer == answer.strip() and extract_boxed(boxed) == answer:
        return boxed
    return "<answer>" + answer + "</answer>"
