"""The architecture the folder layout promises, checked on the source: no import cycle anywhere
(package ``__init__`` modules and imports inside functions included), ``spade_core`` names no
module of ``plugins``, ``sandbox`` or ``envmemory`` (not even in a string), nothing outside
``spade_core/cli/`` imports the command line, the command line reaches the loop only through
the API, no import runs back up between the core's subpackages (evaluation into the loop), the
core's foundation modules import nothing above them, no step module of the loop imports another
(sideways), and no component member is probed with ``getattr``/``hasattr`` outside a short
list. Each rule is also fed synthetic imports it must refuse, so a rule that stopped seeing
anything would fail here too."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

from spade_core.interfaces import BASES, SandboxSession, TrainableBackend
from spade_core.interfaces.members import optional_members, required_members
from fakes.cli import ROOT

PACKAGES = ("spade_core", "plugins", "sandbox", "envmemory")
IMPLEMENTATIONS = ("plugins", "sandbox", "envmemory")

#: The only places that look up a component member by name, and why (docs/plugins.md).
ALLOWED_PROBES: dict[tuple[str, str], str] = {
    # Untrusted environment programs (not components): the worker looks their methods up on the
    # class with its own guards, and the families' trusted preludes read optional attributes of
    # the program's class.
    ("sandbox/worker.py", "close"): "the program's optional close(), found on its class",
    ("sandbox/worker.py", "solution"): "the program's solution(), found on its class",
    ("plugins/families/preludes/tool_use_base.py", "*"): "trusted prelude reading program attrs",
}


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "seeds" in path.parts or "preludes" in path.parts:
                continue  # environment programs and trusted preludes, run in the sandbox
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Project modules ``name`` imports: at module level, inside functions (lazy imports) and
    under ``TYPE_CHECKING`` alike, since each is a dependency of the code.

    ``import a.b`` and ``from a import b`` where ``a.b`` is a module depend on ``a.b``;
    ``from a import name`` where ``name`` is no module depends on the package ``a`` (its
    ``__init__`` defines the name). Importing ``a.b`` also runs ``a/__init__`` first, but that
    implicit step is no edge: ``a.b`` reads nothing of ``a`` unless it imports from ``a``, which
    is then an explicit edge. Modules imported by a name held in data (``importlib`` over entry
    points, the CLI's ``CORE_COMMANDS`` table, ``commands.from_module``) are looked up at run time
    like plugins and are not edges."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in MODULES else base)
    resolved = set()
    for target in targets:
        while target and target not in MODULES:
            target = target.rpartition(".")[0]
        if target and target != name:
            resolved.add(target)
    return resolved


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _package_graph() -> dict[str, set[str]]:
    """Every module's edges (:func:`_imports`), with nothing left out: a package's ``__init__``
    importing its own submodules (``spade_core/__init__`` importing ``spade_core.api`` on first
    attribute access) is an edge, and so is a submodule importing a name from its parent package
    (``from spade_core.cli import load_commands``). Together they are a real cycle: each side
    needs the other's code, whichever is imported first."""
    return {name: _imports(name, path) for name, path in MODULES.items()}


def test_no_import_cycles():
    cycles = _cycles(_package_graph())
    assert not cycles, cycles


def test_the_cycle_check_counts_package_inits_and_lazy_imports():
    """The check sees the cycle ``spade_core -> api -> cli.run_cmd -> cli -> spade_core`` that the
    API once made through a lazy import in a function and package-level imports."""
    graph = _package_graph()
    graph["spade_core.api"] = graph["spade_core.api"] | {"spade_core.cli.run_cmd"}
    assert any({"spade_core", "spade_core.api", "spade_core.cli"} <= set(c)
               for c in _cycles(graph))


def _is_cli(module: str) -> bool:
    return module == "spade_core.cli" or module.startswith("spade_core.cli.")


