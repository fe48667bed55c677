"""The pre-warmed fork server: imports the allowed modules once, then forks one worker per request.

It runs inside the isolation the host chose (bubblewrap or ``unshare``: no network, its own pid
namespace, a read-only minimal filesystem, an empty environment) and talks to the host over one
control socket. A ``spawn`` request carries one end of a fresh socket pair (``SCM_RIGHTS``); the
server forks, and the worker compiles the program under the policy (confined, its CPU time
counted against the load limit; the server never parses untrusted text, and its heap, which
every fork shares copy-on-write, stays still between forks) and serves the episodes of its
``count`` instances on that socket directly, so steps never pass through the server. The
server also kills workers on request (SIGKILL to the process group), reaps them and reports
how they ended, and reports a live worker's CPU time (the host's check of a call's
CPU-time limit). Replies to control requests echo the request's number (``n``).

Run as ``python -I -c "...; sandbox.server.main()" --control-fd N ...`` by ``executors.py``.
"""

from __future__ import annotations

import argparse
import collections
import gc
import hashlib
import os
import resource
import select
import shutil
import signal
import socket
import sys
import time
import types
from typing import Any

from sandbox import guards, modules, worker
from sandbox.limits import Limits
from sandbox.policy import compile_program
from sandbox.protocol import FrameError, encode, split_frames

_CONTROL_LIMIT = 1 << 24
_EXITED_KEEP = 4096
#: Most environment instances one worker may host (``open_many``).
MAX_INSTANCES = 1024


