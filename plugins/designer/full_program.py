"""``full-program``: the designer writes the whole environment class, SPADE style."""

from __future__ import annotations

import re

from spade_core.interfaces import EnvFamily, PromptExamples, PromptStrategy
from spade_core.interfaces.prompts import NO_TARGET
from spade_core.records import DesignTarget, Document
from spade_core.untrusted_text import parse_python

from plugins.designer.options import FullProgramOptions
from plugins.designer.prompt_parts import (
    DESIGNER_SYSTEM,
    code_blocks,
    document_block,
    examples_text,
    family_block,
    has_document,
)

_ENV_CLASS = re.compile(r"^class\s+\w*Env\b", re.M)


class FullProgram(PromptStrategy):
    """Asks for one complete program in a python code block; extracts the block that parses and
    defines a class ending in ``Env``."""

    def __init__(self, options: FullProgramOptions) -> None:
        self.options = options

    def build(self, document: Document, family: EnvFamily, examples: PromptExamples,
              target: DesignTarget = NO_TARGET) -> list[dict[str, str]]:
        return self._messages(document, family, examples, target)

    def _messages(self, document: Document, family: EnvFamily, examples: PromptExamples,
                  target: DesignTarget) -> list[dict[str, str]]:
        shown = examples_text(examples, self.options.example_chars)
        grounded = " grounded in the document" if has_document(document.text) else ""
        user = (
            f"{document_block(document.text, self.options.document_chars)}\n\n"
            f"{family_block(family, target)}\n\n"
            + (f"{shown}\n\n" if shown else "")
            + f"Write one complete environment program{grounded}, in a single "
            "```python code block."
        )
        return [{"role": "system", "content": DESIGNER_SYSTEM}, {"role": "user", "content": user}]

    def extract(self, completion: str, family: EnvFamily,
                target: DesignTarget = NO_TARGET) -> str | None:
        return extract_program(completion)


def program_candidates(completion: str) -> list[str]:
    """The blocks that could hold the program: the completion's code blocks; without any, the
    text from the first line that defines an ``...Env`` class on."""
    candidates = code_blocks(completion)
    if not candidates:
        match = _ENV_CLASS.search(completion)
        candidates = [completion[completion.rfind("\n", 0, match.start()) + 1:]] if match \
            else []
    return candidates


def extract_program(completion: str) -> str | None:
    """The longest python block that parses and defines a class ending in ``Env``; failing that,
    the largest candidate (the sandbox's verdict then says what is wrong), or ``None``. Never
    raises, whatever the completion holds."""
    candidates = program_candidates(completion)
    if not candidates:
        return None
    # Longest first (a stable sort: among equal lengths, the first written); the first is also
    # what is handed on when none parses.
    ordered = sorted(candidates, key=len, reverse=True)
    with_env = [code for code in ordered if _ENV_CLASS.search(code)]
    if len(with_env) == 1 and with_env[0] is ordered[0]:
        # The only candidate that could be chosen is the one handed on anyway: whether it
        # parses changes nothing, and the sandbox's verdict says what is wrong if it does not.
        return ordered[0] + "\n"
    for code in with_env:
        try:
            parse_python(code)
        except SyntaxError:  # includes nesting too deep, NUL bytes, lone surrogates
            continue
        return code + "\n"
    # Hand the largest candidate to the sandbox anyway: its verdict says what is wrong.
    return ordered[0] + "\n"
