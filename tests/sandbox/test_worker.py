"""The worker, confined in its own process with its own uid and limits: a hung, crashing or
thread-starting worker fails alone within the time limit, and ``kill(-1)`` from a worker reaches
nothing but itself."""

from __future__ import annotations

import json
import re
import time

import pytest

from spade_core.errors import SandboxError

from fakes.prelude_family import REPORT_PROGRAM, PreludeFamily as Family


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
    # It sleeps without using the CPU: the wall-clock backstop (4 x the 3 s) ends it.
    assert "backstop" in hung.value.verdict.message, hung.value.verdict
    assert time.monotonic() - started < 3 * sandbox.limits.wall_factor + 2
    with pytest.raises(SandboxError) as crashed:
        sandbox.open(REPORT_PROGRAM, family=Family("import ctypes\nctypes.string_at(0)\n"))
    assert crashed.value.verdict.category == "crash"
    threads = Family("import threading, time\n"
                     "threading.Thread(target=time.sleep, args=(1000,)).start()\nRESULTS={}")
    with pytest.raises(SandboxError):
        sandbox.open(REPORT_PROGRAM, family=threads)
    assert survivor.reset(0)[0] == '{"n": 1}'
    survivor.close()

# -- call limits hold whatever the program does, C code included (issue 48) ----------------------
# Every call limit holds within a small margin whatever the program is doing, C code included
# (issue 48): a call that spins inside one C function never returns to Python, so the worker's own
# timer cannot stop it; the host must end the worker itself soon after the call's limit, whether
# the call is alone, one of a batch, or one instance's load in a worker that loads several. After
# it, the sandbox serves the next session as before.
#
# Before the progress markers, the host waited for the sum of a batch's (or a multi-instance
# load's) limits: 8 batched steps of 3 s each took 24 s to get their verdict, 4 instances' load
# 12 s. The limits count the worker's CPU time (issue 48, item 4), so on an idle machine a call
# that spins is ended near its limit in wall time too; on a loaded one (this machine's tests run
# at a lower priority than its experiments) it gets its CPU time later, and the verdict comes
# when it has used its limit or at the wall-clock backstop, whichever is first. The verdict says
# which, and how much CPU the worker had used: that is what these tests check.

#: What the host may take beyond a call's limit to give its verdict (CPU seconds, or wall
#: seconds beyond the backstop).
MARGIN = 2.0
#: Spins in C for minutes (well past any limit here), in constant memory.
SPIN = "sum(range(10 ** 12))"
_USED = re.compile(r"it used ([0-9.]+) s of CPU in ([0-9.]+) s")


def _held(verdict, seconds: float, limit: float, box) -> None:  # noqa: ANN001
    """``verdict`` is a timeout that came when the worker had used about ``limit`` CPU seconds
    (within MARGIN), or at the wall-clock backstop; in no case later than the backstop."""
    assert verdict.category == "timeout", verdict
    factor = box.limits.wall_factor
    assert seconds < factor * limit + MARGIN, (verdict.message, seconds)
    used = _USED.search(verdict.message)
    assert used is not None, verdict.message
    if "backstop" in verdict.message:
        assert seconds > factor * limit - 0.5, (verdict.message, seconds)
    else:
        assert limit - 0.1 < float(used.group(1)) < limit + MARGIN, (verdict.message, seconds)


PROGRAM = f'''
class SpinEnv:
    def reset(self, seed=None):
        if seed == 7:
            {SPIN}
        return "go", {{}}

    def step(self, action):
        if action == "spin":
            {SPIN}
        return "ok " + action, 0.0, False, False, {{}}
'''


def _verdict(call):  # noqa: ANN001, ANN202
    begun = time.monotonic()
    try:
        result = call()
    except SandboxError as exc:
        return exc.verdict, time.monotonic() - begun
    return result, time.monotonic() - begun


def _serves_again(box) -> None:  # noqa: ANN001
    session = box.open(PROGRAM)
    assert session.reset(1) == ("go", {})
    assert session.step("x").observation == "ok x"
    session.close()


def test_a_single_call_in_c_ends_at_its_limit(limited_sandbox):
    session = limited_sandbox.open(PROGRAM)
    verdict, seconds = _verdict(lambda: session.reset(7))
    _held(verdict, seconds, limited_sandbox.limits.reset_seconds, limited_sandbox)
    _serves_again(limited_sandbox)