def test_only_the_command_line_imports_the_command_line():
    """The CLI is a layer over the API and the core: no module outside ``spade_core/cli/``
    imports it, at module level or inside a function."""
    offenders = [f"{path.relative_to(ROOT)} imports {target}"
                 for name, path in MODULES.items() if not _is_cli(name)
                 for target in sorted(_imports(name, path)) if _is_cli(target)]
    assert not offenders, "\n".join(offenders)


#: ``spade_core``'s subpackages from the bottom up: a module may import its own subpackage and
#: those below it (the evaluation is called by the loop, the loop by experiments, all of them by
#: the command line), never one above. Top-level core modules (records, errors, the API) are not
#: layered here.
LAYERS = ("interfaces", "config", "eval", "selfplay", "experiment", "cli")


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "spade_core" or len(parts) < 2 or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


def _runs_back_up(name: str, target: str) -> bool:
    mine, theirs = _layer(name), _layer(target)
    return mine is not None and theirs is not None and theirs > mine


def test_no_import_runs_back_up_between_the_cores_subpackages():
    offenders = [f"{path.relative_to(ROOT)} imports {target}"
                 for name, path in MODULES.items()
                 for target in sorted(_imports(name, path)) if _runs_back_up(name, target)]
    assert not offenders, "\n".join(offenders)
    assert _runs_back_up("spade_core.eval.loop", "spade_core.selfplay.run_loop")
    assert not _runs_back_up("spade_core.selfplay.run_loop", "spade_core.eval.loop")


def _synthetic_imports(tmp_path: Path, name: str, source: str) -> set[str]:
    """What :func:`_imports` finds in ``source`` as if it were the module ``name``."""
    path = tmp_path / f"{name.rpartition('.')[2]}.py"
    path.write_text(source, encoding="utf-8")
    return _imports(name, path)


def test_every_subpackage_of_the_core_has_its_layer():
    subpackages = {p.name for p in (ROOT / "spade_core").iterdir()
                   if p.is_dir() and any(p.glob("*.py"))}
    assert subpackages == set(LAYERS)


def test_the_layer_rule_fails_on_an_import_back_up_however_it_is_written(tmp_path):
    """Evaluation importing the loop, at module level, inside a function, for type checking
    only, or relatively: each is seen and refused; every pair of layers only imports down."""
    ways = {
        "module level": "from spade_core.selfplay.run_loop import run\n",
        "inside a function": "def f():\n    import spade_core.selfplay.run_loop\n",
        "type checking": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                         "    from spade_core.selfplay import run_loop\n",
        "relative": "from ..selfplay import run_loop\n",
    }
    for how, source in ways.items():
        targets = _synthetic_imports(tmp_path, "spade_core.eval.synthetic", source)
        assert "spade_core.selfplay.run_loop" in targets, how
        assert any(_runs_back_up("spade_core.eval.synthetic", t) for t in targets), how
    for low, high in itertools.combinations(LAYERS, 2):
        assert _runs_back_up(f"spade_core.{low}.a", f"spade_core.{high}.b"), (low, high)
        assert not _runs_back_up(f"spade_core.{high}.a", f"spade_core.{low}.b"), (low, high)


#: The core's foundation: top-level modules every layer may use (records and errors, messages,
#: the t quantile, atomic files, untrusted text, the launch's rank, the run's info, the phase
#: names, the prompt texts, checkpoint folders and their check, a full disk said plainly), which
#: import no other module of the core: no subpackage, no API.
FOUNDATION = ("spade_core.records", "spade_core.errors", "spade_core.messages",
              "spade_core.intervals", "spade_core.atomic_files", "spade_core.untrusted_text",
              "spade_core.distributed", "spade_core.run_info", "spade_core.phases",
              "spade_core.hint_prompts", "spade_core.validator_prompts",
              "spade_core.checkpoint_files", "spade_core.disk_space")


def _leaves_the_foundation(name: str, target: str) -> bool:
    return (name in FOUNDATION and target.split(".")[0] == "spade_core"
            and target not in FOUNDATION)


