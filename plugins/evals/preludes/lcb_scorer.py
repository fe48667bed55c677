"""LiveCodeBench's test runner as a sandbox scorer: runs a candidate program against its tests.

Trusted prelude source of the ``livecodebench`` suite's scorer (``spade_core.eval.sandboxed_scoring``),
run in a sandbox worker after ``SCORER_BASE``. It defines ``score_request(request)``: 1.0 when the
candidate passes every test, else 0.0 (pass/fail per sample, as LiveCodeBench grades).

The candidate is untrusted. It is compiled here with the sandbox's own compile policy
(``sandbox.policy.compile_program``) and run with the sandbox's guarded globals
(``sandbox.guards.program_globals``), exactly as an environment program is, inside the worker's OS
limits. What it gets beyond a program's allowlist is only what LiveCodeBench programs expect, all
in memory: ``input()``, ``print()``, ``open(0)`` and a ``sys`` stand-in reading this test's input
and writing to a capture (``stdin``, ``stdout``, ``stderr``, ``setrecursionlimit``, ``exit``,
``maxsize``, ...), an ``io`` stand-in with ``StringIO`` and ``BytesIO``, and the names
LiveCodeBench's runner star-imports before every program (``List``, ``deque``, ``heappush``,
``gcd``...). ``sys`` and ``io`` are importable by the candidate only, not by environment programs.

Request: ``{"code", "mode": "stdin"|"call", "fn_name", "tests": [{"input", "output"}],
"packed": [str], "test_seconds"}``. ``packed`` holds LiveCodeBench's compressed private tests
(base64 of zlib of a pickled JSON string); they are decoded here, in the worker, by an unpickler
that refuses every global, so only plain values (the JSON string) can come out of it.
"""

import ast as _ast
import base64 as _base64
import io as _io
import json as _lcb_json
import pickle as _pickle
import sys as _sys
import time as _time
import zlib as _zlib
from decimal import Decimal as _Decimal, InvalidOperation as _InvalidOperation

__all__ = list(globals().get("__all__", []))

#: What the fork servers import before forking (a worker may not read the library files after
#: it drops privileges).
PRELOAD = ("ast", "base64", "decimal", "io", "pickle", "time", "zlib", "sandbox.guards",
           "sandbox.modules", "sandbox.policy", "RestrictedPython")

#: Most characters a candidate may write per test before the test fails.
_MAX_OUTPUT = 1 << 24
#: The recursion limit LiveCodeBench's runner sets; a candidate may raise it up to the cap.
_RECURSION = 50_000
_RECURSION_CAP = 200_000
#: Modules the candidate may import besides the sandbox's allowlist (stand-ins built here).
_OWN_MODULES = frozenset({"sys", "io"})
#: What LiveCodeBench's runner star-imports before every program, in its order.
_STAR_IMPORTS = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math",
                 "random", "statistics", "itertools", "functools", "operator", "json", "typing")


class _Refused(Exception):
    pass


class _NoGlobals(_pickle.Unpickler):
    def find_class(self, module, name):
        raise _Refused(f"the packed tests name {module}.{name}; only plain values are read")


def unpack_tests(packed):
    """LiveCodeBench's compressed test list -> ``[{"input", "output", ...}]``."""
    raw = _zlib.decompress(_base64.b64decode(packed.encode("ascii")))
    value = _NoGlobals(_io.BytesIO(raw)).load()
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if not isinstance(value, str):
        raise _Refused("the packed tests are not a JSON string")
    tests = _lcb_json.loads(value)
    if not isinstance(tests, list):
        raise _Refused("the packed tests are not a list")
    return tests


class _Capture:
    """What the candidate writes: ``write`` appends to a list the scorer holds."""

    def __init__(self, parts, budget):
        self._parts = parts
        self._budget = budget

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str")
        if self._budget[0] < len(text):
            self._budget[0] = -1
            raise _Refused("output limit exceeded")
        self._budget[0] -= len(text)
        self._parts.append(text)
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False


class _Discard(_Capture):
    def write(self, text):
        return len(text) if isinstance(text, str) else 0


class _Reader:
    """The reading methods of an input stream, over the in-memory ``_stream``."""

    def read(self, size=-1):
        return self._stream.read(size)

    def readline(self, size=-1):
        return self._stream.readline(size)

    def readlines(self):
        return self._stream.readlines()

    def __iter__(self):
        return iter(self._stream.readlines())


class _BinaryInput(_Reader):
    def __init__(self, data):
        self._stream = _io.BytesIO(data)


class _Input(_Reader):
    """``sys.stdin`` for one test: the test's input, in memory."""

    def __init__(self, text):
        self._stream = _io.StringIO(text)
        self.buffer = _BinaryInput(text.encode("utf-8"))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self):
        pass


