"""Which reasoning-gym datasets hand text to a Python interpreter: the audit behind the text guards.

A dataset is *text-interpreting* when code it runs while scoring or generating can compile or
evaluate text: a call of ``eval``, ``exec``, ``compile``, ``sympify``/``parse_expr``/``S``,
``lambdify`` or ``pickle.loads`` in a module of its class hierarchy (found in the source), or a
``compile``/``exec`` audit event raised while its ``score_answer`` scores its own oracle answer
and a formula-like wrong answer (found by running it: sympy functions called on a string
``sympify`` it without naming ``sympify``). Every such dataset is scored in the sandbox, with the
text guards of ``preludes/text_guards.py`` installed (docs/sandbox.md, "Trusted code that
interprets text"); ``python -m plugins.families.text_audit`` prints the table.
"""

from __future__ import annotations

import ast
import inspect
import sys
from dataclasses import dataclass, field
from functools import cache
from typing import Any

#: Call names that compile or evaluate text.
INTERPRETERS = frozenset({"eval", "exec", "compile", "sympify", "parse_expr", "S", "lambdify",
                          "parse_latex"})
#: ``module.loads`` calls that unpickle.
UNPICKLERS = frozenset({"pickle", "marshal", "dill", "cloudpickle"})
#: Receivers whose ``compile`` is a regular expression, not code.
REGEX_MODULES = frozenset({"re", "regex"})
#: Formula-like wrong answer the dynamic check also scores.
PROBE_ANSWER = "x + 1"


@dataclass(frozen=True)
class CallSite:
    """One place that interprets text: ``module:line``, the call, and the enclosing function."""

    module: str
    line: int
    call: str
    function: str


@dataclass
class DatasetAudit:
    """What the audit found for one dataset."""

    name: str
    sites: list[CallSite] = field(default_factory=list)
    #: Audit events (``compile``/``exec``) raised while scoring; empty when none or not run.
    events: list[str] = field(default_factory=list)

    @property
    def interprets_text(self) -> bool:
        return bool(self.sites or self.events)


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name) and func.id in INTERPRETERS:
        return func.id
    if isinstance(func, ast.Attribute):
        receiver = func.value.id if isinstance(func.value, ast.Name) else ""
        if func.attr == "loads" and receiver in UNPICKLERS:
            return f"{receiver}.loads"
        if func.attr in INTERPRETERS and not (func.attr == "compile"
                                              and receiver in REGEX_MODULES):
            return f"{receiver + '.' if receiver else ''}{func.attr}"
    return None


@cache
def module_sites(module_name: str) -> tuple[CallSite, ...]:
    """Every interpreting call in the source of ``module_name`` (already imported)."""
    module = sys.modules.get(module_name)
    try:
        source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return ()
    found: list[CallSite] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                else function
            if isinstance(child, ast.Call):
                name = _call_name(child)
                if name:
                    found.append(CallSite(module_name, child.lineno, name, function))
            visit(child, inner)

    visit(ast.parse(source), "<module>")
    return tuple(site for site in found if _interprets(module, site.call))


def _interprets(module: Any, call: str) -> bool:
    """Whether ``call`` (``name`` or ``receiver.name``) in ``module`` reaches a Python
    interpreter: a builtin, or a function of sympy, pickle or their kin. A module's own
    function of the same name (``propositional_logic.parse_expr``, a logic parser; bfit's
    ``Compiler.compile``, a Brainfuck compiler) does not."""
    import builtins

    receiver, _, name = call.rpartition(".")
    namespace = vars(module)
    if receiver:
        owner = namespace.get(receiver)
        target = getattr(owner, name, None) if owner is not None else None
    else:
        target = namespace.get(name, getattr(builtins, name, None))
    if target is None:
        return True  # unresolved: keep it on the list
    if getattr(target, "spade_replaces", None) == "eval":
        return True  # the text guard installed in this process stands in for the builtin
    target = getattr(target, "__wrapped__", target)
    if target in (builtins.eval, builtins.exec, builtins.compile):
        return True
    home = getattr(target, "__module__", "") or ""
    return home.split(".")[0] in {"sympy", *UNPICKLERS}


