"""What both prompt strategies share: the designer's role, the grounding document and the memory's
examples, written the same way."""

from __future__ import annotations

import re

from spade_core.interfaces import EnvFamily, PromptExamples
from spade_core.records import DesignTarget

DESIGNER_SYSTEM = (
    "You are an environment designer. You read a document and turn what it teaches into a "
    "training task for a reasoning agent: a task that needs real thinking about the document's "
    "content, with one verifiable answer. Never put the answer in the text the agent sees."
)

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|$)", re.S)


def grounding(document_text: str, max_chars: int) -> str:
    text = " ".join(document_text.split())
    return text if len(text) <= max_chars else text[:max_chars].rsplit(" ", 1)[0] + " ..."


def examples_text(examples: PromptExamples, max_chars: int) -> str:
    """Frontier environments to imitate and mastered/too-hard ones to avoid, as prompt text."""
    parts = []
    for record in examples.positive:
        regret = record.stats.get("regret") if isinstance(record.stats, dict) else None
        note = f" (regret {regret:.2f})" if isinstance(regret, (int, float)) else ""
        parts.append(f"A good task at the right difficulty{note}:\n```python\n"
                     f"{record.source[:max_chars]}\n```")
    for record in examples.negative:
        why = {"mastered": "too easy: already mastered", "too_hard": "too hard: never solved"}.get(
            record.status, record.status)
        parts.append(f"Avoid tasks like this one ({why}):\n```python\n"
                     f"{record.source[:max_chars]}\n```")
    return "\n\n".join(parts)


def code_blocks(text: str) -> list[str]:
    return [m.group(1).strip("\n") for m in _FENCE.finditer(text)]


def family_block(family: EnvFamily, target: DesignTarget | None = None) -> str:
    """The family's guide: for ``target``, its skill's guide and what its level and variant ask;
    without one, the guide for every selected skill."""
    if target is None:
        return family.designer_guide().strip()
    guide = family.designer_guide(target.skill) if target.skill else family.designer_guide()
    brief = family.target_brief(target).strip()
    return guide.strip() + (f"\n\n{brief}" if brief else "")
