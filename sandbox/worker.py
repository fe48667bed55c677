"""The worker: one forked process that confines itself, loads one program and serves one episode.

It runs in the child right after the fork server forks. ``confine`` cuts it off (new session and
process group, stray descriptors closed, rlimits, no new privileges, its own unprivileged uid);
``Harness`` then runs the trusted prelude and the restricted program and answers ``reset``,
``step``, ``solution`` and ``close`` requests as frames on its channel.
"""

from __future__ import annotations

import ctypes
import json
import math
import numbers
import os
import resource
import signal
import socket
import sys
import traceback
import types
from typing import Any, NoReturn

from sandbox import guards
from sandbox.limits import Limits
from sandbox.policy import PROGRAM_FILENAME, PROGRAM_MODULE
from sandbox.protocol import FramedSocket, FrameError, encode, frame

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_libc = ctypes.CDLL(None, use_errno=True)


def confine(channel_fd: int, limits: Limits, uid: int | None, scratch: str | None) -> None:
    """Cut this freshly forked process off from everything but its channel."""
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    keep = sorted({0, 1, 2, channel_fd})
    low = 3
    for fd in keep:
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, 65_536)
    if scratch is not None:
        os.makedirs(scratch, mode=0o700, exist_ok=True)
        if uid is not None:
            os.chown(scratch, uid, uid)
        os.chdir(scratch)
    else:
        os.chdir("/")
    mb = 1 << 20
    for which, value in (
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_FSIZE, limits.max_file_bytes),
        (resource.RLIMIT_NOFILE, limits.max_open_files),
        (resource.RLIMIT_AS, limits.memory_mb * mb),
        (resource.RLIMIT_NPROC, limits.max_processes),
    ):
        resource.setrlimit(which, (value, value))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise OSError("could not drop to the worker uid")
        try:
            os.setuid(0)
        except PermissionError:
            pass
        else:
            raise OSError("worker regained root after dropping privileges")
    # Set after the uid change, which clears it: the worker dies with its fork server.
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def run(channel_fd: int, code: types.CodeType, prelude: types.CodeType | None,
        limits: Limits, uid: int | None, scratch: str | None) -> NoReturn:
    """Entry point in the forked child; never returns."""
    status = 0
    try:
        confine(channel_fd, limits, uid, scratch)
        channel = FramedSocket(socket.socket(fileno=channel_fd))
        Harness(channel, limits).serve(code, prelude)
    except BaseException:  # noqa: BLE001 - whatever happens, the worker ends here
        status = 70
    os._exit(status)


