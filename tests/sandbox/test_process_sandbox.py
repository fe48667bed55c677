"""Many environment instances in one sandbox worker (``open_many``) and batched calls
(``reset_many``/``step_many``), against the real sandbox (fork servers under bubblewrap).

Instances must behave exactly as if each had its own worker; a program error ends only its own
instance, while a timeout, memory exhaustion, a forbidden construct or a crash ends them all.
Also: hundreds of sessions at once, one worker each, all gone once closed.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from fakes.in_process import FakePartialFamily

from sandbox.limits import Limits
from spade_core.errors import SandboxError
from spade_core.records import StepResult
from spade_core.validation import validate

HOSTILE = Path(__file__).parent / "corpus" / "hostile"

#: Module-level ``random`` (the SPADE game style), a class-attribute counter and a module global.
STATEFUL = r'''
import random

CALLS = 0


class StatefulEnv:
    built = 0

    def __init__(self):
        StatefulEnv.built += 1
        self.total = 0

    def reset(self, seed=None):
        global CALLS
        CALLS += 1
        if seed is not None:
            random.seed(seed)
        self.total = random.randint(0, 1000)
        return f"built={StatefulEnv.built} calls={CALLS} start={self.total}", {"seed": seed}

    def step(self, action):
        global CALLS
        CALLS += 1
        StatefulEnv.built += 1
        self.total += random.randint(1, 6)
        if action == "boom":
            raise ValueError("boom")
        if action == "spin":
            while True:
                pass
        if action == "escape":
            getattr(self, "__dict__")
        if action == "bad":
            return "bad", 99.0, False, False, {}
        done = self.total > 1030
        text = f"total={self.total} calls={CALLS} built={StatefulEnv.built} u={random.random()}"
        return text, float(done), done, False, {"calls": CALLS}
'''

#: A trusted prelude that itself uses module-level random (its base class draws the start).
RANDOM_PRELUDE = r'''
import random

__all__ = ["DiceBaseEnv"]


class DiceBaseEnv:
    def roll(self):
        return random.randint(1, 6)

    def reseed(self, seed):
        random.seed(seed)
'''

PRELUDE_PROGRAM = r'''
import random


class DiceEnv(DiceBaseEnv):
    def reset(self, seed=None):
        if seed is not None:
            self.reseed(seed)
        return f"first={self.roll()} mine={random.randint(0, 99)}", {}

    def step(self, action):
        return f"roll={self.roll()} mine={random.randint(0, 99)}", 0.0, False, False, {}
'''


class FakeDiceFamily(FakePartialFamily):
    """A fake env family for tests: only a prelude that uses module-level ``random``."""

    name = "fake-dice"
    prelude = RANDOM_PRELUDE


FAST = Limits(load_seconds=5.0, reset_seconds=1.0, step_seconds=1.0, episode_seconds=60.0)
#: For the hostile corpus: room to exhaust 1 GB of memory in reset() on a busy machine.
HOSTILE_LIMITS = Limits(load_seconds=10.0, reset_seconds=5.0, step_seconds=1.0)


@pytest.fixture
def sandbox(two_server_sandbox):
    return two_server_sandbox


def _close(sessions):
    for session in sessions:
        session.close()


def _lock_step(sandbox, sessions, seeds, actions, batched):
    """Reset with ``seeds``, then step every session through ``actions``; the observations."""
    seen = []
    if batched:
        resets = sandbox.reset_many(list(zip(sessions, seeds)))
    else:
        resets = [s.reset(seed) for s, seed in zip(sessions, seeds)]
    seen.append([obs for obs, _info in resets])
    for action in actions:
        if batched:
            results = sandbox.step_many([(s, action) for s in sessions])
        else:
            results = [s.step(action) for s in sessions]
        seen.append([(r.observation, r.reward, r.terminated, r.truncated, r.info)
                     for r in results])
    return seen


def test_instances_behave_as_separate_workers(sandbox):
    seeds = [1, 2, 1, 3]
    actions = ["a", "b", "c"]
    many = sandbox.open_many(STATEFUL, len(seeds))
    alone = [sandbox.open(STATEFUL) for _ in seeds]
    try:
        assert len({id(s.link) for s in many}) == 1
        assert len({id(s.link) for s in alone}) == len(seeds)
        together = _lock_step(sandbox, many, seeds, actions, batched=True)
        apart = _lock_step(sandbox, alone, seeds, actions, batched=False)
        assert together == apart
        # Module globals and class attributes are per instance: nobody sees the others' calls.
        assert together[0][0].startswith("built=1 calls=1 ")
        assert "calls=4 built=4" in together[-1][0][0]
        # Same seed, same draws; different seed, different draws (module-level random).
        assert together[1][0] == together[1][2] and together[1][0] != together[1][1]
    finally:
        _close(many + alone)


def test_batched_results_equal_unbatched(sandbox):
    seeds = [5, 6, 7]
    actions = ["x", "y", "z", "w"]
    first = sandbox.open_many(STATEFUL, 3)
    second = sandbox.open_many(STATEFUL, 3)
    try:
        assert _lock_step(sandbox, first, seeds, actions, batched=True) == \
            _lock_step(sandbox, second, seeds, actions, batched=False)
    finally:
        _close(first + second)


def test_a_prelude_using_module_random_gets_the_instance_generator(sandbox):
    family = FakeDiceFamily()
    many = sandbox.open_many(PRELUDE_PROGRAM, 3, family=family)
    alone = [sandbox.open(PRELUDE_PROGRAM, family=family) for _ in range(3)]
    try:
        seeds = [11, 12, 11]
        assert _lock_step(sandbox, many, seeds, ["s"] * 3, batched=True) == \
            _lock_step(sandbox, alone, seeds, ["s"] * 3, batched=False)
    finally:
        _close(many + alone)


def test_mixed_sessions_in_one_call_keep_input_order(sandbox):
    many = sandbox.open_many(STATEFUL, 2)
    one = sandbox.open(STATEFUL)
    other = sandbox.open_many(STATEFUL, 2)
    order = [other[1], many[0], one, many[1], other[0]]
    try:
        resets = sandbox.reset_many([(s, 40 + i) for i, s in enumerate(order)])
        assert [info for _obs, info in resets] == [{"seed": 40 + i} for i in range(5)]
        results = sandbox.step_many([(s, f"a{i}") for i, s in enumerate(order)])
        assert all(isinstance(r, StepResult) for r in results)
        assert [r.info for r in results] == [{"calls": 2}] * 5
        # The same session twice in one call: both steps run, in order.
        twice = sandbox.step_many([(one, "p"), (many[0], "q"), (one, "r")])
        assert [r.info["calls"] for r in twice] == [3, 3, 4]
    finally:
        _close(order)


def test_a_program_error_ends_only_its_instance(sandbox):
    sessions = sandbox.open_many(STATEFUL, 4, limits=FAST)
    try:
        sandbox.reset_many([(s, 1) for s in sessions])
        results = sandbox.step_many([(s, "boom" if i == 1 else "ok")
                                     for i, s in enumerate(sessions)])
        assert isinstance(results[1], SandboxError)
        assert results[1].verdict.category == "runtime_error"
        assert "boom" in results[1].verdict.message
        assert all(isinstance(results[i], StepResult) for i in (0, 2, 3))
        # Host-side checks apply per item too: an out-of-range reward ends that instance only.
        results = sandbox.step_many([(s, "bad" if i == 2 else "ok")
                                     for i, s in enumerate(sessions)])
        assert isinstance(results[1], SandboxError)  # still ended
        assert results[2].verdict.category == "interface"
        assert isinstance(results[0], StepResult) and isinstance(results[3], StepResult)
        with pytest.raises(SandboxError) as failed:
            sessions[1].step("ok")
        assert failed.value.verdict.category == "runtime_error"
        assert sessions[0].step("ok").observation.startswith("total=")
    finally:
        _close(sessions)


@pytest.mark.parametrize("batched", [True, False])
def test_a_timeout_ends_every_instance(sandbox, batched):
    sessions = sandbox.open_many(STATEFUL, 3, limits=FAST)
    try:
        sandbox.reset_many([(s, 1) for s in sessions])
        if batched:
            results = sandbox.step_many([(s, "spin" if i == 1 else "ok")
                                         for i, s in enumerate(sessions)])
        else:
            results = []
            for i, s in enumerate(sessions):
                try:
                    results.append(s.step("spin" if i == 0 else "ok"))
                except SandboxError as exc:
                    results.append(exc)
        # Unbatched, the calls after the spin find the worker gone; batched, the call before it
        # ran and keeps its result, the spin and the call after it get the timeout.
        if batched:
            assert isinstance(results[0], StepResult)
            results = results[1:]
        assert all(isinstance(r, SandboxError) for r in results)
        assert {r.verdict.category for r in results} == {"timeout"}
        for session in sessions:
            with pytest.raises(SandboxError) as failed:
                session.step("ok")
            assert failed.value.verdict.category == "timeout"
        assert sum("instance" in s.failure.message for s in sessions) >= 2
    finally:
        _close(sessions)


def test_a_forbidden_construct_ends_every_instance(sandbox):
    sessions = sandbox.open_many(STATEFUL, 3, limits=FAST)
    try:
        sandbox.reset_many([(s, 1) for s in sessions])
        with pytest.raises(SandboxError) as failed:
            sessions[2].step("escape")
        assert failed.value.verdict.category == "forbidden"
        results = sandbox.step_many([(s, "ok") for s in sessions])
        assert [r.verdict.category for r in results] == ["forbidden"] * 3
        assert "instance 2" in results[0].verdict.message
    finally:
        _close(sessions)


def test_sessions_of_one_worker_can_be_called_from_threads(sandbox):
    sessions = sandbox.open_many(STATEFUL, 6)
    errors = []

    def play(session):
        try:
            session.reset(3)
            for _ in range(15):
                result = session.step("t")
                if result.terminated:
                    session.reset(3)
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(s,)) for s in sessions]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert not errors
        finals = sandbox.step_many([(s, "end") for s in sessions])
        assert len({r.observation for r in finals}) == 1  # identical histories
    finally:
        _close(sessions)


WITH_CLOSE = STATEFUL + """
    def close(self):
        self.total = -1