def test_a_batched_call_in_c_ends_at_its_own_limit_not_the_batch_sum(limited_sandbox):
    sessions = limited_sandbox.open_many(PROGRAM, 8)
    assert all(isinstance(r, tuple) for r in limited_sandbox.reset_many(
        [(s, 1) for s in sessions]))
    actions = ["a", "b", "spin", "d", "e", "f", "g", "h"]
    begun = time.monotonic()
    results = limited_sandbox.step_many(list(zip(sessions, actions)))
    seconds = time.monotonic() - begun
    assert all(isinstance(r, SandboxError) and r.verdict.category == "timeout"
               for r in results), results
    assert "the call it was running" in str(results[0])
    _held(results[0].verdict, seconds, limited_sandbox.limits.step_seconds, limited_sandbox)
    _serves_again(limited_sandbox)


def test_slow_batches_are_not_cut_short(limited_sandbox):
    """Calls that each stay under their limit keep a batch alive however long it takes in all
    (the worker's progress markers move the host's deadline)."""
    program = "import datetime\n" + PROGRAM.replace('if action == "spin":', (
        'if action == "slow":\n'
        '            end = datetime.datetime.now() + datetime.timedelta(seconds=1.2)\n'
        '            while datetime.datetime.now() < end:\n'
        '                pass\n'
        '        if action == "spin":'))
    sessions = limited_sandbox.open_many(program, 4)
    limited_sandbox.reset_many([(s, 1) for s in sessions])
    results, seconds = _verdict(lambda: limited_sandbox.step_many(
        [(s, "slow") for s in sessions]))
    assert [getattr(r, "observation", r) for r in results] == ["ok slow"] * 4
    assert seconds > limited_sandbox.limits.step_seconds + 1.0  # longer than one call may be
    for session in sessions:
        session.close()


def test_a_load_in_c_ends_at_the_per_instance_limit(limited_sandbox):
    program = SPIN + "\n" + PROGRAM
    for count in (1, 4):
        verdict, seconds = _verdict(lambda: limited_sandbox.open_many(program, count))
        _held(verdict, seconds, limited_sandbox.limits.load_seconds, limited_sandbox)
    _serves_again(limited_sandbox)


def test_one_sqlite_call_in_c_ends_at_the_call_limit(limited_sandbox):
    """The issue's case: one SQLite ``printf`` that spins in C for seconds without a single
    progress-handler call, in ``reset`` (validation's reset) and while loading 3 instances
    (validation opens 3 in one worker, and the tool-use base resets in its constructor)."""
    from spade_core.plugins import load_plugins
    from spade_core.validation import validate

    from fakes.cli import ROOT

    family = load_plugins().registry.build("env_family", "tool-use", {}, "test")
    seed = (ROOT / "plugins" / "families" / "seeds" / "tool_use" / "calendar_db.py").read_text()
    anchor = '        self.create_database(SCHEMA, {"rooms": rooms, "meetings": meetings})\n'
    assert anchor in seed
    printf = "self._db.scalar(\"SELECT printf('%.*c', 2000000000, 'a')\")\n"
    on_reset = seed.replace(anchor, anchor + "        if seed == 42:\n            " + printf)
    on_load = seed.replace(anchor, anchor + "        " + printf)
    limits = limited_sandbox.limits
    for program, limit in ((on_reset, limits.reset_seconds), (on_load, limits.load_seconds)):
        begun = time.monotonic()
        (verdict,) = validate(limited_sandbox, [program], family=family)
        seconds = time.monotonic() - begun
        _held(verdict, seconds, limit, limited_sandbox)
    (verdict,) = validate(limited_sandbox, [seed], family=family)
    assert verdict.valid, verdict


# -- the wall clock is only a backstop (issue 48, item 4) ----------------------------------------

#: A trusted prelude (standing in for a C call) with a call that waits without computing, and
#: one that uses a given amount of CPU time whatever the machine's load.
WAITING = Family("import time\n"
                 "def wait():\n"
                 "    time.sleep(1000)\n"
                 "def burn(seconds):\n"
                 "    end = time.process_time() + seconds\n"
                 "    while time.process_time() < end:\n"
                 "        pass\n"
                 "RESULTS = {}\n")

