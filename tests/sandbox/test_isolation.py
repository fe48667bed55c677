"""The OS layer on its own: what a program could do if it escaped the language filter entirely.

A family prelude is trusted and runs unrestricted inside the worker, so a hostile prelude stands in
for a complete RestrictedPython escape. Everything it tries must fail or stay inside the worker.
Also: sessions (many at once, failures isolated), time limits, and the unisolated opt-in.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from fakes.in_process import FakePartialFamily

from spade_core.errors import SandboxError
from spade_core.validation import validate

SECRET_NAME = "SPADE_SANDBOX_ESCAPE_SECRET"
SECRET_VALUE = "escape-canary-91d0c3"

REPORT_PROGRAM = '''
import json
class ReportEnv:
    def reset(self, seed=None):
        return json.dumps(RESULTS), {}
    def step(self, action):
        return "done", 1.0, True, False, {}
    def solution(self):
        return "x"
'''

ESCAPE_PRELUDE = r'''
import os, signal, socket, threading, time
RESULTS = {}


def attempt(name, fn):
    try:
        RESULTS[name] = "ok: " + repr(fn())[:300]
    except BaseException as exc:
        RESULTS[name] = "refused: " + type(exc).__name__


def fork_once():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    return pid


signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
attempt("write_host_file", lambda: open("{CANARY}/escaped", "w").write("x"))
attempt("connect_host", lambda: socket.create_connection(("127.0.0.1", {PORT}), timeout=1))
attempt("secret", lambda: os.environ["{SECRET_NAME}"])
attempt("proc1_environ", lambda: open("/proc/1/environ").read())
attempt("passwd", lambda: open("/etc/passwd").read())
attempt("root_home", lambda: os.listdir("/root"))
attempt("uid", lambda: (os.getuid(), os.geteuid()))
attempt("setuid0", lambda: os.setuid(0))
attempt("fork", fork_once)
attempt("thread", lambda: threading.Thread(target=time.sleep, args=(100,)).start())
attempt("kill_server", lambda: os.kill(os.getppid(), signal.SIGKILL))
attempt("kill_host", lambda: os.kill({HOST_PID}, signal.SIGKILL))
attempt("write_scratch", lambda: open("scratch.txt", "w").write("fine"))
attempt("big_file", lambda: open("big.bin", "wb").write(b"x" * (4 << 20)))
attempt("many_fds", lambda: [open("/dev/null") for _ in range(200)])
attempt("write_usr", lambda: open("/usr/escaped", "w"))
attempt("interfaces", lambda: [name for _, name in socket.if_nameindex()])
'''


class Family(FakePartialFamily):
    """A fake family carrying an arbitrary (here: hostile) prelude."""

    name = "fake"

    def __init__(self, prelude: str) -> None:
        self.prelude = prelude

    def solution_actions(self, solution, tools=None):
        return [solution] if isinstance(solution, str) else None


@pytest.fixture(scope="module")
def sandbox():
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    box = build_sandbox(ProcessSandboxOptions(workers=2, load_seconds=3, reset_seconds=3,
                                              step_seconds=3, episode_seconds=20,
                                              memory_mb=384))
    yield box
    box.close()


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


@pytest.mark.timeout(120)
def test_isolation_report(sandbox):
    from spade_core.interfaces.sandbox import Sandbox, SandboxSession

    assert isinstance(sandbox, Sandbox)
    session = sandbox.open(REPORT_PROGRAM, family=Family("RESULTS = {}"))
    assert isinstance(session, SandboxSession)
    session.close()
    info = sandbox.isolation()
    assert info["isolated"] is True
    assert info["method"] in ("bwrap", "unshare")
    assert info["rlimits"]["core"] == 0
    if os.geteuid() == 0:
        assert info["worker_uid_drop"] is True
        assert info["server_probe"]["interfaces"] == ["lo"]


@pytest.mark.timeout(120)
def test_escaped_code_cannot_reach_the_host(sandbox, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    prelude = (ESCAPE_PRELUDE.replace("{CANARY}", str(tmp_path))
               .replace("{PORT}", str(listener.getsockname()[1]))
               .replace("{SECRET_NAME}", SECRET_NAME).replace("{HOST_PID}", str(os.getpid())))
    os.environ[SECRET_NAME] = SECRET_VALUE
    try:
        session = sandbox.open(REPORT_PROGRAM, family=Family(prelude))
        observation, _ = session.reset(1)
        session.close()
    finally:
        os.environ.pop(SECRET_NAME, None)
    results = json.loads(observation)
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()
    assert SECRET_VALUE not in observation
    assert list(tmp_path.iterdir()) == []
    for name in ("write_host_file", "connect_host", "secret", "proc1_environ", "passwd",
                 "setuid0", "fork", "thread", "kill_server", "kill_host", "big_file",
                 "many_fds", "write_usr"):
        assert results[name].startswith("refused"), (name, results[name])
    assert results["write_scratch"].startswith("ok")
    if os.geteuid() == 0:
        uid, euid = json.loads(results["uid"][4:].replace("(", "[").replace(")", "]"))
        low, high = sandbox.isolation()["worker_uids"]
        assert uid == euid and low <= uid <= high
        assert results["interfaces"] == "ok: ['lo']"
        # Only the directories leading to the bound interpreter exist, never the real home.
        assert not any(name in results["root_home"] for name in (".ssh", ".cache", ".bashrc"))


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


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_hundreds_of_sessions_at_once(sandbox):
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


@pytest.mark.timeout(120)
def test_session_api_and_failure_is_final(sandbox):
    program = '''
class EchoEnv:
    def reset(self, seed=None):
        self.n = 0
        return f"seed={seed}", {"seed": seed}
    def step(self, action):
        self.n += 1
        if action == "boom":
            raise ValueError("boom")
        return action.upper(), 0.5, self.n >= 2, False, {"n": self.n}
    def solution(self):
        return ["a", "b"]
'''
    session = sandbox.open(program)
    assert session.reset(3) == ("seed=3", {"seed": 3})
    result = session.step("hi")
    assert (result.observation, result.reward, result.terminated, result.truncated,
            result.info) == ("HI", 0.5, False, False, {"n": 1})
    assert session.solution() == ["a", "b"]
    with pytest.raises(SandboxError) as failed:
        session.step("boom")
    assert failed.value.verdict.category == "runtime_error"
    assert failed.value.verdict.line == 9  # the source starts with a blank line
    with pytest.raises(SandboxError):
        session.step("again")
    session.close()


@pytest.mark.timeout(60)
def test_running_unisolated_needs_opt_in_and_warns(capfd):
    from sandbox.isolation import choose
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    with pytest.raises(RuntimeError, match="allow_unisolated"):
        choose("none", allow_unisolated=False)
    box = build_sandbox(ProcessSandboxOptions(workers=1, isolation="none", allow_unisolated=True))
    try:
        assert box.isolation()["isolated"] is False
        program = (Path(__file__).parent / "corpus" / "benign" / "guess_number.py")
        [verdict] = validate(box, [program.read_text()])
        assert verdict.valid
    finally:
        box.close()
    assert "WITHOUT OS isolation" in capfd.readouterr().err


@pytest.mark.timeout(120)
def test_a_dead_fork_server_is_replaced():
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    program = (Path(__file__).parent / "corpus" / "benign" / "guess_number.py").read_text()
    box = build_sandbox(ProcessSandboxOptions(workers=1))
    try:
        session = box.open(program)
        session.reset(1)
        box.executor.servers[0].proc.kill()
        box.executor.servers[0].proc.wait(timeout=10)
        # The whole pid namespace goes down with bubblewrap, asynchronously.
        deadline = time.monotonic() + 10
        with pytest.raises(SandboxError) as lost:
            while time.monotonic() < deadline:
                session.reset(1)
                time.sleep(0.05)
        assert lost.value.verdict.category == "crash"
        [verdict] = validate(box, [program])
        assert verdict.valid, verdict.message
    finally:
        box.close()


@pytest.mark.skipif(shutil.which("unshare") is None, reason="util-linux unshare is missing")
@pytest.mark.timeout(120)
def test_unshare_fallback_isolates_the_network(tmp_path):
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    prelude = ("import socket\nRESULTS = {}\ntry:\n"
               f"    socket.create_connection(('127.0.0.1', {listener.getsockname()[1]}), 1)\n"
               "    RESULTS['net'] = 'reached'\nexcept OSError as exc:\n"
               "    RESULTS['net'] = 'refused'\n")
    box = build_sandbox(ProcessSandboxOptions(workers=1, isolation="unshare"))
    try:
        assert box.isolation()["method"] == "unshare"
        session = box.open(REPORT_PROGRAM, family=Family(prelude))
        assert json.loads(session.reset(0)[0]) == {"net": "refused"}
        session.close()
    finally:
        box.close()
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()


class ModuleFamily(Family):
    """A fake family that also provides a trusted importable module."""

    modules = {"helpers": "import re as _re\n__all__ = ['double']\n"
                          "def double(x):\n    return 2 * x\n"}

    def probe_actions(self):
        return ["nonsense"]


@pytest.mark.timeout(120)
def test_family_modules_are_importable_only_with_the_family(sandbox):
    program = '''
from helpers import double
import helpers
class DoubleEnv:
    def reset(self, seed=None):
        return f"{double(21)} {hasattr(helpers, 're')}", {}
    def step(self, action):
        return "x", 1.0, action == "42", False, {}
    def solution(self):
        return str(double(21))
'''
    family = ModuleFamily("RESULTS = {}")
    session = sandbox.open(program, family=family)
    assert session.reset(0)[0] == "42 False"
    session.close()
    [verdict] = validate(sandbox, [program], family=family)
    assert verdict.valid, verdict.message
    [plain] = validate(sandbox, [program])
    assert plain.category == "forbidden" and "helpers" in plain.message