"""


@pytest.mark.parametrize("program", [STATEFUL, WITH_CLOSE], ids=["no-close", "close"])
def test_the_worker_ends_with_its_last_instance(sandbox, program):
    sessions = sandbox.open_many(program, 3)
    assert [s.closes for s in sessions] == [program is WITH_CLOSE] * 3
    sessions[0].close()
    with pytest.raises(SandboxError):
        sessions[0].reset(1)
    assert sandbox.reset_many([(sessions[0], 1)])[0].verdict.message == "the session is closed"
    assert sessions[1].reset(1)[0].startswith("built=1")
    sessions[1].close()
    assert not sessions[2].link.ended
    sessions[2].close()
    assert sessions[2].link.ended


def test_cpu_limit_scales_with_the_instances():
    """RLIMIT_CPU is cpu_seconds per instance: three instances burning ~0.6 s of CPU each
    exceed one instance's 1 s but fit the worker's 3 s (one instance burning as much as the
    three gets the CPU-time verdict)."""
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    burn = STATEFUL.replace('        if action == "boom":',
                            '        if action == "burn":\n'
                            '            n = 0\n'
                            '            for i in range(4_500_000):\n'
                            '                n += i\n'
                            '        if action == "boom":')
    box = build_sandbox(ProcessSandboxOptions(workers=1, cpu_seconds=1, step_seconds=20.0))
    try:
        sessions = box.open_many(burn, 3)
        box.reset_many([(s, 1) for s in sessions])
        assert isinstance(sessions[0].step("burn"), StepResult)
        results = box.step_many([(s, "burn") for s in sessions[1:]])
        assert all(isinstance(r, StepResult) for r in results), results
        assert "per instance" in box.isolation()["rlimits"]["cpu_seconds_scale"]
        _close(sessions)
        alone = box.open(burn)
        alone.reset(1)
        with pytest.raises(SandboxError) as failed:  # burns until its 1 s is gone, however fast
            for _ in range(40):                         # this CPU is (3 burns once sufficed)
                alone.step("burn")
        assert failed.value.verdict.category == "timeout"
        assert "CPU" in failed.value.verdict.message
        alone.close()
    finally:
        box.close()


def test_a_load_failure_in_some_instances_leaves_the_others():
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    flaky = "import random\nif random.random() < 0.5:\n    raise ValueError('unlucky')\n" + STATEFUL
    box = build_sandbox(ProcessSandboxOptions(workers=1))
    try:
        sessions = box.open_many(flaky, 24)  # all 24 alike: probability 2**-23
        failed = [s for s in sessions if s.failure is not None]
        loaded = [s for s in sessions if s.failure is None]
        assert failed and loaded
        assert {s.failure.category for s in failed} == {"runtime_error"}
        results = box.reset_many([(s, 1) for s in sessions])
        assert all(isinstance(r, SandboxError) == (s.failure is not None)
                   for r, s in zip(results, sessions))
        _close(sessions)
        with pytest.raises(SandboxError) as broken:
            box.open_many("class Broken(:\n", 4)
        assert broken.value.verdict.category == "syntax"
    finally:
        box.close()


def test_validation_runs_in_one_worker_and_still_catches_nondeterminism(sandbox):
    unseeded = STATEFUL.replace("        if seed is not None:\n            random.seed(seed)\n", "")
    assert unseeded != STATEFUL
    unseeded_verdict, seeded_verdict = validate(sandbox, [unseeded, STATEFUL])
    assert unseeded_verdict.category == "nondeterministic"
    assert "two instances" in unseeded_verdict.message
    # The seeded program passes the determinism checks (it then fails: no solution()).
    assert seeded_verdict.category == "interface"
    assert "solution" in seeded_verdict.message


def _expect(path: Path) -> str:
    return re.search(r"^# expect: (\w+)", path.read_text(), re.M).group(1)


@pytest.mark.parametrize("name", ["import_os", "cpu_spin_step", "memory_growth",
                                  "swallowed_violation", "poison_random_module", "system_exit",
                                  "huge_observation", "nan_reward"])
def test_hostile_programs_are_still_refused_through_open_many(sandbox, name, tmp_path):
    path = HOSTILE / f"{name}.py"
    program = path.read_text().replace("{{CANARY_DIR}}", str(tmp_path))
    want = _expect(path)
    try:
        sessions = sandbox.open_many(program, 3, limits=HOSTILE_LIMITS)
    except SandboxError as exc:
        assert exc.verdict.category == want
        return
    try:
        outcomes = [r.verdict.category if isinstance(r, SandboxError) else None
                    for r in sandbox.reset_many([(s, 42) for s in sessions])]
        for _ in range(3):
            live = [(i, s) for i, s in enumerate(sessions) if outcomes[i] is None]
            if not live:
                break
            for (i, _s), result in zip(live, sandbox.step_many([(s, "go") for _, s in live])):
                if isinstance(result, SandboxError):
                    outcomes[i] = result.verdict.category
        assert outcomes == [want] * 3, (name, [s.failure for s in sessions])
    finally:
        _close(sessions)
    assert not list(tmp_path.iterdir())
    healthy = sandbox.open(STATEFUL)
    assert healthy.reset(1)[0].startswith("built=1")
    healthy.close()


DECIMAL = r'''
import decimal


class PrecisionEnv:
    def reset(self, seed=None):
        if seed:
            decimal.getcontext().prec = seed
        return str(decimal.Decimal(1) / decimal.Decimal(7)), {}

    def step(self, action):
        return str(decimal.Decimal(2) / decimal.Decimal(3)), 0.0, True, False, {}
'''


def test_each_instance_has_its_own_decimal_context(sandbox):
    sessions = sandbox.open_many(DECIMAL, 2)
    try:
        first, second = sandbox.reset_many([(sessions[0], 5), (sessions[1], 0)])
        assert first[0] == "0.14286"
        assert second[0] == "0.1428571428571428571428571429"  # the default 28 digits
        steps = sandbox.step_many([(s, "") for s in sessions])
        assert [r.observation for r in steps] == ["0.66667", "0.6666666666666666666666666667"]
    finally:
        _close(sessions)


def test_the_episode_budget_is_per_instance_in_batches(sandbox):
    """Each instance's budget is charged its share of a batch (its own CPU time, and a share of
    the wall time for the backstop); a spent budget is a timeout. A call of a few microseconds
    may cost no CPU time: the worker's CPU clock advances in scheduler ticks."""
    sessions = sandbox.open_many(STATEFUL, 2, limits=Limits(episode_seconds=30.0))
    try:
        sandbox.reset_many([(s, 1) for s in sessions])
        before = [(s.busy, s.busy_wall) for s in sessions]
        sandbox.step_many([(s, "a") for s in sessions])
        assert all(s.busy >= cpu and s.busy_wall > wall
                   for s, (cpu, wall) in zip(sessions, before))
        sessions[1].busy = 30.0  # as if this instance had spent its whole budget in calls
        results = sandbox.step_many([(s, "b") for s in sessions])
        assert [r.verdict.category for r in results] == ["timeout", "timeout"]
        assert "episode time limit" in results[1].verdict.message
    finally:
        _close(sessions)


