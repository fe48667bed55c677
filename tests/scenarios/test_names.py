"""One meaning per name (docs/plugins.md, "One meaning per name"), checked on the source: no module
basename appears twice across the product packages (beyond the plugin convention's ``plugin.py``
and ``options.py``), no two modules of one folder differ only by a suffix (``hints``/``hinting``),
and the names this rule retired do not come back: the loop's run object is ``run``, never
``parts``; the run-event hooks take ``run_info``; the dedupe index is not a "pool" on disk; the
eval suite of a folder of programs is ``programs``; ``window`` is only the regeneration window
(the estimators' ``recent_plays``, the memory's ``StatusRollouts``, the lab's ``rlve_plays``);
``record`` is only an ``EnvRecord`` (no function ``record``); a family's name in the loop is
``family_name``, never a ``family: str``; a preflight check's context is ``preflight``. Each
rule is also fed a synthetic case it must refuse, so a rule that stopped seeing anything would
fail here too."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from fakes.cli import ROOT

PACKAGES = ("spade_core", "plugins", "sandbox", "envmemory")
#: The plugin package convention (docs/plugins.md, "Layout of a plugin package").
EXEMPT = {"__init__.py", "__main__.py", "plugin.py", "options.py"}
#: Folders of programs and templates that run in the sandbox or are data, not modules.
NOT_MODULES = {"seeds", "templates", "data"}
#: Suffixes that make a near twin of a module name in the same folder.
TWIN_SUFFIXES = ("s", "es", "ing", "er", "or", "ers", "ors")
#: Where the retired names must not come back: code, tests, configs and docs.
SEARCHED = ("spade_core", "plugins", "sandbox", "envmemory", "tests", "docs", "configs",
            "experiments", "scripts", "README.md", "Makefile", "pyproject.toml")
RUN_EVENT_HOOKS = ("spade_run_start", "spade_iteration_end", "spade_phase_progress",
                   "spade_env_accepted", "spade_env_mastered", "spade_run_end")
#: Retired names (built from parts, so this file does not match itself): pattern -> the name now.
RETIRED = {
    r"\brun" + r"_parts\b": "run (the SelfPlayRun)",
    r"\bparts\s*:\s*Self" + r"PlayRun\b": "run: SelfPlayRun",
    r"\bpool" + r"\.json(?!l)": "dedupe_index.json",
    r"\bpool" + r"_id\b": "index_id",
    r"spade_[a-z_]+\(\s*run\s*=": "the run-event hooks' run_info=",
    r"--suite po" + r"ol\b": "--suite programs",
    r"\bpo" + r"ol\.(path|bucket)\b": "programs.path / programs.bucket",
    r"\bStatus" + r"Windows\b": "StatusRollouts",
    r"\bstatus" + r"_windows\b": "status_rollouts",
    r"\bWindowed" + r"Options\b": "StatusRolloutOptions",
    r"\bwindow" + r"_(plays|win_rate)\b": "recent_plays / recent_win_rate",
    r"\brlve" + r"_window\b": "rlve_plays",
    r"\bdef rec" + r"ord\(": "write_run_files (record is an EnvRecord)",
    r"\bfrom spade_core\.selfplay\.iteration import [^\n]*\brec" + r"ord\b": "write_run_files",
}


def product_modules() -> list[Path]:
    return [p.relative_to(ROOT) for package in PACKAGES
            for p in sorted((ROOT / package).rglob("*.py"))
            if not NOT_MODULES & set(p.relative_to(ROOT).parts)]


def repeated_basenames(modules: list[Path]) -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for module in modules:
        if module.name not in EXEMPT:
            where[module.name].append(str(module))
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def _twins(a: str, b: str) -> bool:
    """``a`` and ``b`` are one root with different suffixes (``hint`` + ``s``/``ing``)."""
    for s1 in ("", *TWIN_SUFFIXES):
        root = a[:len(a) - len(s1)] if s1 and a.endswith(s1) else a if not s1 else None
        if root and len(root) >= 3 and any(b == root + s2 for s2 in ("", *TWIN_SUFFIXES)):
            return a != b
    return False


def near_twins(modules: list[Path]) -> list[tuple[str, str]]:
    by_folder: dict[Path, set[str]] = defaultdict(set)
    for module in modules:
        if module.name not in EXEMPT:
            by_folder[module.parent].add(module.stem)
    return sorted((str(folder / f"{a}.py"), str(folder / f"{b}.py"))
                  for folder, stems in by_folder.items() for a in stems for b in stems
                  if a < b and _twins(a, b))


def test_no_module_basename_repeats_across_the_packages():
    repeated = repeated_basenames(product_modules())
    assert not repeated, "\n".join(f"{name}: {', '.join(paths)}; give each a name of its own"
                                   for name, paths in sorted(repeated.items()))
    fake = [Path("spade_core/selfplay/bench.py"), Path("sandbox/bench.py"),
            Path("plugins/a/plugin.py"), Path("plugins/b/plugin.py")]
    assert list(repeated_basenames(fake)) == ["bench.py"]


def test_no_two_modules_of_a_folder_differ_only_by_a_suffix():
    twins = near_twins(product_modules())
    assert not twins, twins
    fake = [Path("spade_core/selfplay/hints.py"), Path("spade_core/selfplay/hinting.py"),
            Path("spade_core/interfaces/estimator.py"), Path("plugins/estimators.py")]
    assert near_twins(fake) == [("spade_core/selfplay/hinting.py",
                                 "spade_core/selfplay/hints.py")]


def _searched_files() -> list[Path]:
    files = []
    for name in SEARCHED:
        path = ROOT / name
        found = [path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() else []
        files += [f for f in found if f.is_file() and f.suffix in (".py", ".md", ".yaml", ".yml",
                                                                    ".toml", ".jinja", "")
                  and "__pycache__" not in f.parts]
    return files


def retired_names(text: str) -> list[str]:
    return [f"{m.group(0)!r} (now {now})" for pattern, now in RETIRED.items()
            for m in re.finditer(pattern, text)]


def test_the_retired_names_do_not_come_back():
    found = []
    for path in _searched_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}: {hit}" for hit in retired_names(text)]
    assert not found, "\n".join(found)
    assert retired_names("self.run" + "_parts = run") and retired_names('"po' + 'ol.json"')
    assert not retired_names('"dedupe_index.json", "po' + 'ol.jsonl", run_info=run.run_info')
    assert retired_names("def rec" + "ord(run, iteration):") and retired_names("Status" + "Windows")
    assert retired_names('figures["window' + '_plays"]') and retired_names("rlve" + "_window: 8")
    assert not retired_names("def write_run_files(run):\n    record = memory.get(env_id)")


def run_event_parameters(source: str) -> list[str]:
    """The first parameter (after ``self``) of every run-event hook defined in ``source``."""
    names = []
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a hostile or broken program of the sandbox's tests
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in RUN_EVENT_HOOKS:
            params = [a.arg for a in node.args.args if a.arg != "self"]
            names.append(params[0] if params else "")
    return names


def test_run_event_hooks_take_run_info():
    wrong = []
    for path in _searched_files():
        if path.suffix == ".py":
            names = run_event_parameters(path.read_text(encoding="utf-8"))
            wrong += [f"{path.relative_to(ROOT)}: {n}" for n in names if n != "run_info"]
    assert not wrong, wrong
    assert run_event_parameters("def spade_run_end(self, run, status, error): pass") == ["run"]


def test_the_programs_suite_is_not_called_pool():
    from plugins.evals.plugin import SUITES
    from spade_core.eval.evaluate import FAMILY_SUITES

    names = {name for name, *_ in SUITES}
    assert "programs" in names and "pool" not in names
    assert FAMILY_SUITES == {"programs"}


def test_the_estimators_latest_plays_are_not_a_window():
    from plugins.difficulty_estimators import FrontierOptions, LearningProgressPerStepOptions

    for options in (FrontierOptions, LearningProgressPerStepOptions):
        assert "recent_plays" in options.model_fields and "window" not in options.model_fields


def family_name_strings(source: str) -> list[str]:
    """Dataclass fields and parameters named ``family`` annotated ``str`` in ``source``: in the
    loop, ``family`` is an ``EnvFamily`` and a name is ``family_name``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and node.target.id == "family" and "str" in ast.unparse(node.annotation)):
            found.append(f"line {node.lineno}: family: {ast.unparse(node.annotation)}")
        elif isinstance(node, ast.arg) and node.arg == "family" and node.annotation is not None \
                and "str" in ast.unparse(node.annotation):
            found.append(f"line {node.lineno}: parameter family: {ast.unparse(node.annotation)}")
    return found