class _Namespace:
    """A module stand-in the guards let the candidate read (the prelude's own objects)."""

    def __init__(self, name, **values):
        self.__name__ = name
        for key, value in values.items():
            setattr(self, key, value)


def _exit(code=None):
    raise SystemExit(code)


def _set_recursion(limit):
    if type(limit) is not int or limit < 1:
        raise ValueError("recursion limit must be a positive int")
    _sys.setrecursionlimit(min(limit, _RECURSION_CAP))


def _std_streams(text, parts, budget):
    stdin = _Input(text)
    stdout = _Capture(parts, budget)
    stderr = _Discard(parts, budget)

    def read_line(prompt=""):
        line = stdin.readline()
        if not line:
            raise EOFError("EOF when reading a line")
        return line[:-1] if line.endswith("\n") else line

    def open_stdin(file, *args, **kwargs):
        if file == 0:
            return stdin
        raise PermissionError("the sandbox has no files; only open(0) (stdin) is available")

    system = _Namespace(
        "sys", stdin=stdin, stdout=stdout, stderr=stderr, exit=_exit, maxsize=_sys.maxsize,
        setrecursionlimit=_set_recursion, getrecursionlimit=_sys.getrecursionlimit,
        set_int_max_str_digits=_sys.set_int_max_str_digits,
        get_int_max_str_digits=_sys.get_int_max_str_digits, float_info=_sys.float_info,
        argv=["main.py"], version_info=tuple(_sys.version_info), byteorder=_sys.byteorder)
    return stdin, stdout, stderr, system, read_line, open_stdin


def _printer(stdout, stderr):
    """RestrictedPython's ``_print_`` factory: ``print(..., file=...)`` honours ``file``."""

    class _Print:
        def __init__(self, _getattr_=None):
            pass

        def _call_print(self, *objects, sep=" ", end="\n", file=None, flush=False):
            target = stdout if file is None else file
            sep = " " if sep is None else sep
            end = "\n" if end is None else end
            target.write(sep.join(str(o) for o in objects) + end)

        def __call__(self):
            return ""

    return _Print


def _main_guard_removed(code):
    """The source with a top-level ``if __name__ == "__main__":`` made unconditional (the
    candidate runs as module ``__env__``), as LiveCodeBench's runner strips that guard."""
    try:
        tree = _ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    changed = False
    for node in tree.body:
        test = node.test if isinstance(node, _ast.If) else None
        if (isinstance(test, _ast.Compare) and isinstance(test.left, _ast.Name)
                and test.left.id == "__name__" and len(test.ops) == 1
                and isinstance(test.ops[0], _ast.Eq) and len(test.comparators) == 1
                and isinstance(test.comparators[0], _ast.Constant)
                and test.comparators[0].value == "__main__"):
            node.test = _ast.copy_location(_ast.Constant(True), test)
            changed = True
    return _ast.unparse(tree) if changed else code


def _exported(module, stand_in):
    """What ``from module import *`` binds, limited to what the stand-in holds."""
    real = _sys.modules.get(module)
    listed = getattr(real, "__all__", None)
    held = vars(stand_in)
    names = listed if isinstance(listed, (list, tuple)) else list(held)
    # read the stand-in's dict, not its attributes: a withheld name's lookup is a violation
    return {n: held[n] for n in names if not n.startswith("_") and n in held}


def _star_names(proxy, random_module):
    """The names LiveCodeBench's runner star-imports, then the modules it imports by name;
    ``from builtins import *`` comes before ``typing`` there, so builtins win over the others."""
    from sandbox import guards

    names = {}
    for module in _STAR_IMPORTS[:-1]:
        stand_in = random_module if module == "random" else proxy(module)
        names.update(_exported(module, stand_in))
    names.update(StringIO=_io.StringIO, BytesIO=_io.BytesIO)
    for name in guards.safe_builtins():
        names.pop(name, None)
    names.update(_exported("typing", proxy("typing")))
    for module in _STAR_IMPORTS:
        names[module] = random_module if module == "random" else proxy(module)
    return names


