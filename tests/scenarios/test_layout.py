"""The tests are laid out like the code: the test of product module ``a/b/c.py`` is
``tests/<mirror>/test_c.py``, where the mirror of ``spade_core/`` is ``tests/core/`` (its
subpackage ``spade_core/<sub>/`` is ``tests/core/<sub>/``), of ``sandbox/`` and ``envmemory/`` the
folder of the same name, and of ``plugins/<kind>`` ``tests/plugins/<kind>/`` (its subfolder
``plugins/<kind>/<sub>/``, the preludes, ``tests/plugins/<kind>/<sub>/``). Tests that run a
whole path through several modules (end to end, the quickstart, the reference's fidelity, the
corpora of hostile programs, the docs' examples, the recipes, third-party packages) live in
``tests/scenarios/``. Every other test file is named for a module (or subpackage) of its folder's
product package. Helpers live in ``tests/fakes/``; no product package holds test-only code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from fakes.cli import ROOT

PACKAGES = ("spade_core", "plugins", "sandbox", "envmemory")
#: Folders of programs and templates that run in the sandbox or are data, not modules to test.
NOT_MODULES = {"seeds", "templates", "data"}

_INTERFACE = "an interface: tested through its implementations, in their own test files"
_SUITE_PRELUDE = "a suite's sandbox prelude: played in the sandbox by tests/plugins/evals/"
#: The only product modules without a mirrored ``test_<name>.py``, each with its reason.
COVERED_ELSEWHERE: dict[str, str] = {
    "spade_core/interfaces/backend.py": _INTERFACE,
    "spade_core/interfaces/corpus.py": _INTERFACE,
    "spade_core/interfaces/estimator.py": _INTERFACE,
    "spade_core/interfaces/eval_suite.py": _INTERFACE,
    "spade_core/interfaces/export_format.py": _INTERFACE,
    "spade_core/interfaces/family.py": _INTERFACE,
    "spade_core/interfaces/memory.py": _INTERFACE,
    "spade_core/interfaces/prompts.py": _INTERFACE,
    "spade_core/interfaces/sandbox.py": _INTERFACE,
    "spade_core/interfaces/trainer.py": _INTERFACE,
    "spade_core/hookspecs.py": "pluggy's hook specifications (an interface): every plugin's "
                               "registration test calls them",
    # Sandbox preludes of eval suites that need their benchmark's package, played through the
    # suite's tests (skipped without it); to mirror like lcb_scorer.py and bfcl_simulators.py.
    "plugins/evals/preludes/acebench_episode.py": _SUITE_PRELUDE + "test_acebench_suite.py",
    "plugins/evals/preludes/bfcl_data.py": _SUITE_PRELUDE + "test_bfcl_suite.py",
    "plugins/evals/preludes/bfcl_scorer.py": _SUITE_PRELUDE + "test_bfcl_checker.py",
    "plugins/evals/preludes/gem_episode.py": _SUITE_PRELUDE + "test_gem_suite.py",
    "plugins/evals/preludes/rg_items.py": _SUITE_PRELUDE + "test_reasoning_gym_suite.py",
    "plugins/evals/preludes/tau2_data.py": _SUITE_PRELUDE + "test_tau2_suite.py",
    "plugins/evals/preludes/tau2_episode.py": _SUITE_PRELUDE + "test_tau2_suite.py",
    "plugins/evals/preludes/tau2_loader.py": _SUITE_PRELUDE + "test_tau2_suite.py",
}


def mirror(module: Path) -> Path:
    """The test folder of a product module (a path relative to the root)."""
    top, *rest = module.parts
    if top == "spade_core":
        return Path("tests/core", *rest[:-1])
    if top == "plugins":
        if len(rest) == 1:  # a one-module plugin (plugins/difficulty_estimators.py)
            return Path("tests/plugins") / rest[0].removesuffix(".py")
        return Path("tests/plugins", *rest[:-1])
    return Path("tests") / top


def product_folder(tests: Path) -> Path:
    """The product folder whose modules a test folder (relative to the root) mirrors."""
    top, *rest = tests.parts[1:]
    if top == "core":
        return Path("spade_core", *rest)
    if top == "plugins":
        return Path("plugins", *rest)
    return Path(top, *rest)


def has_logic(path: Path) -> bool:
    """A module that defines a function or a class (not only re-exports and constants)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
               for node in tree.body)


def product_modules() -> list[Path]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if NOT_MODULES & set(relative.parts) or path.name in ("__init__.py", "__main__.py"):
                continue
            if has_logic(path):
                found.append(relative)
    return found


