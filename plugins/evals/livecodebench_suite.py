"""The ``livecodebench`` eval suite: LiveCodeBench code generation (the release_v6 problems),
pass@1, each reply's program run against the problem's tests in a sandbox worker.

Data: a JSONL file in LiveCodeBench's ``code_generation_lite`` format (``test6.jsonl`` is the
problems release_v6 added), named by the suite's ``data`` option (``eval.data.livecodebench``):
the file itself, or a folder holding it (a Hugging Face cache of the dataset repository works).
Nothing is downloaded. The host reads the data as JSON only: private tests stored compressed
(base64 of zlib of a pickle) are handed to the scorer as they are and decoded in the worker
(``plugins/evals/preludes/lcb_scorer.py``), never unpickled here.

The prompt is LiveCodeBench's own for chat models; the program is the code between the reply's
last two fence lines, as LiveCodeBench extracts it; a reply passes when the program passes every
public and private test (stdin problems: the output compared line by line, numbers as decimals;
functional problems: ``Solution().<func_name>(*args)`` equal to the JSON answer)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import EvalItem, EvalSettings, EvalSuite, Sandbox
from spade_core.eval.sandboxed_scoring import ScorerFamily, request_job, score_in_sandbox

from plugins.evals.items import spread
from plugins.evals.options import LiveCodeBenchSuiteOptions

DATA_FILE = "test6.jsonl"
WHERE_TO_GET = ("the Hugging Face dataset livecodebench/code_generation_lite "
                "(https://huggingface.co/datasets/livecodebench/code_generation_lite); set "
                "eval.data.livecodebench to the file or the folder holding the files")
#: The data files of each release, as the dataset's loader maps them: ``release_vN`` is
#: cumulative (``test.jsonl`` .. ``testN.jsonl``), ``vN`` the problems release N added.
RELEASE_FILES: dict[str, tuple[str, ...]] = {
    **{f"release_v{n}": tuple("test.jsonl" if k == 1 else f"test{k}.jsonl"
                              for k in range(1, n + 1)) for n in range(1, 7)},
    **{f"v{n}": ("test.jsonl" if n == 1 else f"test{n}.jsonl",) for n in range(1, 7)}}
DIFFICULTIES = ("easy", "medium", "hard")
SCORER_SOURCE = "lcb_scorer.py"

SYSTEM = ("You are an expert Python programmer. You will be given a question (problem "
          "specification) and will generate a correct Python program that matches the "
          "specification and passes all tests.")
FORMAT_STARTER = ("You will use the following starter code to write the solution to the problem "
                  "and enclose your code within delimiters.")
FORMAT_STDIN = ("Read the inputs from stdin solve the problem and write the answer to stdout "
                "(do not directly test on the sample inputs). Enclose your code within "
                "delimiters as follows. Ensure that when the python program runs, it reads the "
                "inputs, runs the algorithm and writes output to STDOUT.")
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")


@cache
def scorer_family() -> ScorerFamily:
    """The sandbox scorer that runs a candidate program against its tests."""
    from plugins.evals.preludes import lcb_scorer

    source = resources.files("plugins.evals.preludes").joinpath(SCORER_SOURCE).read_text(
        encoding="utf-8")
    return ScorerFamily("livecodebench", source, lcb_scorer.PRELOAD)


def prompt_text(question: str, starter_code: str) -> str:
    """LiveCodeBench's chat prompt: the question, then the starter code or the stdin format."""
    text = f"### Question:\n{question}\n\n"
    if starter_code:
        text += f"### Format: {FORMAT_STARTER}\n```python\n{starter_code}\n```\n\n"
    else:
        text += f"### Format: {FORMAT_STDIN}\n```python\n# YOUR CODE HERE\n```\n\n"
    text += "### Answer: (use the provided format with backticks)\n\n"
    return SYSTEM + "\n\n" + text


def extract_code(reply: str) -> str:
    """The lines between the reply's last two lines holding a code fence (empty without two)."""
    lines = reply.split("\n")
    fences = [i for i, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[-2] + 1:fences[-1]])


def find_data(path: str | None) -> Path:
    """The JSONL file ``path`` names (a file, or a folder holding ``test6.jsonl`` somewhere
    below it); a ``ConfigError`` naming what is missing and where to get it otherwise."""
    if not path:
        raise ConfigError("livecodebench suite: no data file; it reads the file test6.jsonl of "
                          + WHERE_TO_GET)
    where = Path(path).expanduser()
    if where.is_file():
        return where
    if where.is_dir():
        found = sorted(where.rglob(DATA_FILE))
        if found:
            return found[0]
        raise ConfigError(f"livecodebench suite: no {DATA_FILE} under {where}; it reads "
                          f"that file of " + WHERE_TO_GET)
    raise ConfigError(f"livecodebench suite: data file {where} does not exist; it reads "
                      f"the file test6.jsonl of " + WHERE_TO_GET)


def find_release(path: str | None, release: str) -> list[Path]:
    """The files of ``release`` (:data:`RELEASE_FILES`) under the folder ``path`` names (or the
    folder of the file it names); a ``ConfigError`` listing exactly the files missing."""
    if release not in RELEASE_FILES:
        raise ConfigError(f"livecodebench suite: release {release!r}; releases are "
                          f"{', '.join(RELEASE_FILES)}")
    names = RELEASE_FILES[release]
    wanted = f"{release} reads {', '.join(names)} of " + WHERE_TO_GET
    if not path:
        raise ConfigError(f"livecodebench suite: no data; {wanted}")
    where = Path(path).expanduser()
    folder = where.parent if where.is_file() else where
    if not folder.is_dir():
        raise ConfigError(f"livecodebench suite: data folder {where} does not exist; {wanted}")
    found: dict[str, Path] = {}
    for name in names:
        matches = sorted(folder.rglob(name))
        if matches:
            found[name] = matches[0]
    missing = [n for n in names if n not in found]
    if missing:
        raise ConfigError(f"livecodebench suite: {', '.join(missing)} not found under {folder}; "
                          f"{wanted}")
    return [found[n] for n in names]


