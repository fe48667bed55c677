"""The worker: one forked process that confines itself, loads one program and serves its episodes.

It runs in the child right after the fork server forks. ``confine`` cuts it off (new session and
process group, stray descriptors closed, rlimits, no new privileges, its own unprivileged uid);
``Harness`` then runs the trusted prelude and the restricted program once per instance (``count``
of them, each with its own module globals, classes, ``random`` generator and ``decimal`` context)
and answers ``reset``, ``step``, ``solution``, ``close`` and ``batch`` requests as frames on its
channel. A request names its instance with ``"i"`` (default 0). Every reply and progress marker
carries the worker's CPU time (``"c"``, ``time.process_time``): the call limits count CPU time,
and the host needs to know where each call began on that clock.
"""

from __future__ import annotations

import ctypes
import decimal
import json
import math
import numbers
import os
import random
import resource
import signal
import socket
import sys
import time
import traceback
import types
from typing import Any, NoReturn

from spade_core.validation import Invalid, env_class

from sandbox import guards, modules
from sandbox.limits import Limits
from sandbox.ownership import PRELUDE_MODULE, PROGRAM_MODULE
from sandbox.policy import PROGRAM_FILENAME, CompileFailure, compile_program
from sandbox.protocol import PROGRESS_SECONDS, FramedSocket, FrameError, encode, frame, mark

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_libc = ctypes.CDLL(None, use_errno=True)


def confine(channel_fd: int, limits: Limits, uid: int | None, scratch: str | None,
            count: int = 1) -> None:
    """Cut this freshly forked process off from everything but its channel.

    ``RLIMIT_CPU`` is ``cpu_seconds`` per instance the worker hosts (the CPU that many separate
    workers would have had); ``RLIMIT_AS`` stays ``memory_mb`` for the whole process."""
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
    cpu = limits.cpu_seconds * max(1, count)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
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


def run(channel_fd: int, source: str, family_modules: frozenset[str],
        prelude: types.CodeType | None, limits: Limits, uid: int | None, scratch: str | None,
        count: int = 1, reuse: int = 0) -> NoReturn:
    """Entry point in the forked child; never returns. Compiles ``source`` under the policy
    once confined (a program that does not compile gets its refusal as the ready reply).
    ``reuse`` > 0: the worker may load more instances of its program later (``more``), up to
    ``reuse`` over its life, and its ``RLIMIT_CPU`` counts that many instances."""
    status = 0
    try:
        confine(channel_fd, limits, uid, scratch, max(count, reuse))
        channel = FramedSocket(socket.socket(fileno=channel_fd))
        code = compile_program(source, max_chars=limits.max_program_chars,
                               extra_modules=family_modules)
        if isinstance(code, CompileFailure):
            channel.sock.sendall(encode({"ok": 0, "category": code.category,
                                         "message": code.message, "line": code.line}))
        else:
            Harness(channel, limits, count, reuse).serve(code, prelude)
    except BaseException:  # noqa: BLE001 - whatever happens, the worker ends here
        status = 70
    os._exit(status)


