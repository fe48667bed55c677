"""The OS layer on its own: what a program could do if it escaped the language filter entirely.

A family prelude is trusted and runs unrestricted inside the worker, so a hostile prelude stands in
for a complete RestrictedPython escape. Everything it tries must fail or stay inside the worker.
Also: the isolation report, the ``unshare`` fallback, and the unisolated opt-in.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from fakes.prelude_family import REPORT_PROGRAM, PreludeFamily as Family

from spade_core.validation import validate

SECRET_NAME = "SPADE_SANDBOX_ESCAPE_SECRET"
SECRET_VALUE = "escape-canary-91d0c3"

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


@pytest.fixture
def sandbox(limited_sandbox):
    return limited_sandbox


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



def test_servers_on_another_interpreter_see_its_folders(tmp_path):
    # A suite's own environment: its interpreter's folders are bound read-only, the servers run
    # it, and a sandbox derived for it is started once and closed with its base.
    import sys

    from sandbox.build import build_sandbox
    from sandbox.isolation import choose, interpreter_paths, on_interpreter, server_command
    from sandbox.options import ProcessSandboxOptions

    paths = interpreter_paths(sys.executable)
    assert sys.prefix in paths and sys.base_prefix in paths
    launch = on_interpreter(choose("auto"), sys.executable)
    assert launch.python == sys.executable
    assert server_command(launch, 3, 0, 1 << 20)[len(launch.prefix)] == sys.executable
    if launch.method == "bwrap":
        binds = {launch.prefix[i + 1] for i, a in enumerate(launch.prefix) if a == "--ro-bind"}
        assert any(sys.prefix == b or sys.prefix.startswith(b + "/") for b in binds)
    with pytest.raises(RuntimeError, match="does not run"):
        interpreter_paths(str(tmp_path / "no-python"))
    base = build_sandbox(ProcessSandboxOptions(workers=1))
    derived = base.on_interpreter(sys.executable)
    assert base.on_interpreter(sys.executable) is derived
    assert derived.isolation()["python"] == sys.executable
    base.close()
    assert not any(server.alive() for server in derived.executor.servers)