def test_a_session_twice_in_a_batch_after_its_own_error(sandbox):
    """The second call of an instance that failed earlier in the same batch keeps that
    instance's verdict; its siblings are untouched."""
    sessions = sandbox.open_many(STATEFUL, 2, limits=FAST)
    try:
        sandbox.reset_many([(s, 1) for s in sessions])
        results = sandbox.step_many([(sessions[0], "boom"), (sessions[1], "a"),
                                     (sessions[0], "a"), (sessions[1], "b")])
        assert [type(r).__name__ for r in results] == ["SandboxError", "StepResult",
                                                       "SandboxError", "StepResult"]
        assert results[2].verdict is results[0].verdict
        assert sessions[1].step("c").info == {"calls": 4}
    finally:
        _close(sessions)


def _worker_processes(box) -> list[int]:
    """Live workers of this sandbox: processes with a worker uid below one of its servers
    (other sandboxes may be running on the machine at the same time)."""
    roots = {server.proc.pid for server in box.executor.servers}
    parents, uids = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("PPid:"):
                parents[int(entry.name)] = int(line.split()[1])
            elif line.startswith("Uid:"):
                uids[int(entry.name)] = int(line.split()[1])
    found = []
    for pid, uid in uids.items():
        if uid not in range(box.executor.uid_base, box.executor.uid_base + (1 << 20)):
            continue
        ancestor, hops = parents.get(pid), 0
        while ancestor and ancestor not in roots and hops < 16:
            ancestor, hops = parents.get(ancestor), hops + 1
        if ancestor in roots:
            found.append(pid)
    return found


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_hundreds_of_sessions_at_once(limited_sandbox):
    sandbox = limited_sandbox
    sandbox.idle.clear()  # workers earlier tests' open_many left for reuse: not this test's
    program = (Path(__file__).parent / "corpus" / "benign" / "guess_number.py").read_text()
    sessions = [sandbox.open(program) for _ in range(200)]
    assert len(_worker_processes(sandbox)) == 200
    errors: list[BaseException] = []

    def play(chunk):
        try:
            for s in chunk:
                s.reset(7)
                result = s.step("\\boxed{5}")
                assert isinstance(result.reward, float)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(sessions[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for s in sessions:
        s.close()
    assert errors == []
    deadline = time.monotonic() + 10
    while _worker_processes(sandbox) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _worker_processes(sandbox) == []