def dataset_modules(dataset_cls: type, config_cls: type) -> list[str]:
    """The reasoning-gym modules a dataset's code lives in: its class hierarchy and config."""
    names = [c.__module__ for c in inspect.getmro(dataset_cls)] + [config_cls.__module__]
    return [n for n in dict.fromkeys(names) if n.split(".")[0] == "reasoning_gym"]


def _scoring_events(name: str) -> list[str]:
    """Audit events raised while the dataset scores its own oracle and :data:`PROBE_ANSWER`
    (trusted text only) on one generated entry."""
    import reasoning_gym

    events: list[str] = []
    _Recorder.sink = events
    try:
        dataset = reasoning_gym.create_dataset(name, seed=0, size=1)
        entry = dataset[0]
        for answer in (entry.get("answer"), PROBE_ANSWER):
            if answer is None:
                continue
            _Recorder.active = True
            try:
                dataset.score_answer(str(answer), entry)
            except Exception:  # noqa: BLE001 - a scorer may reject the probe
                pass
            finally:
                _Recorder.active = False
    finally:
        _Recorder.sink = None
    return sorted(set(events))


class _Recorder:
    """One process-wide audit hook (hooks cannot be removed), recording only while active."""

    installed = False
    active = False
    sink: list[str] | None = None

    @classmethod
    def install(cls) -> None:
        if not cls.installed:
            sys.addaudithook(cls.hook)
            cls.installed = True

    @classmethod
    def hook(cls, event: str, args: Any) -> None:
        if cls.active and cls.sink is not None and event in ("compile", "exec"):
            cls.sink.append(event)


def audit(names: list[str] | None = None, *, run_scorers: bool = True) -> dict[str, DatasetAudit]:
    """The audit of every registered reasoning-gym dataset (or of ``names``). ``run_scorers``
    adds the dynamic check, which runs each dataset's scorer on trusted text in this process."""
    from plugins.families.reasoning_gym import registry

    datasets = registry()
    if run_scorers:
        _Recorder.install()
    found = {}
    for name in names or sorted(datasets):
        dataset_cls, config_cls = datasets[name]
        result = DatasetAudit(name)
        for module in dataset_modules(dataset_cls, config_cls):
            result.sites.extend(module_sites(module))
        if run_scorers:
            result.events = _scoring_events(name)
        found[name] = result
    return found


def text_interpreting(names: list[str] | None = None) -> list[str]:
    """The datasets the audit flags, sorted."""
    return sorted(n for n, a in audit(names).items() if a.interprets_text)


#: How each kind of call is held inside the worker (the text guards, or why none is needed).
HELD_BY = {
    "eval": "module-level `eval` = `literal_arithmetic` (literals and arithmetic only)",
    "parse_expr": "`guarded_parse_expr` (names, calls and strings allowlisted)",
    "exec": "not reachable from a reply or a program: it runs the library's own bundled code "
            "at generation; OS layer",
}


def held_by(result: DatasetAudit) -> str:
    """How the sandbox holds one flagged dataset's calls."""
    kinds = set()
    for site in result.sites:
        name = site.call.rpartition(".")[2]
        kinds.add("parse_expr" if name in ("parse_expr", "sympify", "S") else name)
    if result.events and not kinds:
        kinds.add("parse_expr")
    return "; ".join(HELD_BY.get(k, "OS layer") for k in sorted(kinds))


def markdown(results: dict[str, DatasetAudit]) -> str:
    """The audit as the table of docs/sandbox.md."""
    rows = ["| dataset | call sites (module:line, call, in function) | compiles text while "
            "scoring (audit events) | held by |", "|---|---|---|---|"]
    for name, result in sorted(results.items()):
        if not result.interprets_text:
            continue
        sites = "; ".join(f"`{s.module.removeprefix('reasoning_gym.')}:{s.line}` `{s.call}` in "
                          f"`{s.function}`" for s in result.sites) or "none in its modules"
        rows.append(f"| `{name}` | {sites} | {'yes' if result.events else 'no'} | "
                    f"{held_by(result)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown(audit()))
