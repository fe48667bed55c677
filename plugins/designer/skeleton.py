"""``skeleton``: the designer fills the marked parts of its family's template (task text, answer,
...), which a small model can do; the program around them is the family's.

Two kinds of template, told apart by their markers:

- *slots*: ``{{NAME}}`` where a Python string literal goes, optionally described on a comment line
  ``# {{NAME}}: what to write``. The designer answers with ``NAME:`` lines; each value is inserted as
  a string literal (``repr``), so nothing the designer writes there is ever code. This is what a
  135M model can do.
- *code*: any other template (e.g. with ``<FILL: ...>`` markers). The designer returns the completed
  program in a python block, extracted as ``full-program`` does.
"""

from __future__ import annotations

import re

from spade_core.interfaces import EnvFamily, NoProgram, PromptExamples, PromptStrategy
from spade_core.interfaces.prompts import NO_TARGET
from spade_core.records import DesignTarget, Document

from plugins.designer.full_program import extract_program
from plugins.designer.options import SkeletonOptions
from plugins.designer.prompt_parts import (
    DESIGNER_SYSTEM,
    document_block,
    family_block,
    has_document,
)

SLOT = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")
_DESCRIBED = re.compile(r"#\s*\{\{([A-Z][A-Z0-9_]*)\}\}\s*:\s*(.+)")


def slots(template: str) -> dict[str, str]:
    """Slot name -> description, in order of first appearance."""
    described = {m.group(1): m.group(2).strip() for m in _DESCRIBED.finditer(template)}
    found: dict[str, str] = {}
    for match in SLOT.finditer(template):
        found.setdefault(match.group(1), described.get(match.group(1), match.group(1).lower()))
    return found


def parse_values(completion: str, names: list[str]) -> dict[str, str]:
    """``NAME: value`` sections; a value runs until the next known ``NAME:`` line. A slot may also
    be labelled by its initial when no other slot shares it (``Q:`` for ``QUESTION``), the way
    small models often write question and answer pairs."""
    initials = [n[0] for n in names]
    alias = {n[0]: n for n in names if initials.count(n[0]) == 1 and n[0] not in names}
    labels = list(names) + list(alias)
    pattern = re.compile(r"^\s*\**(" + "|".join(map(re.escape, labels)) + r")\**\s*:\s*",
                         re.M | re.I)
    matches = list(pattern.finditer(completion))
    values: dict[str, str] = {}
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(completion)
        value = completion[match.end():end].strip().strip("`").strip()
        label = match.group(1).upper()
        values.setdefault(alias.get(label, label), value)
    return values


def fill(template: str, values: dict[str, str]) -> str:
    body = "\n".join(line for line in template.splitlines() if not _DESCRIBED.match(line.strip()))
    return SLOT.sub(lambda m: repr(values[m.group(1)]), body) + "\n"


class Skeleton(PromptStrategy):
    def __init__(self, options: SkeletonOptions) -> None:
        self.options = options

    def build(self, document: Document, family: EnvFamily, examples: PromptExamples,
              target: DesignTarget = NO_TARGET) -> list[dict[str, str]]:
        template, example = family.skeleton_for(target)
        parts = slots(template)
        if not parts:
            grounded = " grounded in the document" if has_document(document.text) else ""
            user = (
                f"{document_block(document.text, self.options.document_chars)}\n\n"
                f"{family_block(family, target)}\n\nComplete this template into a task"
                f"{grounded}. Replace every marked part; keep everything else.\n```python\n"
                f"{template}\n```\nAnswer with the completed program in one ```python block."
            )
            return [{"role": "system", "content": DESIGNER_SYSTEM},
                    {"role": "user", "content": user}]
        lines = "\n".join(f"{name}: <{desc}>" for name, desc in parts.items())
        aim = _aim(family, target)
        messages = [{"role": "system", "content": DESIGNER_SYSTEM}]
        # A worked example, when the family gives one, is what makes a small model keep the format.
        if example is not None:
            example_doc, example_values = example
            messages += [
                {"role": "user", "content": self._ask(example_doc, aim, lines, family)},
                {"role": "assistant", "content": "\n".join(
                    f"{name}: {example_values[name]}" for name in parts)},
            ]
        if not has_document(document.text):
            # No corpus: the skill's own aim and ideas stand in for the document.
            aim = f"{family_block(family, target)}\n\n"
        messages.append({"role": "user", "content": self._ask(document.text, aim, lines, family)})
        return messages

    def _ask(self, text: str, aim: str, lines: str, family: EnvFamily) -> str:
        about = "this document" if has_document(text) else "this skill"
        request = (family.slot_request()
                   or f"Make one question about {about} whose answer is short and exact.")
        return (
            f"{document_block(text, self.options.document_chars)}\n\n"
            f"{aim}{request} Reply with exactly these lines:\n{lines}"
        )

    def extract(self, completion: str, family: EnvFamily,
                target: DesignTarget = NO_TARGET) -> str | None:
        template, _ = family.skeleton_for(target)
        names = list(slots(template))
        if not names:
            return extract_program(completion)
        values = parse_values(completion, names)
        missing = [n for n in names if not values.get(n)]
        if missing:
            raise NoProgram(f"no line gives {', '.join(missing)} (answer with the lines "
                            f"{', '.join(n + ': ...' for n in names)})")
        limit = self.options.max_value_chars
        canonical = family.canonical_slots({k: v[:limit] for k, v in values.items()})
        return fill(template, canonical) if canonical is not None else None


def _aim(family: EnvFamily, target: DesignTarget) -> str:
    """One short paragraph naming the target's skill and level, for a small model's prompt."""
    parts = [f"Skill: {target.skill}." if target.skill else "", family.target_brief(target)]
    text = " ".join(p.strip() for p in parts if p.strip())
    return f"{text}\n" if text else ""
