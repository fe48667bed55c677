"""Hostile "solutions" to a code-generation problem, run by the ``livecodebench`` suite's real
scorer in the real sandbox: each tries to escape (read host files, open a socket, fork, delete or
write host files, reach the scorer's globals or the worker's channel, spin, exhaust memory) and
then prints the right answer, so a score of 0 shows that the attempt itself was stopped.

Every program in ``corpus/code_solutions/`` carries ``# expect:`` its verdict: ``failed`` (the
scorer ran it and it failed a test: refused when compiled, or it raised), or the sandbox category
that ended its worker (``forbidden``, ``timeout``). Checked with OS isolation and without it (so
only the compile policy and guards stand in the way), with canaries: a file the programs try to
create, a file they try to delete, a host TCP listener, a secret environment variable.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from spade_core.errors import SandboxError
from spade_core.eval.sandboxed_scoring import request_job
from fakes.canaries import Listener, expected

from plugins.evals.livecodebench_suite import LiveCodeBenchSuite, extract_code, scorer_family
from sandbox.build import build_sandbox
from sandbox.options import ProcessSandboxOptions

CORPUS = Path(__file__).parents[1] / "sandbox" / "corpus" / "code_solutions"
HOSTILE = sorted(CORPUS.glob("*.py"))
DATA = Path(__file__).parents[1] / "plugins" / "evals" / "data"
FIXTURE = DATA / "livecodebench_fixture.jsonl"
SECRET_NAME = "SPADE_CODE_SOLUTION_SECRET"
SECRET_VALUE = "s3cr3t-lcb-4d2a9c"
#: The stdin problem every hostile program answers (sum of a list).
PROBLEM = "livecodebench/spade-lcb-1"


@pytest.fixture(scope="module", params=["auto", "none"])
def contained(request):
    """Every hostile program scored and its verdict taken, under one isolation setting."""
    canary_dir = Path(tempfile.mkdtemp(prefix="spade-lcb-canary-", dir="/tmp"))
    canary_dir.chmod(0o777)
    (canary_dir / "victim").write_text("keep me")
    (canary_dir / "victim").chmod(0o666)
    listener = Listener()
    os.environ[SECRET_NAME] = SECRET_VALUE
    options = {"isolation": "none", "allow_unisolated": True} if request.param == "none" else {}
    box = build_sandbox(ProcessSandboxOptions(workers=2, step_seconds=2, **options))
    try:
        suite = LiveCodeBenchSuite(str(FIXTURE), sandbox=box)
        item = next(i for i in suite.items(None, 0) if i.id == PROBLEM)
        replies = {path.name: "```python\n" + path.read_text()
                   .replace("{{CANARY_DIR}}", str(canary_dir))
                   .replace("{{PORT}}", str(listener.port)) + "\n```" for path in HOSTILE}
        scores = dict(zip(replies, suite.score_many([(item, r) for r in replies.values()]),
                          strict=True))
        verdicts = {name: _verdict(box, suite, item, reply) for name, reply in replies.items()}
        gold = json.loads((DATA / "livecodebench_gold.json").read_text())["spade-lcb-1"]
        yield {"scores": scores, "verdicts": verdicts,
               "canaries": sorted(p.name for p in canary_dir.iterdir()),
               "victim": (canary_dir / "victim").read_text(),
               "connections": listener.connections,
               "after": suite.score_many([(item, gold)])}
    finally:
        box.close()
        listener.close()
        os.environ.pop(SECRET_NAME, None)
        shutil.rmtree(canary_dir, ignore_errors=True)


def _verdict(box, suite, item, reply) -> str:
    """``failed`` when the scorer ran the program to a score, else the sandbox's category."""
    job = request_job(scorer_family(), dict(
        item.data["request"], code=extract_code(reply), test_seconds=suite.test_seconds))
    session = box.open(job.program, family=job.family)
    try:
        session.reset(None)
        result = session.step(job.action)
    except SandboxError as exc:
        return exc.verdict.category
    finally:
        try:
            session.close()
        except SandboxError:
            pass
    return "failed" if result.reward == 0.0 else "passed"


def test_corpus_covers_the_escapes_the_suite_promises_to_hold():
    names = {p.stem for p in HOSTILE}
    assert {"read_passwd", "socket_connect", "fork_bomb", "os_remove", "write_outside",
            "spin_forever", "memory_bomb"} <= names


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.stem)
def test_hostile_solution_gets_its_verdict_and_scores_zero(path, contained):
    assert contained["verdicts"][path.name] == expected(path)
    assert contained["scores"][path.name] == 0.0


def test_hostile_solutions_leave_no_trace(contained):
    assert contained["canaries"] == ["victim"]
    assert contained["victim"] == "keep me"
    assert contained["connections"] == 0
    assert SECRET_VALUE not in json.dumps(contained["verdicts"])


def test_sandbox_scores_the_gold_solution_after_the_hostile_ones(contained):
    assert contained["after"] == [1.0]