def test_the_foundation_imports_nothing_above_it(tmp_path):
    assert set(FOUNDATION) <= set(MODULES)
    offenders = [f"{MODULES[name].relative_to(ROOT)} imports {target}" for name in FOUNDATION
                 for target in sorted(_imports(name, MODULES[name]))
                 if _leaves_the_foundation(name, target)]
    assert not offenders, "\n".join(offenders)
    upward = _synthetic_imports(tmp_path, "spade_core.intervals",
                                "def f():\n    from spade_core.eval.scores import summarise\n")
    assert any(_leaves_the_foundation("spade_core.intervals", t) for t in upward)
    assert not _leaves_the_foundation("spade_core.errors", "spade_core.records")


#: The iteration's table (spade_core/selfplay/iteration.py's docstring, between its ``====``
#: rules) names each step's function as ``:func:`module.function``` or its module as
#: ``:mod:`module```.
STEP_REFERENCE = re.compile(r":(?:func|mod):`(\w+)(?:\.\w+)?`")


def _step_modules() -> set[str]:
    """The loop's step modules: those of ``spade_core.selfplay`` the iteration's table names."""
    doc = ast.get_docstring(ast.parse(MODULES["spade_core.selfplay.iteration"].read_text(
        encoding="utf-8"))) or ""
    rules = [i for i, line in enumerate(doc.splitlines()) if line.startswith("====")]
    table = "\n".join(doc.splitlines()[rules[0]:rules[-1]]) if rules else ""
    named = {f"spade_core.selfplay.{m}" for m in STEP_REFERENCE.findall(table)}
    return named & set(MODULES)


def _sideways(name: str, targets: set[str], steps: set[str]) -> set[str]:
    return targets & steps - {name} if name in steps else set()


def test_no_step_module_imports_another():
    """Steps share helpers through modules that are no step (proposal, difficulty, hints,
    samples, window...), so each reads alone and none depends on another's order: the
    iteration (and the schedule) call them in turn."""
    steps = _step_modules()
    assert len(steps) >= 8, steps  # the table still names the steps
    offenders = [f"{MODULES[name].relative_to(ROOT)} imports {target}" for name in sorted(steps)
                 for target in sorted(_sideways(name, _imports(name, MODULES[name]), steps))]
    assert not offenders, "\n".join(offenders)


def test_the_step_rule_fails_on_a_sideways_import(tmp_path):
    steps = _step_modules()
    assert {"spade_core.selfplay.estimate", "spade_core.selfplay.remember"} <= steps
    for source in ("from spade_core.selfplay.estimate import estimate\n",
                   "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                   "    from spade_core.selfplay import estimate\n",
                   "def f():\n    from .estimate import estimate\n"):
        targets = _synthetic_imports(tmp_path, "spade_core.selfplay.remember", source)
        assert _sideways("spade_core.selfplay.remember", targets, steps) == \
            {"spade_core.selfplay.estimate"}, source


#: What the command line reaches only through :mod:`spade_core.api`: the loop, program
#: validation in the sandbox, the run's memory and sandboxed scoring. The loop's benchmark is
#: the one exception: ``spade bench loop`` dispatches to it as plugins' benchmarks are.
PAST_THE_API = ("spade_core.selfplay", "spade_core.validation", "spade_core.run_memory",
                "spade_core.eval.sandboxed_scoring", "spade_core.gym_env")
CLI_MAY_IMPORT = ("spade_core.selfplay.loop_bench",)


def _past_the_api(target: str) -> bool:
    return target not in CLI_MAY_IMPORT and any(
        target == p or target.startswith(p + ".") for p in PAST_THE_API)