def test_every_module_with_logic_has_a_test_found_from_its_path():
    missing = []
    for module in product_modules():
        named = mirror(module) / f"test_{module.stem}.py"
        if not (ROOT / named).is_file() and str(module) not in COVERED_ELSEWHERE:
            missing.append(f"{module}: add {named} (or, for an interface, list it in "
                           "COVERED_ELSEWHERE with the reason)")
    assert not missing, "\n".join(missing)


def test_the_covered_elsewhere_table_is_current_and_short():
    modules = {str(m) for m in product_modules()}
    stale = [f"{m}: no such module with logic" for m in COVERED_ELSEWHERE if m not in modules]
    stale += [f"{m}: {mirror(Path(m)) / ('test_' + Path(m).stem + '.py')} exists, unlist it"
              for m in COVERED_ELSEWHERE if (ROOT / mirror(Path(m)) / f"test_{Path(m).stem}.py")
              .is_file()]
    assert not stale, "\n".join(stale)
    assert len(COVERED_ELSEWHERE) <= 20, "test the modules rather than list them"
    assert all(reason.strip() for reason in COVERED_ELSEWHERE.values())


def test_every_test_file_is_named_for_a_module_of_its_folder_or_is_a_scenario():
    stray = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[1] in ("scenarios", "fakes") or NOT_MODULES & set(relative.parts):
            continue
        folder = ROOT / product_folder(relative.parent)
        stem = path.stem.removeprefix("test_")
        single = folder.with_suffix(".py")  # a one-module plugin (plugins/difficulty_estimators.py)
        if not ((folder / f"{stem}.py").is_file() or (folder / stem / "__init__.py").is_file()
                or (single.is_file() and single.stem == stem)):
            stray.append(f"{relative}: no module {product_folder(relative.parent)}/{stem}.py; "
                         "name it for the module it tests, or move it to tests/scenarios/")
    assert not stray, "\n".join(stray)


def test_tests_live_in_the_mirrored_folders_and_helpers_in_fakes():
    allowed = {"core", "sandbox", "envmemory", "plugins", "fakes", "scenarios"}
    stray = [str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("*.py")
             if p.name != "conftest.py"]
    stray += [str(p.relative_to(ROOT)) for p in (ROOT / "tests").iterdir()
              if p.is_dir() and p.name not in allowed and not p.name.startswith((".", "__"))]
    # a subpackage, or a folder of modules without an ``__init__.py`` (spade_core/config)
    subpackages = {p.name for p in (ROOT / "spade_core").iterdir()
                   if p.is_dir() and any(p.glob("*.py"))}
    stray += [str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "core").iterdir()
              if p.is_dir() and p.name not in subpackages and not p.name.startswith((".", "__"))]
    kinds = {p.name for p in (ROOT / "plugins").iterdir()
             if (p.is_dir() and (p / "__init__.py").is_file()) or p.suffix == ".py"}
    kinds = {k.removesuffix(".py") for k in kinds} - {"__init__"}
    stray += [str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "plugins").iterdir()
              if p.is_dir() and p.name not in kinds and not p.name.startswith((".", "__"))]
    assert not stray, stray


def test_no_product_package_holds_test_fakes():
    fakes = [str(p.relative_to(ROOT)) for package in PACKAGES
             for p in (ROOT / package).rglob("*.py")
             if "fake" in p.stem.lower() and not NOT_MODULES & set(p.relative_to(ROOT).parts)]
    assert not fakes, fakes


#: The iteration's steps (spade_core/selfplay/iteration.py's table): module, its step function.
STEPS = {"schedule": "release", "design": "design", "dedupe": "dedupe",
         "environments": "draw_replay", "hinting": "hint", "play": "play",
         "estimate": "estimate", "designer_reward": "reward", "remember": "remember",
         "iteration": "train"}


def test_each_step_test_calls_its_step():
    """A step's test calls the step itself, not only the whole loop around it."""
    uncalled = []
    for module, step in STEPS.items():
        source = (ROOT / "spade_core" / "selfplay" / f"{module}.py").read_text(encoding="utf-8")
        assert re.search(rf"\n( {{4}})?def {step}\(", source), \
            f"spade_core/selfplay/{module}.py has no {step}()"
        test = ROOT / "tests" / "core" / "selfplay" / f"test_{module}.py"
        calls = {node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr",
                                                                                None)
                 for node in ast.walk(ast.parse(test.read_text(encoding="utf-8")))
                 if isinstance(node, ast.Call)}
        if step not in calls:
            uncalled.append(f"{test.relative_to(ROOT)} never calls {step}()")
    assert not uncalled, "\n".join(uncalled)
