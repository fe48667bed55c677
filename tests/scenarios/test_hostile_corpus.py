"""The hostile and benign corpora, run through the real sandbox (fork servers under bubblewrap).

Every hostile program must get its expected verdict and leave no trace: no canary file on the
host, no connection to the host's listener, no secret in anything that comes back, the sandbox
still healthy afterwards. Every benign program must pass unchanged.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest

from fakes.in_process import FakePartialFamily

from spade_core.validation import ValidationOptions, validate
from fakes.canaries import Listener, expected

CORPUS = Path(__file__).parents[1] / "sandbox" / "corpus"
HOSTILE = sorted((CORPUS / "hostile").glob("*.py"))
BENIGN = sorted((CORPUS / "benign").glob("*.py"))
SECRET_NAME = "SPADE_SANDBOX_TEST_SECRET"
SECRET_VALUE = "s3cr3t-canary-7f1c2b9e"

#: A trusted prelude like the tool-use family's: the base class programs subclass.
TOOL_PRELUDE = r'''
import json
import re


class ToolUseBaseEnv:
    """Parses <tool_call>{json}</tool_call> and <answer>...</answer> actions."""

    def __init__(self):
        self._tools = []
        self._state = {}
        self._expected_answer = None
        self._turns = 0

    def task_prompt(self, question):
        names = ", ".join(t["function"]["name"] for t in self._tools)
        return f"{question}\nTools: {names}. Call with <tool_call>{{json}}</tool_call>; " \
               "finish with <answer>...</answer>."

    def _check_answer(self, answer):
        return answer.strip() == str(self._expected_answer)

    def step(self, action):
        self._turns += 1
        answer = re.search(r"<answer>(.*?)</answer>", action, re.S)
        if answer:
            ok = self._check_answer(answer.group(1))
            return ("Correct." if ok else "Wrong."), float(ok), True, False, {}
        call = re.search(r"<tool_call>(.*?)</tool_call>", action, re.S)
        if not call:
            return "No tool call or answer found.", 0.0, False, self._turns >= 10, {}
        try:
            request = json.loads(call.group(1))
            method = getattr(self, "tool_" + request["name"])
            result = method(**request.get("arguments", {}))
        except Exception as exc:
            result = f"error: {exc}"
        return str(result), 0.0, False, self._turns >= 10, {}
'''


class FakeToolFamily(FakePartialFamily):
    """A fake env family for tests: the tool-use prelude and list-of-actions solutions."""

    name = "fake-tool-use"
    prelude = TOOL_PRELUDE

    def solution_actions(self, solution, tools=None):
        if isinstance(solution, str):
            return [solution]
        if isinstance(solution, list) and all(isinstance(a, str) for a in solution):
            return solution
        return None


@pytest.fixture(scope="module")
def sandbox():
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    options = ProcessSandboxOptions(workers=2, load_seconds=4, reset_seconds=5, step_seconds=3,
                                    episode_seconds=30, cpu_seconds=8, memory_mb=384)
    box = build_sandbox(options)
    yield box
    box.close()


@pytest.fixture(scope="module")
def hostile_results(sandbox, tmp_path_factory):
    canary_dir = tmp_path_factory.mktemp("canaries")
    listener = Listener()
    os.environ[SECRET_NAME] = SECRET_VALUE
    try:
        sources = [
            p.read_text().replace("{{CANARY_DIR}}", str(canary_dir))
            .replace("{{PORT}}", str(listener.port)).replace("{{SECRET_NAME}}", SECRET_NAME)
            for p in HOSTILE
        ]
        verdicts = validate(sandbox, sources, options=ValidationOptions(concurrency=6))
    finally:
        os.environ.pop(SECRET_NAME, None)
        listener.close()
    return {
        "verdicts": dict(zip((p.name for p in HOSTILE), verdicts)),
        "canary_files": sorted(os.listdir(canary_dir)),
        "connections": listener.connections,
    }


def test_corpus_is_large_enough():
    assert len(HOSTILE) >= 40
    assert len(BENIGN) >= 6


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.stem)
def test_hostile_program_is_refused_without_side_effects(path, hostile_results):
    verdict = hostile_results["verdicts"][path.name]
    assert not verdict.valid
    assert verdict.category == expected(path), verdict.message
    assert verdict.message
    assert SECRET_VALUE not in json.dumps(asdict(verdict), default=str)
    assert hostile_results["canary_files"] == []
    assert hostile_results["connections"] == 0
    # Every call ended within its limit: nothing in a check runs longer than its episode cap.
    assert verdict.seconds < 3 * 30


@pytest.mark.timeout(300)
def test_sandbox_is_healthy_after_the_hostile_corpus(sandbox, hostile_results):
    benign = (CORPUS / "benign" / "guess_number.py").read_text()
    [verdict] = validate(sandbox, [benign])
    assert verdict.valid, verdict.message
    # No worker outlives its session.
    probe = sandbox.open(benign)
    probe.close()


@pytest.mark.timeout(300)
def test_benign_programs_pass(sandbox):
    family = FakeToolFamily()
    games = [p for p in BENIGN if not p.name.startswith("tool_")]
    tools = [p for p in BENIGN if p.name.startswith("tool_")]
    results = dict(zip((p.name for p in games), validate(sandbox, [p.read_text() for p in games])))
    results.update(zip((p.name for p in tools),
                       validate(sandbox, [p.read_text() for p in tools], family=family)))
    failures = {name: (v.category, v.message, v.line) for name, v in results.items()
                if not v.valid}
    assert failures == {}
    for name, verdict in results.items():
        assert verdict.observation, name
        assert "solution" in verdict.details, name


@pytest.mark.timeout(120)
def test_poisoning_does_not_reach_the_next_program(sandbox):
    poison = (CORPUS / "hostile" / "poison_random_module.py").read_text()
    probe = '''
import random, json
class ProbeEnv:
    def reset(self, seed=None):
        random.seed(3)
        return json.dumps([random.random(), round(random.random(), 6)]), {}
    def step(self, action):
        return "done", 1.0, True, False, {}
    def solution(self):
        return "x"
'''
    before = sandbox.open(probe)
    first, _ = before.reset(0)
    before.close()
    validate(sandbox, [poison])
    after = sandbox.open(probe)
    second, _ = after.reset(0)
    after.close()
    assert first == second
    assert json.loads(first)[0] != 0.5


HOSTILE_SQL = sorted((CORPUS / "hostile_sql").glob("*.py"))


@pytest.fixture(scope="module")
def hostile_sql_results(sandbox, tmp_path_factory):
    """The database programs of the tool-use family, with its real prelude (``Database``)."""
    from plugins.families.tool_use import ToolUseFamily

    canary_dir = tmp_path_factory.mktemp("sql-canaries")
    sources = [p.read_text().replace("{{CANARY_DIR}}", str(canary_dir)) for p in HOSTILE_SQL]
    verdicts = validate(sandbox, sources, family=ToolUseFamily(),
                        options=ValidationOptions(concurrency=4))
    return {"verdicts": dict(zip((p.name for p in HOSTILE_SQL), verdicts)),
            "canary_dir": canary_dir}


def test_sql_corpus_covers_the_database_surface():
    names = {p.stem for p in HOSTILE_SQL}
    assert {"attach_file", "load_extension", "vacuum_into_file", "huge_table",
            "runaway_recursive_query", "reach_connection", "import_sqlite3"} <= names


@pytest.mark.timeout(120)
@pytest.mark.parametrize("path", HOSTILE_SQL, ids=lambda p: p.stem)
def test_hostile_sql_is_refused_or_stopped_by_the_limits(path, hostile_sql_results):
    """ATTACH, extensions, file copies, PRAGMA, temporary objects, unlisted functions, huge
    tables or strings and runaway queries fail inside the database with SQLite's or the limits'
    message; nothing is written on the host."""
    import re

    verdict = hostile_sql_results["verdicts"][path.name]
    message = re.search(r"^# message: (.+)$", path.read_text(), re.M).group(1)
    assert not verdict.valid
    assert verdict.category == expected(path), verdict.message
    assert message in verdict.message
    assert verdict.seconds < 10
    assert list(hostile_sql_results["canary_dir"].iterdir()) == []