def _run(code_object, text, random_module):
    """Run the candidate once on ``text``; its globals and what it wrote (``None``: it failed)."""
    from sandbox import guards, modules

    parts = []
    budget = [_MAX_OUTPUT]
    stdin, stdout, stderr, system, read_line, open_stdin = _std_streams(text, parts, budget)
    io_stand_in = _Namespace("io", StringIO=_io.StringIO, BytesIO=_io.BytesIO)
    own = {"sys": system, "io": io_stand_in, "random": random_module}
    names = _star_names(modules.proxy, random_module)
    names.update(own)
    names.update(stdin=stdin, stdout=stdout, stderr=stderr, input=read_line, open=open_stdin,
                 exit=_exit, quit=_exit, setrecursionlimit=_set_recursion)
    env = guards.program_globals(names, own)
    env["_print_"] = _printer(stdout, stderr)
    random_module.seed(0)
    previous = _sys.getrecursionlimit()
    digits = _sys.get_int_max_str_digits()
    _sys.setrecursionlimit(_RECURSION)
    try:
        exec(code_object, env)  # noqa: S102 - compiled by the sandbox's policy, guarded globals
        ok = True
    except SystemExit:
        ok = True
    except Exception:  # noqa: BLE001 - a candidate that raised fails this test
        ok = False
    finally:
        _sys.setrecursionlimit(previous)
        _sys.set_int_max_str_digits(digits)
    return env, ("".join(parts) if ok and budget[0] >= 0 else None)


def _lines(text):
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line):
    try:
        return [_Decimal(part) for part in line.split()]
    except (_InvalidOperation, ValueError):
        return None


def stdout_matches(produced, expected):
    """LiveCodeBench's stdin comparison: the same number of stripped lines, each equal as text
    or as a list of decimal numbers."""
    got, want = _lines(produced), _lines(expected)
    if len(got) != len(want):
        return False
    for mine, theirs in zip(got, want):
        if mine == theirs:
            continue
        left, right = _decimals(mine), _decimals(theirs)
        if left is None or right is None or left != right:
            return False
    return True


_PLAIN = (int, float, str, bool, type(None))


def plain(value, depth=0):
    """``value`` as plain JSON-like data (exact builtin types, tuples as lists), so comparing it
    never calls the candidate's own ``__eq__``; ``_Refused`` for anything else."""
    if depth > 100:
        raise _Refused("value nested too deep")
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind in (list, tuple):
        return [plain(v, depth + 1) for v in value]
    if kind is dict:
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in value.items()}
    raise _Refused(f"the function returned a {kind.__name__}, not plain data")


# A test's time is the worker's CPU time (``process_time``), not the clock: the same candidate
# gets the same score on an idle machine and a loaded one (issue 48). The candidate cannot wait
# without using the CPU (no ``sleep``, no I/O but its in-memory input), and the whole item is
# still bounded on the clock by the sandbox's call limit.
def _run_stdin(code_object, tests, limit, random_module):
    for test in tests:
        begun = _time.process_time()
        _, produced = _run(code_object, str(test["input"]), random_module)
        if produced is None or _time.process_time() - begun > limit:
            return False
        if not stdout_matches(produced, str(test["output"])):
            return False
    return True


def _run_call(code_object, tests, fn_name, limit, random_module):
    env, produced = _run(code_object, "", random_module)
    if produced is None:
        return False
    if not fn_name.isidentifier() or fn_name.startswith("_"):
        return False
    holder = env.get("Solution")
    try:
        target = holder() if isinstance(holder, type) else None
        method = getattr(target, fn_name) if target is not None else env.get(fn_name)
    except Exception:  # noqa: BLE001 - a constructor or lookup that raised fails the item
        return False
    if not callable(method):
        return False
    for test in tests:
        try:
            args = [_lcb_json.loads(line) for line in str(test["input"]).split("\n")]
            expected = _lcb_json.loads(test["output"])
        except ValueError:
            return False
        begun = _time.process_time()
        previous = _sys.getrecursionlimit()
        _sys.setrecursionlimit(_RECURSION)
        try:
            result = plain(method(*args))
        except SystemExit:
            return False
        except Exception:  # noqa: BLE001 - the candidate raised or returned odd data
            return False
        finally:
            _sys.setrecursionlimit(previous)
        if _time.process_time() - begun > limit or result != expected:
            return False
    return True


def score_request(request):
    """1.0 when the candidate passes every test of the request, else 0.0."""
    import random as random_module
    from sandbox.policy import CompileFailure, compile_program

    tests = list(request.get("tests") or [])
    try:
        for packed in request.get("packed") or []:
            tests.extend(unpack_tests(packed))
    except Exception:  # noqa: BLE001 - undecodable data scores nothing (the host checked it)
        return 0.0
    code = str(request.get("code") or "")
    if not code.strip() or not tests:
        return 0.0
    compiled = compile_program(_main_guard_removed(code), extra_modules=_OWN_MODULES)
    if isinstance(compiled, CompileFailure):
        return 0.0
    limit = float(request.get("test_seconds") or 6.0)
    if request.get("mode") == "call":
        passed = _run_call(compiled, tests, str(request.get("fn_name") or ""), limit,
                           random_module)
    else:
        passed = _run_stdin(compiled, tests, limit, random_module)
    return 1.0 if passed else 0.0
