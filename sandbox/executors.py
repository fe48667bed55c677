"""Executors: where workers come from. The local one runs a set of fork servers.

Callers (sessions, checks, the loop) only see :class:`Executor` and :class:`WorkerChannel`, so a
distributed backend (e.g. Ray actors, each running a fork server on its node) can be added by
implementing those two without touching them.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Protocol

from sandbox.isolation import SERVER_ENV, UID_BLOCK, UID_SPAN, Launch, draw_uid_base, server_command
from sandbox.limits import Limits
from sandbox.protocol import FramedSocket, FrameError, encode


#: Seconds a request may take to hand over to a worker before the worker counts as gone.
SEND_TIMEOUT = 10.0
#: Seconds the host waits for a fork server to report a worker's CPU time (it answers in well
#: under a millisecond unless it is compiling or forking for another session).
CPU_QUERY_SECONDS = 5.0


class WorkerChannel(Protocol):
    """The host's end of one worker: request/reply frames, kill, and how it ended.

    Batched calls (``reset_many``/``step_many``) also use ``send_bytes``, ``fileno`` and
    ``pump`` (with ``marked``, when the last progress marker came) when a channel has them, to
    wait on many workers at once; a channel without them is served with ``request_body``.

    ``stage`` (requests that run several calls: a batch, or loading several instances): the
    worker sends a progress marker (``protocol.mark``) between two calls once
    ``protocol.PROGRESS_SECONDS`` have passed since the request or its last marker; the wait
    ends ``stage`` seconds after the request or the last marker, and never after ``deadline``.

    A channel that can tell the worker's CPU time now has ``cpu_seconds()`` (and ``marked_cpu``,
    the CPU time a marker carried): the call limits then count CPU time, with the wall clock a
    backstop (``sandbox/cpu_clock.py``); without it they are wall-clock limits.
    """

    def request(self, message: dict[str, Any], deadline: float, limit: int) -> dict[str, Any]: ...

    def request_body(self, message: dict[str, Any], deadline: float, limit: int,
                     stage: float | None = None) -> bytes: ...

    def wait_ready(self, deadline: float, limit: int,
                   stage: float | None = None) -> dict[str, Any]: ...

    def kill(self) -> None: ...

    def exit_status(self, timeout: float = 1.0) -> dict[str, Any] | None: ...

    def close(self) -> None: ...


class Executor(Protocol):
    """Starts workers for programs."""

    def spawn(self, program: str, prelude: str, limits: Limits,
              modules: dict[str, str] | None = None,
              imports: tuple[str, ...] = (), count: int = 1,
              reuse: int = 0) -> WorkerChannel: ...

    def isolation(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


#: Deadline for a fork server to import a family's libraries (once per server).
IMPORT_SECONDS = 120.0


class ServerProcess:
    """One fork server, started under ``launch``, and its control channel."""

    def __init__(self, launch: Launch, index: int, uid_base: int,
                 start_timeout: float = 60.0) -> None:
        self.launch = launch
        self.index = index
        host_end, server_end = socket.socketpair()
        command = server_command(launch, server_end.fileno(), index, uid_base)
        env = dict(SERVER_ENV)
        # A file, not a pipe: a server that writes a lot to stderr must never block on us.
        self.stderr = tempfile.TemporaryFile(prefix="spade-sandbox-")
        self.proc = subprocess.Popen(
            command, pass_fds=[server_end.fileno()], env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=self.stderr, start_new_session=True, cwd="/",
        )
        server_end.close()
        self.control = FramedSocket(host_end)
        self.lock = threading.Lock()
        self._numbers = itertools.count()
        self.live = 0
        #: sha256 of the trusted sources (preludes, family modules) this server already holds.
        self.known: set[str] = set()
        #: Libraries (``family.preload_imports``) this server has imported.
        self.imported: set[str] = set()
        try:
            reply = self.call({"op": "ping"}, start_timeout)
        except FrameError as exc:
            error = self._stderr()
            self.close()
            raise RuntimeError(f"fork server {index} ({launch.method}) did not start: {exc}"
                               + (f"; its stderr: {error}" if error else "")) from None
        self.probe: dict[str, Any] = reply.get("probe", {})

    def _stderr(self) -> str:
        try:
            self.stderr.seek(0)
            return self.stderr.read(4000).decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: dict[str, Any], fd: int | None = None) -> None:
        data = encode(message)
        with self.lock:
            if fd is None:
                self.control.sock.sendall(data)
                return
            sent = socket.send_fds(self.control.sock, [data], [fd])
            if sent < len(data):
                self.control.sock.sendall(data[sent:])

    def send_spawn(self, message: dict[str, Any], fd: int, trusted: dict[str, str]) -> None:
        """Send the trusted sources this server lacks, then the spawn request with its channel
        end, all under one lock so no other spawn can overtake them."""
        with self.lock:
            for sha, text in trusted.items():
                if sha not in self.known:
                    self.control.sock.sendall(encode({"op": "trusted", "sha": sha,
                                                      "text": text}))
                    self.known.add(sha)
            data = encode(message)
            sent = socket.send_fds(self.control.sock, [data], [fd])
            if sent < len(data):
                self.control.sock.sendall(data[sent:])

    def ensure_imports(self, names: tuple[str, ...]) -> None:
        """Have the server import ``names`` now, under their own generous deadline, so a slow
        library import (seconds) never counts against a worker's load time limit."""
        missing = [name for name in names if name not in self.imported]
        if not missing:
            return
        try:
            reply = self.call({"op": "import", "names": missing}, IMPORT_SECONDS)
        except FrameError as exc:
            raise RuntimeError(f"fork server {self.index} did not import {', '.join(missing)} "
                               f"within {IMPORT_SECONDS:g} s: {exc}") from None
        problems = reply.get("problems") or []
        if problems:
            raise RuntimeError("the family's prelude needs " + "; ".join(map(str, problems)))
        self.imported.update(missing)

    def call(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send a control request and wait for its reply; a late reply to an earlier request
        that timed out is skipped (the server echoes each request's number)."""
        with self.lock:
            number = next(self._numbers)
            self.control.sock.sendall(encode(dict(message, n=number)))
            deadline = time.monotonic() + timeout
            while True:
                reply = self.control.recv(1 << 20, deadline)
                if reply.get("n") == number:
                    return reply

    def close(self) -> None:
        self.control.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.stderr.close()


class ForkChannel:
    """The host's end of a worker forked by a :class:`ServerProcess`."""

    def __init__(self, server: ServerProcess, wid: int, sock: socket.socket) -> None:
        self.server = server
        self.wid = wid
        # Bounds a send to a worker that stopped reading (a hijacked one), which would otherwise
        # block the host forever; reads have their own deadlines.
        sock.settimeout(SEND_TIMEOUT)
        self.framed = FramedSocket(sock)
        self.closed = False

    def wait_ready(self, deadline: float, limit: int,
                   stage: float | None = None) -> dict[str, Any]:
        return self.framed.recv(limit, deadline, stage)

    def request(self, message: dict[str, Any], deadline: float, limit: int) -> dict[str, Any]:
        try:
            self.framed.send(message)
        except OSError as exc:
            raise FrameError(f"the worker is gone ({exc})") from None
        return self.framed.recv(limit, deadline)

    def request_body(self, message: dict[str, Any], deadline: float, limit: int,
                     stage: float | None = None) -> bytes:
        """Like :meth:`request`, but the reply's body undecoded (batch replies)."""
        self.send_bytes(encode(message))
        return self.framed.recv_body(limit, deadline, stage)

    def send_bytes(self, data: bytes) -> None:
        try:
            self.framed.sock.sendall(data)
        except OSError as exc:
            raise FrameError(f"the worker is gone ({exc})") from None

    def fileno(self) -> int:
        return self.framed.fileno()

    def pump(self, limit: int) -> bytes | None:
        """Read what has arrived; a complete reply's body, or ``None`` while it is partial
        (progress markers are consumed, and noted in :attr:`marked`)."""
        return self.framed.pump(limit)

    @property
    def marked(self) -> float | None:
        """When (monotonic) the last progress marker arrived, if ever."""
        return self.framed.marked

    @property
    def marked_cpu(self) -> float | None:
        """The worker's CPU seconds that the last progress marker carried."""
        return self.framed.marked_cpu

    def cpu_seconds(self) -> float | None:
        """The worker's CPU seconds now, read by its fork server (trusted, unlike what the
        worker reports); ``None`` when it cannot be read (the worker is gone, or the server
        did not answer in time)."""
        try:
            reply = self.server.call({"op": "cpu", "id": self.wid}, CPU_QUERY_SECONDS)
        except (OSError, FrameError):
            return None
        cpu = reply.get("cpu")
        return float(cpu) if isinstance(cpu, (int, float)) and not isinstance(cpu, bool) \
            else None

    def kill(self) -> None:
        try:
            self.server.send({"op": "kill", "id": self.wid})
        except OSError:
            pass

    def exit_status(self, timeout: float = 1.0) -> dict[str, Any] | None:
        end = time.monotonic() + timeout
        while True:
            try:
                reply = self.server.call({"op": "wait", "id": self.wid}, timeout)
            except (OSError, FrameError):
                return None
            if reply.get("status") is not None:
                return reply["status"]
            if time.monotonic() >= end:
                return None
            time.sleep(0.02)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.framed.close()
            self.server.live -= 1


class ForkExecutor:
    """The fork servers of this machine; sessions go to the least busy one."""

    def __init__(self, launch: Launch, servers: int) -> None:
        if servers > UID_SPAN // UID_BLOCK:
            raise ValueError(f"at most {UID_SPAN // UID_BLOCK} fork servers per sandbox")
        self.launch = launch
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._hashes: dict[str, str] = {}
        #: First uid of this sandbox's workers (a random block: sandboxes never share uids).
        self.uid_base = draw_uid_base()
        self.servers: list[ServerProcess] = []
        try:
            for index in range(max(1, servers)):
                self.servers.append(ServerProcess(launch, index, self.uid_base))
        except BaseException:
            self.close()
            raise

    def _pick(self) -> ServerProcess:
        with self._lock:
            index = min(range(len(self.servers)), key=lambda i: self.servers[i].live)
            server = self.servers[index]
            if not server.alive():
                # A dead server is replaced; its sessions have already failed on their own.
                try:
                    server.close()
                except OSError:
                    pass
                server = ServerProcess(self.launch, index, self.uid_base)
                self.servers[index] = server
            server.live += 1
            return server

    def spawn(self, program: str, prelude: str, limits: Limits,
              modules: dict[str, str] | None = None,
              imports: tuple[str, ...] = (), count: int = 1, reuse: int = 0) -> ForkChannel:
        """A worker hosting ``count`` instances of ``program``; ``imports`` are installed
        libraries the family's trusted prelude uses, which the server imports once before
        forking (never the program). ``reuse`` > 0: the worker may load more instances later
        (``more``), up to ``reuse`` over its life."""
        server = self._pick()
        if imports:
            try:
                server.ensure_imports(tuple(imports))
            except (OSError, RuntimeError):
                server.live -= 1
                raise
        wid = next(self._ids)
        trusted: dict[str, str] = {}
        prelude_sha = self._sha(prelude, trusted) if prelude else ""
        module_shas = {name: self._sha(text, trusted) for name, text in (modules or {}).items()}
        host_end, worker_end = socket.socketpair()
        try:
            server.send_spawn({"op": "spawn", "id": wid, "program": program,
                               "prelude": prelude_sha, "modules": module_shas, "imports": list(imports),
                               "limits": limits.to_dict(), "count": count,
                               "reuse": reuse},
                              worker_end.fileno(), trusted)
        except OSError:
            host_end.close()
            server.live -= 1
            raise
        finally:
            worker_end.close()
        return ForkChannel(server, wid, host_end)

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by the fork servers and their reaped workers (the host's own
        ``RUSAGE_CHILDREN`` does not see them: they are not its direct children)."""
        total = 0.0
        for server in self.servers:
            stats = server.call({"op": "stats"}, 10.0)
            total += float(stats.get("cpu_self", 0.0)) + float(stats.get("cpu_workers", 0.0))
        return total

    def _sha(self, text: str, trusted: dict[str, str]) -> str:
        sha = self._hashes.get(text)
        if sha is None:
            sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if len(self._hashes) > 64:
                self._hashes.clear()
            self._hashes[text] = sha
        trusted[sha] = text
        return sha

    def isolation(self) -> dict[str, Any]:
        probe = self.servers[0].probe if self.servers else {}
        return {
            "method": self.launch.method,
            "python": self.launch.python or sys.executable,
            "isolated": self.launch.method != "none",
            "servers": len(self.servers),
            "worker_uid_drop": self.launch.drop_uid,
            "worker_uids": [self.uid_base, self.uid_base + len(self.servers) * UID_BLOCK - 1]
            if self.launch.drop_uid else None,
            "network": "none (own network namespace)" if probe.get("interfaces") in (["lo"], [])
            and self.launch.method != "none" else "host network",
            "server_probe": probe,
            "filesystem": "read-only minimal view, private tmpfs /tmp"
            if self.launch.method == "bwrap" else "host filesystem",
            "notes": list(self.launch.notes),
            "host_python": sys.version.split()[0],
            "host_pid": os.getpid(),
        }

    def close(self) -> None:
        for server in self.servers:
            try:
                server.close()
            except OSError:
                pass
        self.servers = []
