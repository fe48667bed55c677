"""Trusted library code that interprets text, held by the text guards and the sandbox.

reasoning-gym scorers ``eval()`` answers and sympy's parser ``eval()`` s formulas. The audit
(``plugins/families/text_audit.py``) finds every dataset that does; these tests feed each of them
hostile replies through ``spade eval`` and hostile programs through validation, and check that
nothing ran: no file appeared, and the hostile text scored as any wrong answer. The eval tests
run the sandbox WITHOUT OS isolation too, so that only the text guards stand between the reply
and the machine; a control with the guards left out shows the payload is live.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from spade_core.cli import main
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import GenerationBackend
from spade_core.eval.sandboxed_scoring import ScoringJob, score_in_sandbox
from spade_core.testing import load_builtin_plugins
from spade_core.validation import validate

pytest.importorskip("reasoning_gym")

from plugins.families.reasoning_gym import (  # noqa: E402
    DatasetChoice,
    ReasoningGymFamily,
    program_source,
)
from plugins.families.text_audit import audit, markdown, text_interpreting  # noqa: E402
from fakes.cli import ROOT
from fakes.eval_runs import needs_suite_env
from fakes.hostile import FakeScriptedBackend

CONFIG = ROOT / "configs" / "quickstart.yaml"
HOSTILE_PROGRAMS = Path(__file__).parents[1] / "sandbox" / "corpus" / "trusted_text"


def _payloads(canary: Path) -> list[str]:
    """Replies whose answer text creates ``canary`` when any interpreter evaluates it."""
    code = f"__import__('pathlib').Path('{canary}').touch()"
    indirect = code.replace("__import__", "eval('__import__')")
    return [f"\\boxed{{{code} or ['x']}}", f"<answer>{code} or 1</answer>",
            f"\\boxed{{{indirect}}}", code]


def _loaded(backend: GenerationBackend):
    class FakeBackendPlugin:
        @hookimpl
        def register_generation_backends(self, register):
            register("fake-scripted", lambda options, context: backend)

    return load_builtin_plugins(FakeBackendPlugin())


def _eval(capsys, backend, datasets, *extra: str) -> dict:
    args = ["eval", str(CONFIG), "--suite", "reasoning-gym", "--set", "backend=fake-scripted",
            "--option", "reasoning-gym.buckets=[]",
            "--option", "reasoning-gym.datasets=[" + ", ".join(datasets) + "]",
            "--limit", str(2 * len(datasets)), "--json", *extra]
    assert main(args, plugins=_loaded(backend)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def canary_dir():
    """A world-writable folder in /tmp: a worker on its own uid (or, without OS isolation, on
    the host) could create the canary there if anything ran."""
    folder = Path(tempfile.mkdtemp(prefix="spade-canary-", dir="/tmp"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def flagged():
    return text_interpreting()


def test_audit_flags_the_datasets_that_interpret_text(flagged):
    # Found by the audit: answers eval()'d, formulas through sympy's parser, config in eval().
    assert {"string_insertion", "spiral_matrix", "countdown", "puzzle24", "simple_integration",
            "basic_arithmetic"} <= set(flagged)
    assert "leg_counting" not in flagged and "propositional_logic" not in flagged


def test_docs_table_lists_every_flagged_dataset(flagged):
    docs = (ROOT / "docs" / "sandbox.md").read_text()
    for name in flagged:
        assert f"| `{name}` |" in docs, f"docs/sandbox.md does not list {name}"
    # The table is the audit's own output (python -m plugins.families.text_audit).
    assert markdown(audit(flagged)) in docs


def test_every_selectable_dataset_is_scored_in_the_sandbox_or_listed_safe(scoring_sandbox):
    from plugins.evals.reasoning_gym_suite import SAFE_IN_PROCESS, ReasoningGymSuite
    from plugins.families.reasoning_gym import registry

    suite = ReasoningGymSuite(None, scoring_sandbox, datasets=sorted(registry()))
    assert not suite.scores_in_process
    assert type(suite).score_many is not type(suite).__mro__[1].score_many
    for name in sorted(registry()):
        assert name in SAFE_IN_PROCESS or not suite.scores_in_process
    assert not SAFE_IN_PROCESS & set(text_interpreting())
    # The family's environments only ever run in a sandbox worker, with the guards first.
    assert ReasoningGymFamily.prelude_files[0] == "preludes/text_guards.py"


@pytest.mark.parametrize("isolation", ["auto", "none"])
def test_spade_eval_hostile_replies_through_every_text_interpreting_dataset(
        canary_dir, capsys, flagged, isolation):
    canary = canary_dir / "ran"
    extra = ["--set", "sandbox.options.isolation=none",
             "--set", "sandbox.options.allow_unisolated=true"] if isolation == "none" else []
    hostile = _eval(capsys, FakeScriptedBackend(_payloads(canary)), flagged, *extra)
    junk = _eval(capsys, FakeScriptedBackend(["\\boxed{spade-junk}"]), flagged, *extra)
    assert not canary.exists() and not list(canary_dir.iterdir())
    [suite], [baseline] = hostile["suites"], junk["suites"]
    assert suite["overall"]["items"] == 2 * len(flagged)
    assert suite["overall"]["pass_at_1"] == 0.0
    # Hostile text scores as a junk answer, dataset by dataset (a format bonus stays a bonus).
    by_id = {row["id"]: max(row["scores"]) for row in baseline["items"]}
    for row in suite["items"]:
        assert max(row["scores"]) <= by_id[row["id"]], row


def test_control_without_the_guards_the_payload_runs(canary_dir):
    """The same payload, scored by a family whose prelude lacks the guards, in a sandbox without
    OS isolation: the file appears, so the eval test above would catch a missing guard."""
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    class FakeUnguardedFamily(ReasoningGymFamily):
        prelude_files = tuple(f for f in ReasoningGymFamily.prelude_files
                              if f != "preludes/text_guards.py")

    canary = canary_dir / "ran"
    program = program_source(DatasetChoice("string_insertion"))
    with build_sandbox(ProcessSandboxOptions(workers=1, isolation="none",
                                             allow_unisolated=True)) as box:
        jobs = [ScoringJob(program, family, _payloads(canary)[0], 7)
                for family in (ReasoningGymFamily([]), FakeUnguardedFamily([]))]
        assert score_in_sandbox(box, jobs[:1]) == [0.0]
        assert not canary.exists()
        score_in_sandbox(box, jobs[1:])
    assert canary.exists()


@pytest.mark.parametrize("sandbox_plugin", [
    "process", pytest.param("ray", marks=pytest.mark.xdist_group("ray"))])  # one cluster at a time
def test_hostile_programs_through_trusted_text_are_refused_or_contained(sandbox_plugin, tmp_path):
    """Programs that route text into the scorer or the generator from inside the sandbox (a
    hostile ``solution()``, a hostile ``config``, a ``step`` of their own): each gets its
    expected verdict, and the payload (which kills its own worker) never runs."""
    if sandbox_plugin == "ray":
        pytest.importorskip("ray")
    from spade_core.plugins import load_plugins

    registry = load_plugins().registry
    options = {"workers": 1} if sandbox_plugin == "process" else {"num_cpus": 2,
                                                                  "actors_per_node": 1}
    box = registry.build("sandbox", sandbox_plugin, options, "test")
    family = ReasoningGymFamily([])
    try:
        paths = sorted(HOSTILE_PROGRAMS.glob("*.py"))
        assert paths
        verdicts = validate(box, [p.read_text() for p in paths], family=family)
    finally:
        box.close()
    for path, verdict in zip(paths, verdicts, strict=True):
        wanted = re.search(r"^# expect: (\w+)", path.read_text(), re.M).group(1)
        assert verdict.category == wanted, (path.name, verdict)
        assert verdict.category != "crash", (path.name, verdict)  # the kill never ran


def _bfcl_payloads(canary: Path) -> list[str]:
    """Tool calls whose name or argument values would create ``canary`` if evaluated."""
    touch = f"__import__('pathlib').Path('{canary}').touch()"
    system = f"__import__('os').system('touch {canary}')"
    return ["<tool_call>" + json.dumps({"name": touch, "arguments": {}}) + "</tool_call>",
            "<tool_call>" + json.dumps({"name": "ls", "arguments": {"a": touch}}) + "</tool_call>",
            "<tool_call>" + json.dumps({"name": "cd", "arguments": {"folder": system}})
            + "</tool_call>",
            f"<tool_call>{{\"name\": \"ls\", \"arguments\": {{\"a\": 1}}}}) or {system} or ("
            "</tool_call>"]


@needs_suite_env("bfcl")
@pytest.mark.parametrize("isolation", ["auto", "none"])
def test_spade_eval_hostile_replies_through_bfcl(canary_dir, capsys, isolation):
    canary = canary_dir / "ran"
    extra = ["--set", "sandbox.options.isolation=none",
             "--set", "sandbox.options.allow_unisolated=true"] if isolation == "none" else []
    args = ["eval", str(CONFIG), "--suite", "bfcl", "--set", "backend=fake-scripted",
            "--option", "bfcl.categories=[simple, parallel, multi_turn_base]",
            "--option", "bfcl.max_steps=2", "--limit", "6", "--json", *extra]
    assert main(args, plugins=_loaded(FakeScriptedBackend(_bfcl_payloads(canary)))) == 0
    [suite] = json.loads(capsys.readouterr().out)["suites"]
    assert suite["overall"]["items"] == 6 and suite["overall"]["pass_at_1"] == 0.0
    assert not canary.exists() and not list(canary_dir.iterdir())


#: Calls that compile, evaluate or unpickle text, by the name they are called by.
_INTERPRETERS = {"eval", "exec", "compile", "sympify", "lambdify", "parse_expr", "parse_latex",
                 "__import__", "compile_restricted", "compile_restricted_exec"}
_UNPICKLERS = {"pickle", "_pickle", "marshal", "dill", "cloudpickle"}


def _interpreter_sites(path: Path) -> list[str]:
    """``line: call`` of every call in ``path`` that interprets text (found on its syntax tree,
    so words in comments and docstrings do not count; ``model.eval()`` and other methods named
    like a builtin do not either, unless they are ``pickle.load(s)``-like or a sympy parser)."""
    import ast

    sites = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef) and any(
                ast.unparse(base).endswith("Unpickler") for base in node.bases):
            sites.append(f"{node.lineno}: Unpickler")
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in _INTERPRETERS:
            sites.append(f"{node.lineno}: {func.id}")
        elif isinstance(func, ast.Attribute) and (
                func.attr in _INTERPRETERS - {"eval", "exec", "compile"}
                or (func.attr in ("load", "loads") and isinstance(func.value, ast.Name)
                    and func.value.id in _UNPICKLERS)):
            sites.append(f"{node.lineno}: {ast.unparse(func)}")
    return sites


def test_the_audit_names_every_interpreter_of_text_in_the_product_code():
    # Any eval/exec/compile/sympify/pickle.loads site in the product code must be named (by its
    # file) in docs/sandbox.md's section on trusted code that interprets text.
    doc = (ROOT / "docs" / "sandbox.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Trusted code that interprets text"):doc.index("## Verdicts")]
    found = {}
    for package in ("plugins", "sandbox", "spade_core", "envmemory"):
        for path in sorted((ROOT / package).rglob("*.py")):
            sites = _interpreter_sites(path)
            if sites:
                found[path.relative_to(ROOT).as_posix()] = sites
    assert "sandbox/server.py" in found and "plugins/evals/preludes/lcb_scorer.py" in found
    missing = {path: sites for path, sites in found.items() if f"`{path}`" not in section}
    assert not missing, f"not in docs/sandbox.md's audit table: {missing}"
    # Third-party interpreters our workers run, by the names the table gives them.
    for name in ("`calculate`", "ACEBench's scenario", "LiveCodeBench runner", "gsm_symbolic"):
        assert name in section, name
