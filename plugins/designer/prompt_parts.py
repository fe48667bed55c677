"""What both prompt strategies share: the designer's role, the grounding document and the memory's
examples, written the same way."""

from __future__ import annotations

import ast
import functools
import re

from spade_core.interfaces import EnvFamily, PromptExamples
from spade_core.records import DesignTarget, EnvRecord
from spade_core.untrusted_text import PARSE_FAILURES, parse_python

DESIGNER_SYSTEM = (
    "You are an environment designer. You read a document and turn what it teaches into a "
    "training task for a reasoning agent: a task that needs real thinking about the document's "
    "content, with one verifiable answer. Never put the answer in the text the agent sees."
)

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|$)", re.S)


#: Stands in for the document when there is none (``corpus: none``): the skill's aim and ideas,
#: which the family block that follows gives, are what the environment is built from.
NO_DOCUMENT = (
    "There is no reference document for this task. Design the environment from the skill "
    "described below: pick one of its ideas or invent a fresh one that exercises the skill, and "
    "make up every fact the task needs."
)


def grounding(document_text: str, max_chars: int | None) -> str:
    """The document as shown: whitespace collapsed and cut near ``max_chars``; ``None`` or 0
    shows the whole (already truncated by the corpus) document as it is."""
    if not max_chars:
        return document_text.strip()
    text = " ".join(document_text.split())
    return text if len(text) <= max_chars else text[:max_chars].rsplit(" ", 1)[0] + " ..."


def has_document(document_text: str) -> bool:
    """Whether there is a document to ground on (``corpus: none`` gives empty ones)."""
    return bool(document_text.strip())


def document_block(document_text: str, max_chars: int | None) -> str:
    """The prompt's grounding part: the document, or :data:`NO_DOCUMENT` when it is empty."""
    if not has_document(document_text):
        return NO_DOCUMENT
    return f"Document:\n{grounding(document_text, max_chars)}"


def examples_text(examples: PromptExamples, max_chars: int) -> str:
    """Frontier environments to imitate and mastered/too-hard ones to avoid, as prompt text."""
    parts = []
    for record in examples.positive:
        regret = record.stats.get("regret") if isinstance(record.stats, dict) else None
        note = f" (regret {regret:.2f})" if isinstance(regret, (int, float)) else ""
        parts.append(f"A good task at the right difficulty{note}:\n```python\n"
                     f"{record.source[:max_chars]}\n```")
    if not examples.negative_code:
        for record in examples.negative:
            win = record.stats.get("win_rate") if isinstance(record.stats, dict) else None
            why = "too easy" if isinstance(win, (int, float)) and win > 0.5 else "too hard"
            rate = f", win rate {win:.2f}" if isinstance(win, (int, float)) else ""
            name = one_line_name(record)
            parts.append(f"Avoid tasks like: {name} ({why}{rate})")
        return "\n\n".join(parts)
    for record in examples.negative:
        why = {"mastered": "too easy: already mastered", "too_hard": "too hard: never solved"}.get(
            record.status, record.status)
        parts.append(f"Avoid tasks like this one ({why}):\n```python\n"
                     f"{record.source[:max_chars]}\n```")
    return "\n\n".join(parts)


def one_line_name(record: EnvRecord) -> str:
    """What a one-line negative example calls an environment: its description, else the first
    line of its environment class's docstring (designed programs have no description; a bare
    record id would tell the designer nothing to avoid), else its id."""
    name = record.description.strip() or env_docstring(record.source)
    return (name or record.id).splitlines()[0][:120]


@functools.lru_cache(maxsize=128)
def env_docstring(source: str) -> str:
    """The first non-empty docstring of ``source``'s environment classes, or ``""``. Cached:
    the memory shows the same few negatives in many prompts (a parse each, otherwise)."""
    try:
        tree = parse_python(source)
    except (SyntaxError, *PARSE_FAILURES):
        return ""
    classes = [n for n in getattr(tree, "body", []) if isinstance(n, ast.ClassDef)]
    docs = [ast.get_docstring(c) for c in classes if c.name.endswith("Env")]
    return next((d.strip() for d in docs if d and d.strip()), "")


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
