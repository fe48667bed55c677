"""The ``spade`` CLI as a user meets it: help, version, bad configs, start-up weight."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from spade_core import __version__

from conftest import ROOT, run_spade

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