def test_in_the_loop_a_family_name_is_family_name():
    wrong = [f"{path.relative_to(ROOT)} {hit}"
             for path in sorted((ROOT / "spade_core" / "selfplay").rglob("*.py"))
             for hit in family_name_strings(path.read_text(encoding="utf-8"))]
    assert not wrong, wrong
    assert family_name_strings("class HeldDesign:\n    family: str\n")
    assert not family_name_strings("class Proposal:\n    family: EnvFamily\n"
                                   "    family_name: str\n")


def preflight_contexts_named_context(source: str) -> list[str]:
    """Functions whose parameter ``context`` is read as a ``PreflightContext`` (``.where``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                a.arg == "context" for a in node.args.args):
            if any(isinstance(n, ast.Attribute) and n.attr == "where"
                   and isinstance(n.value, ast.Name) and n.value.id == "context"
                   for n in ast.walk(node)):
                found.append(f"{node.name} (line {node.lineno})")
    return found


def test_preflight_checks_name_their_context_preflight():
    wrong = []
    for path in _searched_files():
        if path.suffix == ".py":
            found = preflight_contexts_named_context(path.read_text(encoding="utf-8"))
            wrong += [f"{path.relative_to(ROOT)}: {f}" for f in found]
    assert not wrong, wrong
    assert preflight_contexts_named_context(
        "def check(options, context):\n    return [context.where]\n") == ["check (line 1)"]