WAITS = '''
class WaitEnv:
    def reset(self, seed=None):
        return "go", {}

    def step(self, action):
        if action == "wait":
            wait()
        return "ok " + action, 0.0, False, False, {}
'''


@pytest.fixture(scope="module")
def quick_sandbox():
    """Half a second of CPU per call and a backstop of twice that: quick to reach."""
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    box = build_sandbox(ProcessSandboxOptions(workers=1, reset_seconds=0.5, step_seconds=0.5,
                                              wall_factor=2, memory_mb=384))
    yield box
    box.close()


def test_a_call_that_waits_without_computing_ends_at_the_wall_backstop(quick_sandbox):
    """A call that blocks (here: a C call that sleeps) uses no CPU time, so its CPU limit is
    never reached: the wall-clock backstop (``wall_factor`` times the limit) ends it, alone and
    in a batch, and the sandbox serves the next session."""
    box = quick_sandbox
    limit, factor = box.limits.step_seconds, box.limits.wall_factor
    session = box.open(WAITS, family=WAITING)
    session.reset(1)
    verdict, seconds = _verdict(lambda: session.step("wait"))
    assert verdict.category == "timeout" and "backstop" in verdict.message, verdict
    assert factor * limit - 0.1 < seconds < factor * limit + MARGIN, seconds

    sessions = box.open_many(WAITS, 3, family=WAITING)
    box.reset_many([(s, 1) for s in sessions])
    results, seconds = _verdict(lambda: box.step_many(
        [(s, a) for s, a in zip(sessions, ["a", "wait", "c"])]))
    assert all(isinstance(r, SandboxError) and "backstop" in str(r) for r in results), results
    stage = factor * (limit + 0.75)  # the CPU stage of a batch (marker interval, slack) x factor
    assert seconds < stage + MARGIN, seconds
    fresh = box.open(WAITS, family=WAITING)
    assert fresh.reset(1) == ("go", {}) and fresh.step("x").observation == "ok x"
    fresh.close()


BURNS = '''
class BurnEnv:
    """Every call needs 60 % of its CPU-time limit; the answer is 1."""

    def reset(self, seed=None):
        burn(SHARE)
        self.done = False
        return "What is 0 + 1? Answer as \\\\boxed{n}.", {}

    def step(self, action):
        burn(SHARE)
        right = action.strip() == "\\\\boxed{1}"
        return "right" if right else "wrong", 1.0 if right else 0.0, True, False, {}

    def solution(self):
        return "\\\\boxed{1}"
'''


@pytest.mark.xdist_group("loads_every_core")  # one at a time (tests/conftest.py)
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_valid_program_stays_valid_while_other_processes_load_every_core():
    """A program whose every call needs 60 % of its limit in CPU time keeps its ``ok`` verdict
    while busy processes (two per core) compete for the CPU, though its calls then take longer
    than their limit on the wall clock (by which it was refused before issue 48, item 4). The
    backstop is set wide here: the machine the tests run on may be loaded far more than by these
    processes alone (this one runs experiments at a higher priority than its tests), and what is
    checked is that the CPU time decides, not how much load the default backstop tolerates."""
    import os
    import subprocess
    import sys

    from sandbox.plugin import ProcessSandboxOptions, build_sandbox
    from spade_core.validation import validate

    limit = 0.5
    program = BURNS.replace("SHARE", repr(0.6 * limit))
    box = build_sandbox(ProcessSandboxOptions(workers=1, reset_seconds=limit,
                                              step_seconds=limit, wall_factor=40,
                                              memory_mb=384))
    spinners: list[subprocess.Popen] = []
    try:
        (idle,) = validate(box, [program], family=WAITING)
        assert idle.valid, idle
        # Each spinner in a session of its own: the scheduler shares a core between sessions
        # (autogroups) first, and the sandbox worker runs in its own (bubblewrap --new-session).
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                     start_new_session=True)
                    for _ in range(2 * (os.cpu_count() or 1))]
        time.sleep(0.5)  # let the spinners take the cores
        (loaded,) = validate(box, [program], family=WAITING)
        session = box.open(program, family=WAITING)
        walls = []
        for _ in range(3):
            begun = time.monotonic()
            session.reset(1)
            walls.append(time.monotonic() - begun)
        session.close()
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()
        box.close()
    assert loaded.valid, loaded
    assert max(walls) > limit, walls  # the load did slow the calls past their limit's seconds