def test_the_command_line_calls_the_api_not_the_loop():
    """A command does what the API does by calling it: no CLI module imports the loop, program
    validation, the memory or the sandbox's scoring, at module level or inside a function."""
    offenders = [f"{path.relative_to(ROOT)} imports {target}"
                 for name, path in MODULES.items() if _is_cli(name)
                 for target in sorted(_imports(name, path)) if _past_the_api(target)]
    assert not offenders, "\n".join(offenders)
    assert _past_the_api("spade_core.selfplay.run_loop") and _past_the_api("spade_core.validation")
    assert not _past_the_api("spade_core.selfplay.loop_bench")
    assert not _past_the_api("spade_core.api")


def test_the_command_line_rule_fails_on_a_command_that_reaches_past_the_api(tmp_path):
    """A synthetic command importing the loop, validation, the memory, the sandbox's scoring or
    the gym env is refused, however it imports them; one using the API, the config and the loop's
    benchmark passes; every entry of the table names modules that exist."""
    reaching = {
        "the loop": "def run(args):\n    from spade_core.selfplay.run_loop import run\n",
        "the loop's package": "import spade_core.selfplay\n",
        "program validation": "from spade_core import validation\n",
        "the memory": "from spade_core.run_memory import open_run_memory\n",
        "sandboxed scoring": "from ..eval.sandboxed_scoring import score_in_sandbox\n",
        "the gym env": "def run(args):\n    import spade_core.gym_env\n",
    }
    for what, source in reaching.items():
        targets = _synthetic_imports(tmp_path, "spade_core.cli.synthetic_cmd", source)
        assert any(_past_the_api(t) for t in targets), (what, targets)
    fine = ("from spade_core import api\nfrom spade_core.config.load import load_config\n"
            "def run(args):\n    from spade_core.selfplay.loop_bench import run\n")
    targets = _synthetic_imports(tmp_path, "spade_core.cli.synthetic_cmd", fine)
    assert targets and not any(_past_the_api(t) for t in targets), targets
    assert all(any(m == p or m.startswith(p + ".") for m in MODULES) for p in PAST_THE_API)
    assert all(m in MODULES for m in CLI_MAY_IMPORT)


def test_spade_core_imports_no_implementation_package():
    offenders = []
    for name, path in MODULES.items():
        if name.split(".")[0] != "spade_core":
            continue
        for target in _imports(name, path):
            if target.split(".")[0] in IMPLEMENTATIONS:
                offenders.append(f"{path.relative_to(ROOT)} imports {target}")
    assert not offenders, "\n".join(offenders)


def test_spade_core_names_no_implementation_module_in_strings():
    implementation = {m for m in MODULES if m.split(".")[0] in IMPLEMENTATIONS and "." in m}
    dotted = re.compile(r"\b(?:plugins|sandbox|envmemory)(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
    offenders = []
    for name, path in MODULES.items():
        if name.split(".")[0] != "spade_core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for match in dotted.findall(node.value):
                    if any(match == m or match.startswith(m + ".") for m in implementation):
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {match!r}")
    assert not offenders, "\n".join(offenders)


def _component_members() -> set[str]:
    bases = list(BASES.values()) + [SandboxSession, TrainableBackend]
    return {m for base in bases for m in required_members(base) + optional_members(base)} | \
        {"batch_size", "env_class", "tools_for", "save_index", "records", "folder"}


def test_no_component_member_is_probed_by_name():
    members = _component_members()
    offenders = []
    for path in sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        if (relative, "*") in ALLOWED_PROBES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2):
                continue
            attr = node.args[1]
            if isinstance(attr, ast.Constant) and attr.value in members \
                    and (relative, attr.value) not in ALLOWED_PROBES:
                offenders.append(f"{relative}:{node.lineno}: {node.func.id}(..., {attr.value!r})")
    assert not offenders, "\n".join(offenders)


def test_the_allowed_probes_are_still_needed():
    for (relative, attr), _reason in ALLOWED_PROBES.items():
        text = (ROOT / relative).read_text(encoding="utf-8")
        assert ("getattr(" in text or "hasattr(" in text), relative
        if attr != "*":
            assert f'"{attr}"' in text, (relative, attr)
