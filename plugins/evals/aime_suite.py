"""The ``aime`` eval suite: the American Invitational Mathematics Examination problems of the
years the data holds (2024, 2025, 2026), one bucket per year, read from the user's local copy of
a public AIME dataset (``eval.data.aime``; plugins/evals/datafiles.py).

A reply is scored by its final answer, an integer 0-999 as every AIME answer is: the content of
its last ``\\boxed{}``, read as an integer after LaTeX noise is stripped (``073``, ``x = 73``,
``\\text{73}``, ``73^\\circ`` all read 73). Nothing interprets the text beyond that string
parsing, so scoring runs in this process (``scores_in_process``). With ``samples`` k the suite's
pass@1 is avg@k, the mean score over the k samples of every problem (the reference's figure).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import EvalItem, EvalSuite

from plugins.evals.datafiles import DataSource, Row, first_field, read_rows
from plugins.evals.items import spread
from plugins.evals.options import AimeSuiteOptions
from plugins.families.answers import extract_boxed

SOURCE = DataSource(
    suite="aime", what="the AIME problems and answers",
    where="the Hugging Face datasets HuggingFaceH4/aime_2024, MathArena/aime_2025 and "
          "MathArena/aime_2026 (or any copy of the Art of Problem Solving wiki's AIME problems "
          "with problem and answer columns)")
#: The standard instruction of math benchmarks, appended to each problem (as the reference
#: does) unless the problem text already asks for a boxed answer.
INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."

_PROBLEM_FIELDS = ("problem", "Problem", "question", "Question")
_ANSWER_FIELDS = ("answer", "Answer", "label", "expected_answer")
_ID_FIELDS = ("id", "ID", "problem_idx", "question_id", "idx")
_YEAR = re.compile(r"(?<!\d)(20\d\d)(?!\d)")
_SHORT_YEAR = re.compile(r"aime[_\- ]?(\d\d)(?!\d)", re.IGNORECASE)
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_NOISE = re.compile(r"\\[,;:! ]|\\quad|\\qquad|\\left|\\right|\$|\s")
_DEGREES = re.compile(r"\^\{?\\circ\}?|°")
_INTEGER = re.compile(r"-?\d+(?:\.0+)?")
_LAST_INTEGER = re.compile(r"\d+")


def boxed_integer(text: str) -> int | None:
    """The integer an answer text states (``073``, ``x = 73``, ``\\text{73}``, ``73^\\circ``),
    or ``None`` when it states something else (a fraction, an expression, words)."""
    s = _TEXT_WRAPPER.sub(r"\1", text)
    s = _DEGREES.sub("", _NOISE.sub("", s))
    s = s.rsplit("=", 1)[-1].strip("{}.").replace(",", "")
    if len(s) > 40 or not _INTEGER.fullmatch(s):
        return None
    return int(s.split(".")[0])


def reply_integer(reply: str, last_integer: bool = False) -> int | None:
    """A reply's final answer as an integer: its last ``\\boxed{}`` (``None`` if that is not an
    integer); without one, ``None``, or its last integer when ``last_integer``."""
    boxed = extract_boxed(reply)
    if boxed is not None:
        return boxed_integer(boxed)
    if last_integer:
        found = _LAST_INTEGER.findall(reply)
        return int(found[-1]) if found and len(found[-1]) <= 40 else None  # not a huge one
    return None


class AimeSuite(EvalSuite):
    """AIME problems bucketed by year, scored by the final integer."""

    name = "aime"
    scores_in_process = True

    def __init__(self, rows: Sequence[Row], years: Sequence[int] | None = None,
                 last_integer: bool = False) -> None:
        self.last_integer = last_integer
        by_year: dict[int, list[EvalItem]] = {}
        for index, row in enumerate(rows):
            year, item = _item(row, index)
            by_year.setdefault(year, []).append(item)
        if years is not None:
            missing = [y for y in years if y not in by_year]
            if missing:
                raise ConfigError(
                    f"aime suite: the data holds no problem of {', '.join(map(str, missing))} "
                    f"(it holds {', '.join(map(str, sorted(by_year))) or 'none'}); add that "
                    f"year's file to eval.data.aime (from {SOURCE.where}) or set aime.years")
            by_year = {y: by_year[y] for y in years}
        if not by_year:
            raise ConfigError(f"aime suite: the data holds no problem; {SOURCE.where}")
        self.buckets = {str(y): by_year[y] for y in sorted(by_year)}

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        return spread(self.buckets, limit)

    def score(self, item: EvalItem, reply: str) -> float:
        value = reply_integer(reply, self.last_integer)
        return 1.0 if value is not None and value == item.data["answer"] else 0.0


def _item(row: Row, index: int) -> tuple[int, EvalItem]:
    values = row.values
    where = f"aime suite: {row.origin}, row {index + 1}"
    problem = _problem(values)
    answer = first_field(values, _ANSWER_FIELDS)
    if not problem or answer is None:
        raise ConfigError(f"{where}: needs a problem ({' or '.join(_PROBLEM_FIELDS)}, or a "
                          f"prompt) and an answer ({' or '.join(_ANSWER_FIELDS)}); it has "
                          f"{', '.join(values) or 'no fields'}")
    value = boxed_integer(str(answer))
    if value is None:
        raise ConfigError(f"{where}: answer {answer!r} is not an integer (AIME answers are "
                          "integers 0-999)")
    year = _year(values, row.origin)
    if year is None:
        raise ConfigError(f"{where}: cannot tell the year: give a year column, or name the "
                          "file or dataset after it (aime-2025.jsonl, hf:MathArena/aime_2025)")
    ident = first_field(values, _ID_FIELDS)
    ident = str(ident if ident is not None else index)
    text = problem if "\\boxed" in problem else f"{problem}\n\n{INSTRUCTION}"
    return year, EvalItem(
        id=f"{year}/{ident}", bucket=str(year),
        prompt=({"role": "user", "content": text},),
        gold=(f"\\boxed{{{value}}}",), text=problem,
        data={"answer": value, "year": year})


def _problem(values: dict[str, Any]) -> str | None:
    problem = first_field(values, _PROBLEM_FIELDS)
    if problem is None:
        prompt = values.get("prompt")
        if isinstance(prompt, str):
            problem = prompt
        elif isinstance(prompt, list):  # chat messages, as the reference's prepared files
            users = [m.get("content") for m in prompt
                     if isinstance(m, dict) and m.get("role") == "user"]
            problem = users[-1] if users else None
    return str(problem).strip() if problem is not None else None


def _year(values: dict[str, Any], origin: str) -> int | None:
    year = values.get("year") or values.get("Year")
    if year is not None and str(year).strip().isdigit():
        return int(str(year).strip())
    for text in (str(first_field(values, _ID_FIELDS) or ""), origin):
        found = _YEAR.findall(text)
        if found:
            return int(found[-1])
        short = _SHORT_YEAR.findall(text)
        if short:
            return 2000 + int(short[-1])
    return None


def build(options: AimeSuiteOptions, context: Any) -> AimeSuite:
    return AimeSuite(read_rows(options.data, SOURCE), options.years, options.last_integer)
