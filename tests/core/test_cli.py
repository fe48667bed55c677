"""The ``spade`` CLI as a user meets it: help, version, bad configs, start-up weight."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from spade_core import __version__

from fakes.cli import ROOT, run_spade

HEAVY = ("torch", "transformers", "trl", "vllm", "faiss", "sentence_transformers",
         "RestrictedPython", "datasets")


def imported_after(args: list[str]) -> set[str]:
    code = (
        "import sys\n"
        f"sys.argv = ['spade', *{args!r}]\n"
        "from spade_core.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    return set(eval(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [["--help"], ["plugins"], ["plugins", "--json"]])
def test_light_commands_load_no_heavy_library(args):
    assert imported_after(args) == set()


def test_help_starts_quickly():
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "spade_core.cli", "--help"],
                            capture_output=True, text=True, timeout=60, cwd=ROOT)
    elapsed = time.monotonic() - start
    assert result.returncode == 0 and "config" in result.stdout
    assert elapsed < 5, elapsed  # a hang guard; the 0.5 s figure is measured in docs/benchmarks.md


def test_version():
    result = run_spade("--version")
    assert result.returncode == 0 and __version__ in result.stdout


def test_no_command_prints_help_and_exits_2():
    result = run_spade()
    assert result.returncode == 2 and "usage: spade" in result.stdout


BAD_CONFIGS = {
    "empty": (b"", "the config is empty"),
    "comment-only": (b"# nothing here\n", "the config is empty"),
    "garbage": (b"run: [unclosed\n  : : :\n", "not valid YAML"),
    "binary": (bytes(range(256)) * 4, "binary file"),
    "non-mapping": (b"- just\n- a list\n", "top level must be a mapping"),
    "scalar": (b"42\n", "top level must be a mapping"),
    "unknown-key": (b"run: {name: x}\nbogus_section: 1\n", "bogus_section: unknown key"),
    "python-object": (b"!!python/object/apply:os.system ['touch CANARY']\n", "is not allowed"),
    "python-name": (b"run: !!python/name:os.system\n", "is not allowed"),
    "alias-bomb": (
        b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        b"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
        b"f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
        b"h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n",
        "alias bomb",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_bad_config_exits_2_with_clear_message(tmp_path, name):
    raw, expected = BAD_CONFIGS[name]
    raw = raw.replace(b"CANARY", str(tmp_path / "canary").encode())
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(raw)
    start = time.monotonic()
    result = run_spade("config", "check", str(path), cwd=tmp_path)
    assert time.monotonic() - start < 30  # "within seconds": a hang guard
    assert result.returncode == 2, result
    assert expected in result.stderr, result.stderr
    assert str(path) in result.stderr  # says where
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.count("\n") == 1  # one paragraph
    assert not (tmp_path / "canary").exists()


def test_missing_file_and_directory(tmp_path):
    result = run_spade("config", "check", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2 and "no such config file" in result.stderr
    result = run_spade("config", "check", str(tmp_path))
    assert result.returncode == 2 and "not a regular file" in result.stderr


def test_debug_shows_traceback(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("- a\n")
    result = run_spade("--debug", "config", "check", str(path))
    assert result.returncode == 2 and "Traceback" in result.stderr


def test_usage_error_exits_2():
    result = run_spade("config", "check")
    assert result.returncode == 2 and "usage" in result.stderr


# -- check-env without --family, folders and JSONL (issue 17) ---------------------------------

SEEDS = ROOT / "plugins" / "families" / "seeds"


def _rows(result: subprocess.CompletedProcess) -> list[dict]:
    import json

    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.timeout(300)
def test_check_env_chooses_the_family_of_each_program(tmp_path):
    import shutil

    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(SEEDS / "reasoning" / "modular_power.py", folder)  # uses extract_boxed
    shutil.copy(SEEDS / "tool_use" / "bank_rebalance.py", folder)  # subclasses ToolUseBaseEnv
    shutil.copy(ROOT / "tests" / "sandbox" / "corpus" / "benign" / "guess_number.py", folder)
    result = run_spade("check-env", "--json", "--workers", "1", str(folder), timeout=240)
    assert result.returncode == 0, result.stderr + result.stdout
    families = {r["file"].rsplit("/", 1)[-1]: r["family"] for r in _rows(result)}
    assert families == {"bank_rebalance.py": "tool-use", "guess_number.py": None,
                        "modular_power.py": "reasoning"}


@pytest.mark.timeout(300)
def test_check_env_reads_jsonl_and_names_a_family_that_refuses(tmp_path):
    import json

    good = (SEEDS / "reasoning" / "modular_power.py").read_text()
    # uses the tool-use family's base class but defines no environment class of it
    bad = "class Helper(ToolUseBaseEnv):\n    pass\n"
    jsonl = tmp_path / "programs.jsonl"
    jsonl.write_text(json.dumps({"code": good}) + "\n" + json.dumps({"code": bad}) + "\n")
    result = run_spade("check-env", "--json", "--workers", "1", str(jsonl), timeout=240)
    assert result.returncode == 1, result.stderr
    rows = _rows(result)
    assert [r["file"] for r in rows] == [f"{jsonl}:1", f"{jsonl}:2"]
    assert rows[0]["valid"] and rows[0]["family"] == "reasoning"
    assert not rows[1]["valid"] and rows[1]["category"] == "interface"
    assert "family 'tool-use'" in rows[1]["message"] and "--family" in rows[1]["message"]


def test_check_env_missing_path_and_empty_folder(tmp_path):
    missing = run_spade("check-env", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
    empty = run_spade("check-env", str(tmp_path))
    assert empty.returncode == 2 and "no programs found" in empty.stderr


# -- a closed stdout (issue 17) ----------------------------------------------------------------

@pytest.mark.parametrize("args", [["plugins"], ["plugins", "--json"], ["--help"], ["--version"],
                                  ["config", "check", "configs/quickstart.yaml"]])
def test_a_closed_stdout_ends_quietly(args):
    """The reader of the pipe is gone before spade writes anything (``spade plugins | head -0``):
    no BrokenPipeError traceback, exit status 141 (128 + SIGPIPE) as coreutils report it."""
    import os

    from fakes.cli import SPADE

    read_end, write_end = os.pipe()
    os.close(read_end)  # a real pipe whose reader has already exited
    try:
        result = subprocess.run([*SPADE, *args], stdout=write_end, stderr=subprocess.PIPE,
                                text=True, timeout=60, cwd=ROOT)
    finally:
        os.close(write_end)
    assert result.stderr == "", result.stderr
    # argparse itself swallows write errors of --help and --version and exits 0
    assert result.returncode == (0 if args[0].startswith("--") else 141)


def test_a_pipe_closed_after_the_first_line_ends_quietly():
    from fakes.cli import SPADE

    process = subprocess.Popen([*SPADE, "plugins"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=ROOT)
    assert process.stdout.readline()
    process.stdout.close()  # as ``| head -1`` does
    _, err = process.communicate(timeout=60)
    assert b"Traceback" not in err and b"BrokenPipe" not in err
    assert process.returncode in (0, 141)  # 0 when every line was already in the pipe's buffer


# -- the end of a run (issue 17) -----------------------------------------------------------------

def test_the_end_of_a_run_is_a_human_summary_with_next_steps(tmp_path):
    from spade_core.selfplay.runner import end_message

    done = end_message({"status": "completed", "error": None, "iterations_completed": 2,
                        "seconds": 452.4, "envs_proposed": 8, "envs_valid": 7,
                        "envs_played": 10, "envs_mastered": 1}, tmp_path, 2)
    assert done.splitlines() == [
        "spade: run completed after 2 of 2 iterations in 7 min 32 s: 8 environments proposed, "
        "7 valid, 10 played, 1 mastered.",
        f"spade: results in {tmp_path} (metrics.jsonl, summary.json, envs/)"]
    assert "{" not in done  # no raw dict
    one = end_message({"status": "completed", "iterations_completed": 1, "seconds": 1.0,
                       "envs_proposed": 1}, tmp_path, 1)
    assert "after 1 of 1 iteration in 1.0 s: 1 environment proposed," in one
    failed = end_message({"status": "failed", "error": "ValueError: x",
                          "iterations_completed": 1, "seconds": 3.0}, tmp_path, 4)
    assert "run failed after 1 of 4 iterations in 3.0 s" in failed
    assert "ValueError" not in failed  # the command prints the error itself, once
    assert f"spade run --resume {tmp_path}" in failed
    # a config or plugin error would happen again: no resume is suggested
    assert "--resume" not in end_message({"status": "failed", "error": "x"}, tmp_path, 4,
                                         resumable=False)


def test_a_run_that_played_nothing_ends_with_a_warning_and_n_a_lines(tmp_path):
    from spade_core.selfplay.metrics import iteration_line as _iteration_line
    from spade_core.selfplay.runner import end_message

    done = end_message({"status": "completed", "error": None, "iterations_completed": 1,
                        "seconds": 80.0, "envs_proposed": 8, "envs_valid": 0,
                        "envs_played": 0, "envs_mastered": 0}, tmp_path, 1)
    assert ("spade: warning: no environment was played in 1 iteration (valid 0 of 8 "
            "proposed): regret and success are n/a") in done
    line = _iteration_line({"iteration": 0, "envs_proposed": 8, "envs_valid": 0,
                            "envs_duplicate": 0, "envs_played": 0, "mean_regret": 0.0,
                            "mean_designer_reward": -0.5, "agent_success_unhinted": 0.0,
                            "agent_success_hinted": 0.0, "seconds": {"design": 12.25}})
    assert "regret n/a" in line and "success n/a (nothing played: 0 of 8 proposals valid)" in line
    assert "designer reward -0.500" in line and "0.000" not in line


def test_a_finished_run_points_at_spade_report(tmp_path, capsys):
    from spade_core.cli.run_cmd import _suggest_report
    from spade_core.plugins import load_plugins
    from spade_core.testing import load_test_plugins

    _suggest_report(load_plugins(), tmp_path)
    hint = f"spade: see the run as one HTML page: spade report {tmp_path}\n"
    assert capsys.readouterr().err == hint
    _suggest_report(load_test_plugins(), tmp_path)  # no report plugin: no hint
    assert capsys.readouterr().err == ""


#: rst/markdown left in help texts: ``literal``, :role:`target`, **bold**.
MARKUP = re.compile(r"``|:(?:class|func|meth|mod|data|attr|ref|doc|obj):`|\*\*\w")


def _subcommands(parser) -> dict:
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def _help(path: list[str]) -> str:
    import contextlib
    import io

    from spade_core.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([*path, "--help"])
    return out.getvalue()


def test_help_texts_have_no_markup_residue():
    from spade_core.cli import build_parser

    paths = [[]]
    for name, parser in _subcommands(build_parser()).items():
        paths.append([name])
        paths.extend([name, member] for member in _subcommands(parser))
    assert len(paths) > 10
    residue = {" ".join(path) or "spade": [line for line in _help(path).splitlines()
                                            if MARKUP.search(line)] for path in paths}
    assert {path: lines for path, lines in residue.items() if lines} == {}


def _parsers(path: list[str] | None = None):
    """``(words, parser)`` for ``spade`` and every command and sub-command under it, each built
    as typing it builds it (its arguments set up)."""
    import argparse

    from spade_core.cli import _build

    path = path or []
    parser = _build([*path, "--help"], None)[0]
    for word in path:
        parser = _subcommands(parser)[word]
    yield path, parser
    for name in _subcommands(parser):
        yield from _parsers([*path, name])


def test_every_command_and_option_in_the_help_is_described():
    import argparse

    missing = []
    for path, parser in _parsers():
        words = " ".join(["spade", *path])
        if path and not parser.description:
            missing.append(f"{words}: no description")
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            if isinstance(action, argparse._SubParsersAction):
                missing += [f"{words} {c.dest}: no help line" for c in action._choices_actions
                            if not c.help]
            elif not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{words}: {'/'.join(action.option_strings) or action.dest} "
                               "has no help")
    assert len(list(_parsers())) > 20
    assert missing == []


def test_run_help_and_the_docs_name_every_key_a_resume_may_change():
    from spade_core.config.resume import RESUMABLE_CHANGES

    text = " ".join(_help(["run"]).split())
    assert f"except {', '.join(RESUMABLE_CHANGES)}" in text
    docs = (ROOT / "docs" / "cli.md").read_text()
    [row] = [line for line in docs.splitlines() if "--resume RUN_DIR` |" in line]
    assert all(f"`{key}`" in row for key in RESUMABLE_CHANGES)


def test_eval_help_says_what_a_baseline_may_be():
    assert "--baseline DIR|FILE|base" in _help(["eval"])


def test_doctor_reports_library_versions_without_importing_them():
    import json

    from spade_core.cli.doctor_cmd import LIBRARIES, NOT_INSTALLED, versions

    found = versions()
    assert found["python"] == "{}.{}.{}".format(*sys.version_info[:3])
    assert set(LIBRARIES) <= set(found) and "bubblewrap" in found
    assert found["vllm"] in (NOT_INSTALLED,) or found["vllm"][0].isdigit()
    from importlib import metadata
    assert found["transformers"] == metadata.version("transformers")
    assert {"accelerate", "deepspeed", "datasets", "reasoning-gym", "bfcl-eval"} <= set(found)
    result = run_spade("doctor", "--json", timeout=120)
    report = json.loads(result.stdout)
    assert report["versions"] == found
    assert report["model"] == {"spec": "bundled:smollm2-135m", "backend": "transformers",
                               "found": True, "problems": []}
    absent = run_spade("doctor", "--model", "/no/such/model", timeout=120)
    assert absent.returncode == 1
    assert "model /no/such/model: NOT FOUND: model.path: model '/no/such/model'" in absent.stdout
    text = run_spade("doctor", timeout=120).stdout
    assert text.startswith("versions: python ") and f"transformers {found['transformers']}" in text
    heavy = {"torch", "transformers", "trl", "vllm", "faiss", "peft", "ray"}
    assert imported_after(["doctor", "--json"]) & heavy == set()


def test_constraints_pin_the_installed_versions_within_pyproject_bounds():
    """constraints.txt (docs/training.md) is what the suite runs with, and fits pyproject's
    bounds: a bound raised past a pin, or a pin left behind by an upgrade, fails here."""
    import tomllib
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.version import Version

    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version
    assert "spade-rl" not in pins and len(pins) > 50
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    wanted += [Requirement(r) for extra in project["optional-dependencies"].values()
               for r in extra]
    outside = [f"{r} vs {pins[r.name.lower()]}" for r in wanted
               if r.name.lower() in pins and Version(pins[r.name.lower()]) not in r.specifier]
    assert outside == []
    for name in ("transformers", "trl", "torch", "openai", "math-verify"):
        try:
            installed = Version(metadata.version(name))
        except metadata.PackageNotFoundError:  # an optional extra left out
            continue
        assert installed.public == pins[name], name  # torch's +cpu is a local label


# -- envs is a group plugins add members to: `spade envs export` (issue 17) ----------------------

def test_help_and_envs_help_load_no_heavy_library():
    assert imported_after(["envs", "--help"]) == set()
    assert imported_after(["envs", "export", "--help"]) == set()


def test_envs_lists_the_plugins_members_and_keeps_import():
    result = run_spade("envs", "--help")
    assert result.returncode == 0, result.stderr
    assert "import" in result.stdout and "export" in result.stdout
    assert "manage environment programs (export, import, serve)" in run_spade("--help").stdout
    imported = run_spade("envs", "import", "--help")
    assert imported.returncode == 0 and "--run-dir" in imported.stdout


def test_envs_members_from_test_plugins():
    """A plugin's ``group="envs"`` command runs under ``spade envs``; it cannot take ``import``;
    ``spade envs import`` parses without loading any plugin."""
    from spade_core.cli import build_parser, load_commands, main
    from spade_core.hookspecs import hookimpl
    from spade_core.testing import load_test_plugins

    ran = []

    class Member:
        @hookimpl
        def register_commands(self, register):
            register("count", lambda p: p.add_argument("n", type=int),
                     lambda args: ran.append(args.n) or 0, help="count", group="envs")
            register("import", lambda p: None, lambda args: 0, group="envs")

    loaded = load_test_plugins(Member())
    commands = load_commands(loaded)
    assert "envs count" in commands.commands and "envs import" not in commands.commands
    [problem] = commands.problems
    assert "clashes with the core command" in problem.error
    assert main(["envs", "count", "7"], plugins=loaded) == 0 and ran == [7]

    asked = []

    class Watched:
        @hookimpl
        def register_commands(self, register):
            asked.append(True)

    watched = load_test_plugins(Watched())
    parser = build_parser(["envs", "import", "x", "--run-dir", "d"], plugins=watched)
    assert parser.parse_args(["envs", "import", "x", "--run-dir", "d"]).func and asked == []
    build_parser(["envs", "--help"], plugins=watched)  # the group's help lists plugin members
    assert asked == [True]
