"""The worker, confined in its own process with its own uid and limits: a hung, crashing or
thread-starting worker fails alone within the time limit, and ``kill(-1)`` from a worker reaches
nothing but itself."""

from __future__ import annotations

import json
import time

import pytest

from fakes.prelude_family import REPORT_PROGRAM, PreludeFamily as Family

from spade_core.errors import SandboxError


@pytest.fixture
def sandbox(limited_sandbox):
    return limited_sandbox


@pytest.mark.timeout(120)
def test_kill_everything_reaches_nothing(sandbox):
    bystander = sandbox.open(REPORT_PROGRAM, family=Family("RESULTS = {'alive': True}"))
    bystander.reset(0)
    # kill(-1) signals every process the caller may signal: with its own uid, none but itself
    # (which Linux skips), so neither the server, nor other workers, nor the host.
    killer = Family("import os, signal\nos.kill(-1, signal.SIGKILL)\n"
                    "os.killpg(1, signal.SIGKILL) if False else None\nRESULTS = {'k': 1}")
    session = sandbox.open(REPORT_PROGRAM, family=killer)
    assert json.loads(session.reset(0)[0]) == {"k": 1}
    session.close()
    observation, _ = bystander.reset(1)
    assert json.loads(observation) == {"alive": True}
    bystander.close()


@pytest.mark.timeout(120)
def test_hung_and_crashing_workers_fail_alone_and_within_limits(sandbox):
    survivor = sandbox.open(REPORT_PROGRAM, family=Family("RESULTS = {'n': 1}"))
    started = time.monotonic()
    with pytest.raises(SandboxError) as hung:
        sandbox.open(REPORT_PROGRAM, family=Family("import time\ntime.sleep(1000)\nRESULTS={}"))
    assert hung.value.verdict.category == "timeout"
    assert time.monotonic() - started < 3 + 2
    with pytest.raises(SandboxError) as crashed:
        sandbox.open(REPORT_PROGRAM, family=Family("import ctypes\nctypes.string_at(0)\n"))
    assert crashed.value.verdict.category == "crash"
    threads = Family("import threading, time\n"
                     "threading.Thread(target=time.sleep, args=(1000,)).start()\nRESULTS={}")
    with pytest.raises(SandboxError):
        sandbox.open(REPORT_PROGRAM, family=threads)
    assert survivor.reset(0)[0] == '{"n": 1}'
    survivor.close()
