"""The plugin guide in docs/plugins.md, done for real: build the example package from the page,
pip install it into the venv, see it in ``spade plugins`` and select it in a config."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from fakes.cli import ROOT, run_spade

DOC = ROOT / "docs" / "plugins.md"


def documented_files() -> dict[str, str]:
    """Fenced blocks on the page tagged ``file=NAME``."""
    text = DOC.read_text()
    return {m.group(1): m.group(2) for m in
            re.finditer(r"```\w+ file=(\S+)\n(.*?)```", text, flags=re.S)}


@pytest.fixture
def installed_gap(tmp_path):
    files = documented_files()
    assert set(files) == {"pyproject.toml", "spade_gap.py"}
    package = tmp_path / "spade-gap"
    package.mkdir()
    for name, body in files.items():
        (package / name).write_text(body)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
           "--no-index", str(package)]
    subprocess.run(pip, check=True, capture_output=True, text=True, timeout=300)
    try:
        yield
    finally:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", "spade-gap"],
                       capture_output=True, timeout=300)


@pytest.mark.slow
def test_documented_plugin_installs_lists_and_is_selectable(installed_gap, tmp_path):
    rows = json.loads(run_spade("plugins", "--json").stdout)
    gap = [r for r in rows if r["name"] == "gap"]
    assert gap == [{"name": "gap", "kind": "difficulty_estimator", "plugin": "gap",
                    "distribution": "spade-gap", "version": "0.1.0",
                    "summary": "hinted minus unhinted wins", "error": None}]
    result = run_spade("config", "check", str(ROOT / "configs" / "quickstart.yaml"),
                       "--set", "estimator.plugin=gap", "--set",
                       "estimator.options.floor_negative=false", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["estimator"] == {"plugin": "gap",
                                                      "options": {"floor_negative": False}}
    # Its own options schema is enforced.
    result = run_spade("config", "check", str(ROOT / "configs" / "quickstart.yaml"),
                       "--set", "estimator.plugin=gap", "--set", "estimator.options.colour=1")
    assert result.returncode == 2 and "estimator.options.colour: unknown option" in result.stderr
    # And the contract checker from the guide passes on it.
    check = ("import spade_gap\nfrom spade_core.testing import check_component, "
             "load_test_plugins\ncheck_component(load_test_plugins(spade_gap), "
             "'difficulty_estimator', 'gap')\nprint('ok')\n")
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


# -- every other example on the page that defines code is run too ------------------------------

#: What each kind of code example on docs/plugins.md is, by a pattern it matches; the tests below
#: (and tests/plugins/difficulty_estimators/test_difficulty_estimators.py for ``class GapTrend``)
#: run each kind.
EXAMPLE_KINDS = {
    "preflight": r"^def check_paths\(options, preflight\):",
    "registration hook": r"^@hookimpl\ndef register_(?!commands)\w+\(register\):",
    "command": r"^def add_arguments\(parser: argparse.ArgumentParser\) -> None:",
    "history estimator": r"^class GapTrend\(Gap\):",
    "contract test": r"^def test_gap\(\):",
    "run-event hook": r"^@hookimpl\ndef spade_iteration_end\(",
}


def python_examples() -> list[str]:
    """The untagged ``python`` blocks of the page (the tagged files are the package above)."""
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def examples_of(kind: str) -> list[str]:
    return [b for b in python_examples() if re.search(EXAMPLE_KINDS[kind], b, flags=re.M)]


def run_example(source: str, **names: object) -> dict:
    """Execute an example as a module's code, with ``names`` bound and every other name it uses
    but neither defines nor imports bound to a placeholder class of that name (the classes a
    registration snippet builds, such as ``MyCorpus``)."""
    import ast
    import builtins

    tree = ast.parse(source)
    bound = set(names) | set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    free = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in bound}
    namespace: dict = {name: type(name, (), {}) for name in free}
    namespace.update(names, __name__="docs_example")
    exec(compile(tree, str(DOC), "exec"), namespace)
    return namespace


def test_every_example_that_defines_code_is_run():
    defining = [b for b in python_examples()
                if re.search(r"^(?:@\w+\n)?(?:def|class) ", b, flags=re.M)]
    assert defining
    for block in defining:
        kinds = [k for k, pattern in EXAMPLE_KINDS.items()
                 if re.search(pattern, block, flags=re.M)]
        assert len(kinds) == 1, f"an example no test runs (add it to EXAMPLE_KINDS):\n{block}"
    for kind in EXAMPLE_KINDS:
        assert examples_of(kind), f"no example of kind {kind!r} left on the page"


def test_the_registration_examples_register_one_component_each():
    from spade_core.components import KINDS
    from spade_core.hookspecs import hookimpl

    examples = examples_of("registration hook")
    hooks = set()
    for block in examples:
        calls = []
        namespace = run_example(block, hookimpl=hookimpl)
        [hook] = [n for n in namespace if n.startswith("register_")]
        namespace[hook](lambda *args, **kwargs: calls.append((args, kwargs)))
        [(args, kwargs)] = calls
        assert isinstance(args[0], str) and callable(args[1]), block
        hooks.add(hook)
    assert hooks == {k.hook for k in KINDS}  # one example per component kind


def test_the_estimator_registration_example_builds_the_guides_gap():
    import types

    from spade_core.components import BuildContext
    from spade_core.hookspecs import hookimpl

    package = types.ModuleType("spade_gap")
    exec(compile(documented_files()["spade_gap.py"], str(DOC), "exec"), package.__dict__)
    [block] = [b for b in examples_of("registration hook")
               if "def register_difficulty_estimators(" in b]
    namespace = run_example(block, hookimpl=hookimpl, Gap=package.Gap,
                            GapOptions=package.GapOptions)
    calls = []
    namespace["register_difficulty_estimators"](lambda *args: calls.append(args))
    [(name, factory, options, _)] = calls
    assert (name, options) == ("gap", package.GapOptions)
    built = factory(package.GapOptions(), BuildContext(success_threshold=0.5))
    assert isinstance(built, package.Gap) and built.threshold == 0.5


def test_the_plugins_listing_in_the_guide_is_what_spade_plugins_prints(tmp_path, capsys,
                                                                      monkeypatch):
    import tomllib
    from importlib import metadata

    from fakes.plugin_dists import make_dist
    from spade_core.cli import main
    from spade_core.plugins import load_plugins

    files = documented_files()
    project = tomllib.loads(files["pyproject.toml"])["project"]
    site = tmp_path / "site"
    make_dist(site, project["name"], project["version"], {"spade_gap": files["spade_gap.py"]},
              {"gap": "spade_gap"})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "spade_gap", raising=False)
    [dist] = metadata.distributions(path=[str(site)])
    assert main(["plugins"], plugins=load_plugins(list(dist.entry_points))) == 0
    printed = capsys.readouterr().out.splitlines()
    guide = DOC.read_text()
    step = guide[guide.index("**3. Check it is there**"):guide.index("**4. Select it**")]
    [shown] = re.findall(r"```text\n(.*?)\n```", step, flags=re.S)
    assert [" ".join(line.split()) for line in printed] == [" ".join(shown.split())]


def test_the_preflight_example_names_the_key_at_fault(tmp_path):
    from pathlib import Path
    from types import SimpleNamespace

    registered = []
    [block] = examples_of("preflight")
    namespace = run_example(block, Path=Path,
                            register=lambda *a, **kw: registered.append((a, kw)))
    check = registered[0][1]["preflight"]
    preflight = SimpleNamespace(where="corpus.options")
    assert check(SimpleNamespace(path=str(tmp_path)), preflight) == []
    assert check(SimpleNamespace(path=str(tmp_path / "none")), preflight) == [
        f"corpus.options.path: no such file or folder: {tmp_path / 'none'}"]
    assert check is namespace["check_paths"]


def test_the_command_example_runs_as_a_plugin_command(monkeypatch, capsys):
    import types

    from spade_core.cli import main
    from spade_core.testing import load_test_plugins

    exported = []
    package, export = types.ModuleType("my_plugin"), types.ModuleType("my_plugin.export")
    export.export_run = lambda run_dir, as_json: exported.append((run_dir, as_json))
    package.export = export
    monkeypatch.setitem(sys.modules, "my_plugin", package)
    monkeypatch.setitem(sys.modules, "my_plugin.export", export)
    [block] = examples_of("command")
    plugin = types.ModuleType("docs_command")
    plugin.__dict__.update(run_example(block))
    assert main(["export-wandb", "runs/x", "--json"], plugins=load_test_plugins(plugin)) == 0
    assert exported == [("runs/x", True)]


def test_the_contract_test_example_passes_on_the_guide_package(monkeypatch):
    import types

    package = types.ModuleType("spade_gap")
    exec(compile(documented_files()["spade_gap.py"], str(DOC), "exec"), package.__dict__)
    monkeypatch.setitem(sys.modules, "spade_gap", package)
    [block] = examples_of("contract test")
    run_example(block)["test_gap"]()


def test_the_run_event_example_prints_an_iteration_line(capsys):
    from pathlib import Path
    from types import SimpleNamespace

    from spade_core.hookspecs import hookimpl
    import inspect

    import spade_core.selfplay.metrics as metrics

    [block] = examples_of("run-event hook")
    hook = run_example(block, hookimpl=hookimpl)["spade_iteration_end"]
    assert '"mean_regret":' in inspect.getsource(metrics)  # a key the loop really logs
    hook(run_info=SimpleNamespace(run_dir=Path("runs/demo")), iteration=3,
         metrics={"mean_regret": 0.25})
    assert capsys.readouterr().out == "[demo] 3: regret 0.250\n"


# -- a plugin written for an earlier interface is refused when it is built ----------------------


def test_an_estimator_written_for_the_old_interface_is_refused_before_the_model_loads(tmp_path):
    import dataclasses
    import types
    from importlib import metadata

    from fakes.plugin_dists import OLD_INTERFACE_ESTIMATOR, make_dist
    from fakes.training import load_training_plugins, training_config
    from spade_core.config.load import resolve_config
    from spade_core.errors import PluginError
    from spade_core.plugins import load_plugins
    from spade_core.selfplay.run_loop import run
    from spade_core.testing import check_component, load_test_plugins

    site = tmp_path / "site"
    make_dist(site, "spade-oldgap", "0.3.0", {"spade_oldgap": OLD_INTERFACE_ESTIMATOR},
              {"oldgap": "spade_oldgap"})
    sys.path.insert(0, str(site))
    try:  # installed as pip leaves it: loaded through its entry point
        [dist] = metadata.distributions(path=[str(site)])
        installed = load_plugins(list(dist.entry_points))
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("spade_oldgap", None)
    assert not [p.error for p in installed.plugins if p.error]
    loaded = load_training_plugins()
    loaded.registry.add(installed.registry.components[("difficulty_estimator", "oldgap")])
    backends = []  # the fake backend, counting its builds
    key = ("generation_backend", "fake-backend")
    original = loaded.registry.components[key]
    loaded.registry.components[key] = dataclasses.replace(
        original, factory=lambda o, c: backends.append(1) or original.factory(o, c))
    data = training_config(tmp_path / "run", 2, estimator="oldgap")
    with pytest.raises(PluginError) as refused:
        run(resolve_config(data, loaded.registry, "t.yaml"), loaded, report=lambda m: None)
    error = str(refused.value)
    for part in ("difficulty estimator 'oldgap' (plugin 'oldgap' from package spade-oldgap "
                 "0.3.0) does not fit the current spade_core.interfaces.DifficultyEstimator "
                 "interface",
                 "OldGap.estimate(env, hinted, unhinted) cannot be called as "
                 "estimate(data: EstimateInput) -> Difficulty (missing a required argument: "
                 "'hinted')",
                 "it defines estimate_with_history()",
                 "The interface changed: estimate(env, hinted, unhinted) and "
                 "estimate_with_history(env, hinted, unhinted, history) became one "
                 "estimate(data: EstimateInput)",
                 'Update spade-oldgap to the current form, described in docs/plugins.md, '
                 '"register_difficulty_estimators(register)", and docs/estimators.md, '
                 '"The estimator interface"'):
        assert part in error, error
    assert backends == []  # refused before the generation backend (the model) was built
    assert not (tmp_path / "run").exists()  # a run refused at start-up leaves no directory
    # The contract checker says the same, instead of a TypeError at the first call.
    module = types.ModuleType("spade_oldgap")
    exec(compile(OLD_INTERFACE_ESTIMATOR, "spade_oldgap.py", "exec"), module.__dict__)
    with pytest.raises(PluginError, match="does not fit the current"):
        check_component(load_test_plugins(module), "difficulty_estimator", "oldgap")


def test_components_that_fit_their_interface_pass_the_signature_check():
    from spade_core.interfaces import DifficultyEstimator, EnvFamily
    from spade_core.interfaces.members import signature_problems

    class Fits(DifficultyEstimator):
        def estimate(self, data, extra=None):  # more optional arguments: fine
            raise NotImplementedError

    class Flexible(DifficultyEstimator):
        def estimate(self, *args, **kwargs):
            raise NotImplementedError

    class Renamed(DifficultyEstimator):
        def estimate(self, inputs):  # positional: any name
            raise NotImplementedError

    assert signature_problems(DifficultyEstimator, Fits) == []
    assert signature_problems(DifficultyEstimator, Flexible) == []
    assert signature_problems(DifficultyEstimator, Renamed) == []

    class NoSkills(EnvFamily):  # leaves out the optional skill: the loop never passes it then
        def designer_guide(self):
            return ""

    assert [m for m, _ in signature_problems(EnvFamily, NoSkills)] == []

    class NeedsMore(EnvFamily):
        def skeleton(self, level):
            return ""

    assert [m for m, _ in signature_problems(EnvFamily, NeedsMore)] == ["skeleton"]