def describe_status(status: int) -> dict[str, Any]:
    """How a reaped worker ended, as JSON."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return {"signal": name, "code": None}
    return {"signal": None, "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None}


class ForkServer:
    """State of one fork server: control channel, compile cache, live workers, free uids."""

    def __init__(self, control: socket.socket, uid_base: int | None, uid_count: int,
                 scratch_root: str | None) -> None:
        self.control = control
        self.buffer = bytearray()
        self.fds: collections.deque[int] = collections.deque()
        self.children: dict[int, tuple[int, int | None, str | None]] = {}
        self.by_id: dict[int, int] = {}
        self.exited: collections.OrderedDict[int, dict[str, Any]] = collections.OrderedDict()
        self.free_uids = collections.deque(range(uid_base, uid_base + uid_count)) \
            if uid_base is not None else None
        self.scratch_root = scratch_root
        #: Trusted sources (family preludes and modules) by sha256, sent once by the host. They
        #: are compiled here but run only in workers (the brief: preludes run in the worker).
        self.trusted: dict[str, str] = {}
        self.trusted_code: dict[str, types.CodeType] = {}

    # -- trusted sources ------------------------------------------------------------------
    def _trusted_code(self, sha: str, filename: str) -> types.CodeType:
        code = self.trusted_code.get(sha)
        if code is None:
            if sha not in self.trusted:
                raise KeyError(f"unknown trusted source {sha[:12]}")
            code = compile(self.trusted[sha], filename, "exec")
            self.trusted_code[sha] = code
        return code

    # -- requests ---------------------------------------------------------------------------
    def _refuse(self, fd: int, category: str, message: str, line: int | None = None) -> None:
        with socket.socket(fileno=fd) as chan:
            chan.settimeout(1.0)
            try:
                chan.sendall(encode({"ok": 0, "category": category, "message": message,
                                     "line": line}))
            except OSError:
                pass

    def spawn(self, request: dict[str, Any], fd: int) -> None:
        wid = int(request["id"])
        limits = Limits.from_dict(request.get("limits") or {})
        count = request.get("count", 1)
        if type(count) is not int or not 1 <= count <= MAX_INSTANCES:
            self._refuse(fd, "crash", f"a worker hosts 1 to {MAX_INSTANCES} instances, not "
                         f"{count!r}")
            return
        reuse = request.get("reuse", 0)
        if type(reuse) is not int or not 0 <= reuse <= MAX_INSTANCES:
            self._refuse(fd, "crash", f"a reused worker loads at most {MAX_INSTANCES} "
                         f"instances, not {reuse!r}")
            return
        source = request.get("program")
        if not isinstance(source, str):
            self._refuse(fd, "interface", "the program must be Python source text")
            return
        family_shas = request.get("modules") or {}
        if not isinstance(family_shas, dict):
            family_shas = {}
        try:
            family_modules = {name: self._trusted_code(sha, f"<{name}>")
                              for name, sha in family_shas.items()}
            prelude_sha = str(request.get("prelude") or "")
            prelude = self._trusted_code(prelude_sha, "<prelude>") if prelude_sha else None
        except (SyntaxError, KeyError) as exc:
            self._refuse(fd, "crash", f"the family's trusted source does not compile: {exc}")
            return
        missing = modules.preload(modules.heavy_imports(source))
        del missing  # a program importing a missing module fails with a clear ImportError
        imports = request.get("imports") or []
        if not isinstance(imports, list) or not all(isinstance(n, str) for n in imports):
            self._refuse(fd, "crash", "the family's preload_imports must be module names")
            return
        absent = modules.import_libraries(imports)
        if absent:
            self._refuse(fd, "crash", "the family's prelude needs " + "; ".join(absent))
            return
        uid = None
        if self.free_uids is not None:
            if not self.free_uids:
                self._refuse(fd, "crash", "too many live workers on this server")
                return
            uid = self.free_uids.popleft()
        scratch = os.path.join(self.scratch_root, f"w{uid if uid is not None else wid}") \
            if self.scratch_root else None
        # Objects that exist now are never collected in the worker: the collector then does not
        # walk (and copy-on-write) the server's whole heap in every fork.
        gc.freeze()
        try:
            pid = os.fork()
        except OSError:
            if uid is not None and self.free_uids is not None:
                self.free_uids.append(uid)
            raise
        if pid == 0:  # the worker
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            modules.set_family_modules(family_modules)
            worker.run(fd, source, frozenset(family_shas), prelude, limits, uid, scratch,
                       count, reuse)
        os.close(fd)
        self.children[pid] = (wid, uid, scratch)
        self.by_id[wid] = pid

    def kill(self, wid: int) -> None:
        pid = self.by_id.get(wid)
        if pid is None:
            return
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def cpu(self, wid: int) -> float | None:
        """CPU seconds the live worker ``wid`` has used, on the clock its own
        ``time.process_time`` reads; ``None`` when it is not running (not forked yet, or gone)."""
        pid = self.by_id.get(wid)
        if pid is None:
            return None
        try:  # the process's CPU clock (Linux: CPUCLOCK_SCHED of pid, in our pid namespace)
            return time.clock_gettime(((~pid) << 3) | 2)
        except OSError:
            pass
        try:  # the same count in clock ticks, should that clock id ever be refused
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            entry = self.children.pop(pid, None)
            if entry is None:
                continue
            wid, uid, scratch = entry
            self.by_id.pop(wid, None)
            self.exited[wid] = describe_status(status)
            if len(self.exited) > _EXITED_KEEP:
                self.exited.popitem(last=False)
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)
            if uid is not None and self.free_uids is not None:
                self.free_uids.append(uid)

    def probe(self) -> dict[str, Any]:
        """What this server can see: network interfaces, root directory, ids."""
        try:
            interfaces = sorted(name for _, name in socket.if_nameindex())
        except OSError:
            interfaces = []
        try:
            root = sorted(os.listdir("/"))
        except OSError:
            root = []
        return {"pid": os.getpid(), "uid": os.getuid(), "interfaces": interfaces,
                "root_entries": root, "environment": sorted(os.environ),
                "worker_uids": self.free_uids is not None, "python": sys.version.split()[0]}

    def _answer(self, request: dict[str, Any], reply: dict[str, Any]) -> None:
        """Reply to a control request, echoing its number (``n``) so a host that gave up
        waiting for one reply never takes it for the next one's."""
        if "n" in request:
            reply["n"] = request["n"]
        self.control.sendall(encode(reply))

    def handle(self, request: dict[str, Any]) -> None:
        op = request.get("op")
        if op == "spawn":
            fd = self.fds.popleft() if self.fds else None
            if fd is None:
                return
            try:
                self.spawn(request, fd)
            except Exception as exc:  # noqa: BLE001 - one bad request must not stop the server
                try:
                    self._refuse(fd, "crash", f"the fork server failed: {exc}")
                except OSError:
                    pass
        elif op == "trusted":
            sha, text = str(request.get("sha", "")), request.get("text")
            if isinstance(text, str) and hashlib.sha256(text.encode("utf-8")).hexdigest() == sha:
                self.trusted[sha] = text
        elif op == "kill":
            self.kill(int(request.get("id", -1)))
        elif op == "cpu":
            wid = int(request.get("id", -1))
            self._answer(request, {"id": wid, "cpu": self.cpu(wid)})
        elif op == "wait":
            self.reap()
            wid = int(request.get("id", -1))
            self._answer(request, {"id": wid, "status": self.exited.pop(wid, None),
                                   "alive": wid in self.by_id})
        elif op == "stats":
            self.reap()
            own = resource.getrusage(resource.RUSAGE_SELF)
            kids = resource.getrusage(resource.RUSAGE_CHILDREN)
            self._answer(request, {
                "cpu_self": own.ru_utime + own.ru_stime,
                "cpu_workers": kids.ru_utime + kids.ru_stime,
                "live": len(self.children)})
        elif op == "import":
            names = request.get("names")
            if isinstance(names, list) and all(isinstance(n, str) for n in names):
                problems = modules.import_libraries(names)
            else:
                problems = ["the import request must list module names"]
            self._answer(request, {"problems": problems})
        elif op == "ping":
            self._answer(request, {"pong": 1, "probe": self.probe()})

    def shutdown(self) -> None:
        for pid in list(self.children):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for _ in range(100):
            if not self.children:
                break
            self.reap()
            select.select([], [], [], 0.01)

    def serve(self) -> None:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        try:
            while True:
                ready, _, _ = select.select([self.control, wake_r], [], [], 1.0)
                if wake_r in ready:
                    os.read(wake_r, 4096)
                self.reap()
                if self.control not in ready:
                    continue
                try:
                    data, fds, _flags, _addr = socket.recv_fds(self.control, 1 << 20, 64)
                except (ConnectionResetError, InterruptedError):
                    return
                self.fds.extend(fds)
                if not data:
                    return
                self.buffer += data
                try:
                    requests = split_frames(self.buffer, _CONTROL_LIMIT)
                except FrameError:
                    return
                for request in requests:
                    self.handle(request)
        finally:
            self.shutdown()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="sandbox.server")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--uid-base", type=int, default=None)
    parser.add_argument("--uid-count", type=int, default=1024)
    parser.add_argument("--scratch-root", default=None)
    args = parser.parse_args(argv)
    worker._libc.prctl(worker._PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    modules.preload()
    import RestrictedPython.transformer  # noqa: F401 - warm the compiler before forking

    compile_program("class WarmEnv:\n    pass\n")
    guards.safe_builtins()
    control = socket.socket(fileno=args.control_fd)
    server = ForkServer(control, args.uid_base, args.uid_count, args.scratch_root)
    server.serve()


if __name__ == "__main__":
    main()