def _tests(value: Any, where: str) -> tuple[list[dict[str, str]], list[str]]:
    """A test-case field as (plain tests, packed blobs for the worker)."""
    if isinstance(value, list):
        return value, []
    if not isinstance(value, str) or not value.strip():
        return [], []
    try:
        decoded = json.loads(value)
    except ValueError:
        if not _BASE64.fullmatch(value):
            raise ConfigError(f"livecodebench suite: {where} is neither a JSON list nor "
                              "LiveCodeBench's compressed form (base64)") from None
        return [], [value]
    if not isinstance(decoded, list):
        raise ConfigError(f"livecodebench suite: {where} is not a list of tests")
    return decoded, []


def _day(value: Any) -> date | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value).date()
    except ValueError:
        return None


def load_problems(file: Path, start: date | None = None, end: date | None = None
                  ) -> list[EvalItem]:
    """The problems of ``file`` whose ``contest_date`` lies in ``[start, end]``, as items."""
    items = []
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = f"{file}:{number}"
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ConfigError(f"livecodebench suite: {where} is not JSON ({exc})") from None
            try:
                item = _item(row, where)
            except (KeyError, TypeError) as exc:
                raise ConfigError(f"livecodebench suite: {where} lacks LiveCodeBench's field "
                                  f"{exc}") from None
            day = _day(row.get("contest_date"))
            if (start and (day is None or day < start)) or (end and (day is None or day > end)):
                continue
            items.append(item)
    return items


def _item(row: dict[str, Any], where: str) -> EvalItem:
    public, public_packed = _tests(row["public_test_cases"], where + " public_test_cases")
    private, private_packed = _tests(row.get("private_test_cases", ""),
                                     where + " private_test_cases")
    tests = public + private
    functional = any(t.get("testtype") == "functional" for t in tests) or bool(
        row.get("starter_code"))
    metadata = row.get("metadata") or "{}"
    metadata = json.loads(metadata) if isinstance(metadata, str) else metadata
    starter = row.get("starter_code") or ""
    text = prompt_text(row["question_content"], starter)
    difficulty = str(row.get("difficulty") or "unknown").lower()
    request = {"mode": "call" if functional else "stdin",
               "fn_name": metadata.get("func_name") or "",
               "tests": [{"input": t["input"], "output": t["output"]} for t in tests],
               "packed": public_packed + private_packed}
    return EvalItem(id=f"livecodebench/{row['question_id']}", bucket=difficulty,
                    prompt=({"role": "user", "content": text},), text=row["question_content"],
                    data={"request": request, "contest_date": row.get("contest_date")})


class LiveCodeBenchSuite(EvalSuite):
    """LiveCodeBench code generation; each difficulty is a bucket."""

    name = "livecodebench"

    def __init__(self, data: str | None, start_date: date | None = None,
                 end_date: date | None = None, test_seconds: float = 6.0,
                 sandbox: Sandbox | None = None, release: str | None = None,
                 temperature: float | None = None) -> None:
        self.files = find_release(data, release) if release else [find_data(data)]
        self.file = self.files[-1]
        self.problems = [item for file in self.files
                         for item in load_problems(file, start_date, end_date)]
        if not self.problems:
            raise ConfigError(f"livecodebench suite: {', '.join(map(str, self.files))} hold no "
                              f"problem dated between {start_date or 'the start'} and "
                              f"{end_date or 'the end'}")
        self.test_seconds = test_seconds
        self.temperature = temperature
        #: Where the programs run (``None`` only for a suite built to list its items).
        self.sandbox = sandbox
        #: Reported with the result (the paper's table says when another release was played).
        self.notes: dict[str, Any] = {"release": release or "file",
                                      "files": [f.name for f in self.files],
                                      "temperature": temperature}

    def play(self, items: Sequence[EvalItem], backend: Any, settings: EvalSettings
             ) -> list[list[float]]:
        """The default play, at the suite's ``temperature`` when it sets one."""
        if self.temperature is not None:
            settings = replace(settings, temperature=self.temperature)
        return super().play(items, backend, settings)

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        buckets: dict[str, list[EvalItem]] = {}
        for item in sorted(self.problems, key=lambda i: i.id):
            buckets.setdefault(item.bucket, []).append(item)
        ordered = {b: buckets[b] for b in (*DIFFICULTIES, *sorted(buckets)) if b in buckets}
        for bucket_items in ordered.values():
            random.Random(seed).shuffle(bucket_items)
        return spread(ordered, limit)

    def score_many(self, pairs: Sequence[tuple[EvalItem, str]]) -> list[float]:
        if self.sandbox is None:
            raise ConfigError("livecodebench suite: scoring runs programs in the sandbox, and "
                              "none was given")
        family = scorer_family()
        scores: list[float] = [0.0] * len(pairs)
        jobs, where = [], []
        for index, (item, reply) in enumerate(pairs):
            code = extract_code(reply)
            if not code.strip():
                continue
            request = dict(item.data["request"], code=code, test_seconds=self.test_seconds)
            jobs.append(request_job(family, request))
            where.append(index)
        for index, score in zip(where, score_in_sandbox(self.sandbox, jobs), strict=True):
            scores[index] = score
        return scores


def build(options: LiveCodeBenchSuiteOptions, context: Any) -> LiveCodeBenchSuite:
    return LiveCodeBenchSuite(options.data, options.start_date, options.end_date,
                              options.test_seconds, context.components.get("sandbox"),
                              options.release, options.temperature)
