"""spade_core/cli (the package): the ``spade`` CLI as a user meets it: help, version, errors,
start-up weight, a closed stdout (each command's own tests:
tests/core/cli/test_<command>_cmd.py)."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from spade_core import __version__

from fakes.cli import ROOT, run_spade
from fakes.commands import help_text as _help
from fakes.commands import imported_after


@pytest.mark.parametrize("args", [["--help"], ["plugins"], ["plugins", "--json"]])
def test_light_commands_load_no_heavy_library(args):
    assert imported_after(args) == set()


def test_help_starts_quickly():
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "spade_core.cli", "--help"],
                            capture_output=True, text=True, timeout=60, cwd=ROOT)
    elapsed = time.monotonic() - start
    assert result.returncode == 0 and "config" in result.stdout
    # A hang guard (30 s: on a loaded machine --help took 7.4 s); the speed itself, 0.5 s, is
    # measured in docs/benchmarks.md, and test_light_commands_load_no_heavy_library keeps it.
    assert elapsed < 30, elapsed


def test_version():
    result = run_spade("--version")
    assert result.returncode == 0 and __version__ in result.stdout


def test_no_command_prints_help_and_exits_2():
    result = run_spade()
    assert result.returncode == 2 and "usage: spade" in result.stdout


def test_debug_shows_traceback(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("- a\n")
    result = run_spade("--debug", "config", "check", str(path))
    assert result.returncode == 2 and "Traceback" in result.stderr


def test_usage_error_exits_2():
    result = run_spade("config", "check")
    assert result.returncode == 2 and "usage" in result.stderr


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
        # A hang guard, generous: `config check` imports TRL (10 s idle, 55 s on a loaded CI).
        result = subprocess.run([*SPADE, *args], stdout=write_end, stderr=subprocess.PIPE,
                                text=True, timeout=300, cwd=ROOT)
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


#: rst/markdown left in help texts: ``literal``, :role:`target`, **bold**.
MARKUP = re.compile(r"``|:(?:class|func|meth|mod|data|attr|ref|doc|obj):`|\*\*\w")


def _subcommands(parser) -> dict:
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


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