class ProgramError(Exception):
    """A failure attributed to the program, with its verdict category."""

    def __init__(self, category: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.category = category
        self.line = line


def _program_line(tb: types.TracebackType | None) -> int | None:
    line = None
    for frame, lineno in traceback.walk_tb(tb):
        if frame.f_code.co_filename == PROGRAM_FILENAME:
            line = lineno
    return line


def _unencodable(obj: object) -> str:
    return f"<{type(obj).__name__}>"


_INFO_UTF8 = json.JSONEncoder(default=_unencodable, skipkeys=True, ensure_ascii=False)
_INFO_ASCII = json.JSONEncoder(default=_unencodable, skipkeys=True)


def _describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__ must not take the harness down
        text = "<unprintable>"
    return f"{type(exc).__name__}: {text}"[:1000]


class Harness:
    """Runs one program's environment and answers requests on the channel."""

    def __init__(self, channel: FramedSocket, limits: Limits) -> None:
        self.channel = channel
        self.limits = limits
        self.env: Any = None

    # -- calling into the program ---------------------------------------------------------
    def _call(self, what: str, func: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            result = func(*args, **kwargs)
        except guards.SandboxViolation as exc:
            raise ProgramError("forbidden", f"{what}: {exc}", _program_line(exc.__traceback__))
        except MemoryError:
            raise ProgramError("memory", f"{what}: ran out of memory (limit "
                               f"{self.limits.memory_mb} MB)") from None
        except RecursionError as exc:
            raise ProgramError("runtime_error", f"{what}: {_describe(exc)}",
                               _program_line(exc.__traceback__)) from None
        except BaseException as exc:  # noqa: BLE001 - SystemExit and friends are program errors
            raise ProgramError("runtime_error", f"{what}: {_describe(exc)}",
                               _program_line(exc.__traceback__)) from None
        if guards.VIOLATIONS:
            raise ProgramError("forbidden", f"{what}: {guards.VIOLATIONS[0]} (caught by the "
                               "program, still refused)")
        return result

    def load(self, code: types.CodeType, prelude: types.CodeType | None) -> str:
        """Run the trusted prelude, then the program, and build the program's env."""
        try:
            module = guards.run_prelude(prelude)
        except BaseException as exc:  # noqa: BLE001 - a broken prelude is reported, not fatal
            raise ProgramError("crash", f"the family prelude failed: {_describe(exc)}") from None
        env_globals = guards.program_globals(dict(vars(module)) if module is not None else {})
        self._call("running the module", exec, code, env_globals)
        candidates = [
            value for name, value in list(env_globals.items())
            if isinstance(value, type) and name.endswith("Env")
            and type.__getattribute__(value, "__module__") == PROGRAM_MODULE
        ]
        leaves = [c for c in candidates
                  if not any(o is not c and issubclass(o, c) for o in candidates)]
        if len(leaves) != 1:
            names = ", ".join(sorted(c.__name__ for c in candidates)) or "none"
            raise ProgramError("interface", "the program must define exactly one class whose "
                               f"name ends in 'Env' (found: {names})")
        cls = leaves[0]
        self.env = self._call(f"{cls.__name__}()", cls)
        return cls.__name__

    # -- checking what the program returned ------------------------------------------------
    def _observation(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise ProgramError("interface", f"{where}: the observation must be a str, got "
                               f"{type(value).__name__}")
        text = str.__str__(value)
        if len(text) > self.limits.max_observation_chars:
            raise ProgramError("output_limit", f"{where}: observation of {len(text)} characters "
                               f"exceeds the {self.limits.max_observation_chars} limit")
        return text

    def _info(self, value: Any, where: str) -> bytes:
        """``info`` as JSON bytes, spliced into the reply as is (encoded once, never re-parsed)."""
        if not isinstance(value, dict):
            raise ProgramError("interface", f"{where}: info must be a dict, got "
                               f"{type(value).__name__}")
        if not value:
            return b"{}"
        try:
            text = _INFO_UTF8.encode(value)
            try:
                encoded = text.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: fall back to \u escapes
                encoded = _INFO_ASCII.encode(value).encode("ascii")
        except MemoryError:
            raise ProgramError("memory", f"{where}: ran out of memory encoding info") from None
        except BaseException as exc:  # noqa: BLE001 - program code (dict subclasses) may raise
            raise ProgramError("interface", f"{where}: info is not JSON-serialisable "
                               f"({_describe(exc)})") from None
        if len(encoded) > self.limits.max_info_bytes:
            raise ProgramError("output_limit", f"{where}: info exceeds "
                               f"{self.limits.max_info_bytes} bytes")
        return encoded

    @staticmethod
    def _flag(value: Any, name: str) -> bool:
        if isinstance(value, bool) or (type(value).__name__ == "bool_"
                                       and type(value).__module__ == "numpy"):
            return bool(value)
        raise ProgramError("interface", f"step(): {name} must be a bool, got "
                           f"{type(value).__name__}")

    # -- requests ---------------------------------------------------------------------------
    def _method(self, name: str) -> Any:
        method = getattr(type(self.env), name, None)
        if not callable(method):
            raise ProgramError("interface", f"the environment class has no {name}() method")
        return getattr(self.env, name)

    def reset(self, seed: Any) -> dict[str, Any]:
        result = self._call("reset()", self._method("reset"), seed=seed)
        if not isinstance(result, tuple) or len(result) != 2:
            raise ProgramError("interface", "reset() must return a tuple (observation: str, "
                               f"info: dict), got {type(result).__name__}")
        return {"ok": 1, "observation": self._observation(result[0], "reset()"),
                "info": self._info(result[1], "reset()")}

    def step(self, action: Any) -> dict[str, Any]:
        result = self._call("step()", self._method("step"), action)
        if not isinstance(result, tuple) or len(result) != 5:
            size = len(result) if isinstance(result, (tuple, list)) else None
            raise ProgramError("interface", "step() must return a 5-tuple (observation, reward, "
                               f"terminated, truncated, info), got {type(result).__name__}"
                               + (f" of length {size}" if size is not None else ""))
        obs, reward, terminated, truncated, info = result
        if type(reward) is not float and not isinstance(reward, numbers.Real):
            raise ProgramError("interface", f"step(): reward must be a number, got "
                               f"{type(reward).__name__}")
        try:
            reward = float(reward)
        except (OverflowError, ValueError, TypeError):
            raise ProgramError("interface", "step(): reward does not fit a float") from None
        return {"ok": 1, "observation": self._observation(obs, "step()"),
                "reward": reward if math.isfinite(reward) else repr(reward),
                "terminated": self._flag(terminated, "terminated"),
                "truncated": self._flag(truncated, "truncated"),
                "info": self._info(info, "step()")}

    def solution(self) -> dict[str, Any]:
        method = getattr(type(self.env), "solution", None)
        if method is None:
            raise ProgramError("interface", "the environment has no solution() method")
        value = self._call("solution()", self.env.solution)
        try:
            encoded = json.dumps(value, default=_unencodable, ensure_ascii=False)
        except MemoryError:
            raise ProgramError("memory", "solution(): ran out of memory") from None
        except BaseException as exc:  # noqa: BLE001 - program code (list subclasses) may raise
            raise ProgramError("interface", "solution() returned something that is not "
                               f"JSON-serialisable ({_describe(exc)})") from None
        if len(encoded) > self.limits.max_info_bytes:
            raise ProgramError("output_limit", "solution() returned more than "
                               f"{self.limits.max_info_bytes} bytes")
        return {"ok": 1, "value": json.loads(encoded)}

    def close_env(self) -> dict[str, Any]:
        if self.env is not None and callable(getattr(type(self.env), "close", None)):
            try:
                self._call("close()", self.env.close)
            except ProgramError:
                pass
        return {"ok": 1}

    def _reply(self, message: dict[str, Any]) -> None:
        info = message.pop("info", None)
        if info is None:
            self.channel.send(message)
            return
        head = encode(message)[4:]  # a JSON object: splice ',"info":...' before its brace
        body = head[:-1] + b',"info":' + info + b"}"
        self.channel.sock.sendall(frame(body))

    def serve(self, code: types.CodeType, prelude: types.CodeType | None) -> None:
        try:
            name = self.load(code, prelude)
        except ProgramError as exc:
            self._reply({"ok": 0, "category": exc.category, "message": str(exc),
                         "line": exc.line})
            return
        self._reply({"ok": 1, "env_class": name})
        handlers = {"reset": lambda m: self.reset(m.get("seed")),
                    "step": lambda m: self.step(m.get("action")),
                    "solution": lambda m: self.solution()}
        while True:
            try:
                request = self.channel.recv(1 << 24)
            except FrameError:
                return
            op = request.get("op")
            if op == "close":
                self._reply(self.close_env())
                return
            handler = handlers.get(op)
            if handler is None:
                self._reply({"ok": 0, "category": "crash", "message": f"unknown request {op!r}"})
                return
            try:
                reply = handler(request)
            except ProgramError as exc:
                reply = {"ok": 0, "category": exc.category, "message": str(exc),
                         "line": exc.line}
            self._reply(reply)
            if not reply.get("ok"):
                return


if __name__ == "__main__":  # pragma: no cover
    sys.exit("sandbox.worker is started by the fork server, not directly")
