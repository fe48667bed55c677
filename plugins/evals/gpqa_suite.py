"""The ``gpqa-diamond`` eval suite: the 198 graduate-level multiple-choice questions of GPQA's
Diamond set (Rein et al., 2023), read from the user's local copy of its public CSV or of the
Hugging Face dataset ``Idavidrein/gpqa`` (``eval.data.gpqa-diamond``; plugins/evals/datafiles.py).

Each question's correct answer and three incorrect ones are put in an order drawn from one seeded
stream over the questions in file order (seed 42, the reference's), shown as ``A.`` to ``D.``,
and the reply is scored by the letter it chooses: the last ``\\boxed{}`` holding a single choice
letter (``C``, ``(C)``, ``\\text{C}``, ``C: 2.4``), else the last "answer is C" / "Answer: C".
That is string matching only, so scoring runs in this process. With ``shuffles`` n every
question is also played in n - 1 further orders (own seeded streams), each an item, so the
figure averages over the orders. Buckets: the dataset's high-level domain.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import EvalItem, EvalSuite

from plugins.evals.datafiles import DataSource, Row, first_field, read_rows
from plugins.evals.items import spread
from plugins.evals.options import GpqaDiamondSuiteOptions
from plugins.families.answers import extract_boxed

SOURCE = DataSource(
    suite="gpqa-diamond", what="the GPQA Diamond questions (gpqa_diamond.csv)",
    where="github.com/idavidrein/gpqa (dataset.zip, password in its README) or the gated "
          "Hugging Face dataset Idavidrein/gpqa, config gpqa_diamond (use "
          "hf:Idavidrein/gpqa:gpqa_diamond once it is in your datasets cache)")
LETTERS = "ABCD"
QUESTION = "Question"
CORRECT = "Correct Answer"
INCORRECT = ("Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
INSTRUCTION = ("Please reason step by step, and put your final answer within \\boxed{}: the "
               "letter (A, B, C or D) of the correct choice only.")
#: The bucket of rows without a domain column.
DEFAULT_BUCKET = "diamond"

_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mbox|bf|rm)\s*\{([^{}]*)\}")
_BOXED_LETTER = re.compile(r"\(?([A-Da-d])\)?(?:[.:)].*)?", re.DOTALL)
#: No two adjacent repeats can share a character run (a reply of long blank runs stays linear).
_STATED_LETTER = re.compile(r"(?i:answer)(?:\s+is)?(?:\s*:)?\s*\(?([A-D])\)?(?!\w)")


def chosen_letter(reply: str) -> str | None:
    """The choice letter a reply gives (upper case), or ``None``."""
    boxed = extract_boxed(reply)
    if boxed is not None:
        text = _TEXT_WRAPPER.sub(r"\1", boxed).replace("$", "").strip().strip("{}").strip()
        match = _BOXED_LETTER.fullmatch(text[:400])
        return match.group(1).upper() if match else None
    stated = _STATED_LETTER.findall(reply)
    return stated[-1] if stated else None


class GpqaDiamondSuite(EvalSuite):
    """GPQA Diamond questions with shuffled choices, scored by the chosen letter."""

    name = "gpqa-diamond"
    scores_in_process = True

    def __init__(self, rows: Sequence[Row], shuffles: int = 1, shuffle_seed: int = 42) -> None:
        questions = [_question(row, index) for index, row in enumerate(rows)]
        if not questions:
            raise ConfigError(f"gpqa-diamond suite: the data holds no question; get "
                              f"{SOURCE.what} from {SOURCE.where}")
        self.buckets: dict[str, list[EvalItem]] = {}
        for shuffle in range(shuffles):
            # One stream over the questions in file order per shuffle; the first is the
            # reference's (random.Random(42)).
            rng = random.Random(shuffle_seed if shuffle == 0 else f"{shuffle_seed}/{shuffle}")
            for ident, bucket, question, choices in questions:
                order = list(range(4))
                rng.shuffle(order)
                suffix = f"/shuffle-{shuffle}" if shuffles > 1 else ""
                self.buckets.setdefault(bucket, []).append(
                    _item(f"{ident}{suffix}", bucket, question, [choices[j] for j in order],
                          LETTERS[order.index(0)]))

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        return spread(self.buckets, limit)

    def score(self, item: EvalItem, reply: str) -> float:
        return 1.0 if chosen_letter(reply) == item.data["answer"] else 0.0


def _question(row: Row, index: int) -> tuple[str, str, str, list[str]]:
    values = row.values
    missing = [c for c in (QUESTION, CORRECT, *INCORRECT) if first_field(values, [c]) is None]
    if missing:
        raise ConfigError(f"gpqa-diamond suite: {row.origin}, row {index + 1}: no "
                          f"{', '.join(repr(m) for m in missing)}; expected GPQA's own columns "
                          f"({QUESTION!r}, {CORRECT!r}, {', '.join(map(repr, INCORRECT))})")
    ident = str(first_field(values, ["Record ID", "id"]) or f"d{index}")
    bucket = str(first_field(values, ["High-level domain"]) or DEFAULT_BUCKET).strip().lower()
    choices = [str(values[c]).strip() for c in (CORRECT, *INCORRECT)]
    return ident, bucket, str(values[QUESTION]).strip(), choices


def _item(ident: str, bucket: str, question: str, choices: list[str], answer: str) -> EvalItem:
    listed = "\n".join(f"{letter}. {choice}" for letter, choice in zip(LETTERS, choices))
    return EvalItem(
        id=ident, bucket=bucket,
        prompt=({"role": "user", "content": f"{question}\n\n{listed}\n\n{INSTRUCTION}"},),
        gold=(f"\\boxed{{{answer}}}",), text=question,
        data={"answer": answer, "choices": choices})


def build(options: GpqaDiamondSuiteOptions, context: Any) -> GpqaDiamondSuite:
    return GpqaDiamondSuite(read_rows(options.data, SOURCE), options.shuffles,
                            options.shuffle_seed)