class ProgramError(Exception):
    """A failure attributed to the program, with its verdict category."""

    def __init__(self, category: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.category = category
        self.line = line

    @property
    def fatal(self) -> bool:
        """Whether the failure ends every instance of the worker, not just the one that failed."""
        return self.category in WORKER_FATAL


#: Failures that end the whole worker: after them the process itself is suspect (a timeout
#: interrupts code mid-way, memory is exhausted, a guard fired, the harness broke). The others
#: (the program raised or returned something wrong) end only the instance they happened in.
WORKER_FATAL = frozenset({"timeout", "memory", "forbidden", "crash"})


class _Overrun(BaseException):
    """Raised into a program whose batched call ran past its own CPU-time limit."""


_TIMER = {"armed": False, "fired": False}


def _on_overrun(_signum: int, _frame: Any) -> None:
    if _TIMER["armed"]:
        _TIMER["fired"] = True
        raise _Overrun()


class _Instance:
    """One environment instance: its env object and its own ``decimal`` context."""

    __slots__ = ("env", "context", "closes", "failure")

    def __init__(self, context: Any) -> None:
        self.env: Any = None
        self.context = context
        self.closes = False
        #: The error reply that ended this instance, or ``{"closed"}``; ``None`` while live.
        self.failure: dict[str, Any] | None = None


def _program_line(tb: types.TracebackType | None) -> int | None:
    line = None
    for tb_frame, lineno in traceback.walk_tb(tb):
        if tb_frame.f_code.co_filename == PROGRAM_FILENAME:
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
    """Runs ``count`` instances of one program's environment and answers requests for them."""

    def __init__(self, channel: FramedSocket, limits: Limits, count: int = 1,
                 reuse: int = 0) -> None:
        self.channel = channel
        self.limits = limits
        self.count = max(1, count)
        #: Most instances this worker may load over its life (0: only its first ``count``; it
        #: ends with its last live instance).
        self.reuse = reuse
        self.instances: list[_Instance] = []
        #: When the last progress marker went out (or the current request began).
        self._marked = time.monotonic()
        #: A fresh decimal context per instance, copied from the one the worker was forked with.
        self._decimal = decimal.getcontext().copy()

    # -- calling into the program ---------------------------------------------------------
    def _call(self, instance: _Instance | None, what: str, func: Any, *args: Any,
              limit: float | None = None, **kwargs: Any) -> Any:
        """Call program code; every failure becomes a :class:`ProgramError`. ``limit`` (batched
        calls and multi-instance loads) arms a CPU-time timer (``ITIMER_PROF``, the clock the
        limits count): a call running past it ends the worker."""
        if instance is not None:
            decimal.setcontext(instance.context)
        try:
            if limit is not None:
                _TIMER["fired"] = False
                _TIMER["armed"] = True
                signal.setitimer(signal.ITIMER_PROF, max(limit, 0.001), 0.05)
            try:
                result = func(*args, **kwargs)
            finally:
                if limit is not None:
                    _TIMER["armed"] = False
                    signal.setitimer(signal.ITIMER_PROF, 0)
        except _Overrun:
            raise ProgramError("timeout", f"{what}: ran past its time limit ({limit:g} s of "
                               "CPU)") from None
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
        if limit is not None and _TIMER["fired"]:
            raise ProgramError("timeout", f"{what}: ran past its time limit ({limit:g} s of CPU; "
                               "the program caught the interruption)")
        return result

    def load_instance(self, code: types.CodeType, prelude: types.CodeType | None,
                      limit: float | None = None) -> tuple[_Instance, str]:
        """Run the trusted prelude, then the program, in a namespace of their own (with a
        private ``random``), and build the program's env."""
        own = {"random": modules.instance_random(random.Random())}
        instance = _Instance(self._decimal.copy())
        try:
            module = guards.run_prelude(prelude, own)
        except BaseException as exc:  # noqa: BLE001 - a broken prelude is reported, not fatal
            raise ProgramError("crash", f"the family prelude failed: {_describe(exc)}") from None
        env_globals = guards.program_globals(dict(vars(module)) if module is not None else {},
                                             own)
        self._call(instance, "running the module", exec, code, env_globals, limit=limit)
        classes = {
            name: value for name, value in list(env_globals.items())
            if isinstance(value, type)
            and type.__getattribute__(value, "__module__") == PROGRAM_MODULE
        }
        try:  # which class is the environment is the core's rule, the same for every sandbox
            cls = env_class(classes)
        except Invalid as exc:
            raise ProgramError(exc.category, str(exc)) from None
        instance.env = self._call(instance, f"{cls.__name__}()", cls, limit=limit)
        try:  # whether closing must call into the program (library no-ops need no round trip)
            close = getattr(cls, "close", None)
            instance.closes = callable(close) and getattr(close, "__module__", None) in (
                PROGRAM_MODULE, PRELUDE_MODULE)
        except BaseException:  # noqa: BLE001 - odd program objects: ask the program anyway
            instance.closes = True
        return instance, cls.__name__

    def load(self, code: types.CodeType, prelude: types.CodeType | None) -> dict[str, Any]:
        """Load every instance; the ready reply (per instance when there are several)."""
        if self.count == 1:
            try:
                instance, name = self.load_instance(code, prelude)
            except ProgramError as exc:
                return self._error(exc)
            self.instances.append(instance)
            return {"ok": 1, "env_class": name, "closes": instance.closes}
        return self._load_many(code, prelude, self.count)

    def _load_many(self, code: types.CodeType, prelude: types.CodeType | None,
                   count: int) -> dict[str, Any]:
        """Load ``count`` more instances, each under the load time limit, with progress markers
        between them; the reply lists each one's outcome (a fatal failure ends the worker)."""
        limit = self.limits.load_seconds
        entries: list[dict[str, Any]] = []
        self._mark()  # the host's wait for the first instance starts now
        for _ in range(count):
            self._progress()
            try:
                instance, name = self.load_instance(code, prelude, limit)
            except ProgramError as exc:
                if exc.fatal:
                    return self._error(exc)
                instance = _Instance(None)
                instance.failure = self._error(exc)
                entries.append(instance.failure)
            else:
                entries.append({"ok": 1, "env_class": name, "closes": instance.closes})
            self.instances.append(instance)
        return {"ok": 1, "instances": entries}

    def more(self, code: types.CodeType, prelude: types.CodeType | None,
             count: Any) -> dict[str, Any]:
        """The ``more`` request of a reused worker: the host has closed every earlier instance
        (they are dropped here), and ``count`` fresh ones are loaded, numbered on from the
        last; refused (fatal) past the worker's ``reuse`` cap."""
        if not self.reuse or type(count) is not int or count < 1 \
                or len(self.instances) + count > self.reuse:
            return {"ok": 0, "category": "crash", "fatal": 1,
                    "message": f"this worker cannot load {count!r} more instances"}
        for instance in self.instances:
            instance.env = None
            instance.failure = instance.failure or {"closed": 1}
        return self._load_many(code, prelude, count)

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
    @staticmethod
    def _method(env: Any, name: str) -> Any:
        method = getattr(type(env), name, None)
        if not callable(method):
            raise ProgramError("interface", f"the environment class has no {name}() method")
        return getattr(env, name)

    def reset(self, instance: _Instance, seed: Any, limit: float | None = None
              ) -> dict[str, Any]:
        result = self._call(instance, "reset()", self._method(instance.env, "reset"), seed=seed,
                            limit=limit)
        if not isinstance(result, tuple) or len(result) != 2:
            raise ProgramError("interface", "reset() must return a tuple (observation: str, "
                               f"info: dict), got {type(result).__name__}")
        return {"ok": 1, "observation": self._observation(result[0], "reset()"),
                "info": self._info(result[1], "reset()")}

    def step(self, instance: _Instance, action: Any, limit: float | None = None
             ) -> dict[str, Any]:
        result = self._call(instance, "step()", self._method(instance.env, "step"), action,
                            limit=limit)
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

    def solution(self, instance: _Instance, limit: float | None = None) -> dict[str, Any]:
        env = instance.env
        method = getattr(type(env), "solution", None)
        if method is None:
            raise ProgramError("interface", "the environment has no solution() method")
        value = self._call(instance, "solution()", env.solution, limit=limit)
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

    def close_env(self, instance: _Instance, limit: float | None = None) -> dict[str, Any]:
        env = instance.env
        if env is not None and callable(getattr(type(env), "close", None)):
            try:
                self._call(instance, "close()", env.close, limit=limit)
            except ProgramError as exc:
                if exc.fatal:
                    raise
        return {"ok": 1}

    # -- replies ----------------------------------------------------------------------------
    @staticmethod
    def _error(exc: ProgramError) -> dict[str, Any]:
        reply: dict[str, Any] = {"ok": 0, "category": exc.category, "message": str(exc),
                                 "line": exc.line}
        if exc.fatal:
            reply["fatal"] = 1
        return reply

    @staticmethod
    def _frame(message: dict[str, Any]) -> bytes:
        """A reply frame with the worker's CPU time now (``"c"``, where the next call begins);
        ``info`` (already JSON bytes) is spliced in, never re-encoded."""
        message["c"] = time.process_time()
        info = message.pop("info", None)
        if info is None:
            return encode(message)
        head = encode(message)[4:]  # a JSON object: splice ',"info":...' before its brace
        return frame(head[:-1] + b',"info":' + info + b"}")

    def _reply(self, message: dict[str, Any]) -> None:
        self.channel.sock.sendall(self._frame(message))

    def _mark(self) -> None:
        """Send a progress marker with the CPU time now (see ``protocol.mark``)."""
        self.channel.sock.sendall(mark(time.process_time()))
        self._marked = time.monotonic()

    def _progress(self) -> None:
        """Between two calls of one request: a marker once ``PROGRESS_SECONDS`` have passed since
        the request began or since the last one, so the host can end the worker soon after one
        call overruns its own limit (even in C code the worker's own timer cannot interrupt)."""
        if time.monotonic() - self._marked >= PROGRESS_SECONDS:
            self._mark()

    def _live(self) -> int:
        return sum(1 for instance in self.instances if instance.failure is None)

    def handle(self, request: dict[str, Any], limit: float | None = None) -> dict[str, Any]:
        """Answer one call; a program error ends only its instance (unless it is fatal)."""
        op = request.get("op")
        index = request.get("i", 0)
        if type(index) is not int or not 0 <= index < len(self.instances):
            return {"ok": 0, "category": "crash", "message": f"no instance {index!r}",
                    "fatal": 1}
        instance = self.instances[index]
        if instance.failure is not None:
            return {"ok": 0, "category": "crash", "message": f"instance {index} has ended"}
        try:
            if op == "step":
                reply = self.step(instance, request.get("action"), limit)
            elif op == "reset":
                reply = self.reset(instance, request.get("seed"), limit)
            elif op == "solution":
                reply = self.solution(instance, limit)
            elif op == "close":
                reply = self.close_env(instance, limit)
                instance.failure = {"closed": 1}
            else:
                return {"ok": 0, "category": "crash", "message": f"unknown request {op!r}",
                        "fatal": 1}
        except ProgramError as exc:
            reply = self._error(exc)
            instance.failure = reply
        return reply

    def batch(self, calls: Any) -> tuple[bytes, bool]:
        """Answer every call of a ``batch`` request in order, each under its own CPU-time limit;
        one frame holding the replies' frames (each with the CPU time at its end, so the host
        can charge each instance its own calls). Stops at the first fatal failure."""
        if not isinstance(calls, list):
            return encode({"ok": 0, "category": "crash", "message": "malformed batch",
                           "fatal": 1}), True
        frames: list[bytes] = []
        self._marked = time.monotonic()
        for call in calls:
            self._progress()
            if not isinstance(call, dict):
                reply: dict[str, Any] = {"ok": 0, "category": "crash",
                                         "message": "malformed batch call", "fatal": 1}
            else:
                limit = call.get("limit")
                limit = float(limit) if isinstance(limit, (int, float)) \
                    and not isinstance(limit, bool) and math.isfinite(limit) \
                    else self.limits.step_seconds
                reply = self.handle(call, limit)
            frames.append(self._frame(reply))
            if reply.get("fatal"):
                return frame(b"".join(frames)), True
        return frame(b"".join(frames)), False

    def serve(self, code: types.CodeType, prelude: types.CodeType | None) -> None:
        signal.signal(signal.SIGPROF, _on_overrun)
        ready = self.load(code, prelude)
        self._reply(ready)
        if not ready.get("ok") or not self._live():
            return
        while True:
            try:
                request = self.channel.recv(1 << 27)
            except FrameError:
                return
            op = request.get("op")
            if op == "batch":
                data, fatal = self.batch(request.get("calls"))
                self.channel.sock.sendall(data)
            elif op == "more":
                reply = self.more(code, prelude, request.get("count"))
                fatal = not reply.get("ok")
                self._reply(reply)
            else:
                reply = self.handle(request)
                fatal = bool(reply.get("fatal"))
                self._reply(reply)
            if fatal or not (self.reuse or self._live()):
                return


if __name__ == "__main__":  # pragma: no cover
    sys.exit("sandbox.worker is started by the fork server, not directly")
