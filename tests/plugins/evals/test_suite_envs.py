"""The suites' own environments: where they live, when one is ready, the commands that make one
(uv, else venv and pip; pip's local wheels passed on), and a missing one stopping ``spade eval``
before any model is loaded, naming the command."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from spade_core.cli import main
from spade_core.errors import ConfigError
from spade_core.hookspecs import hookimpl
from spade_core.testing import load_builtin_plugins

from plugins.evals import suite_envs
from plugins.evals.suite_envs import SUITE_ENVS, install, problem, suites_dir

from fakes.cli import ROOT


@pytest.fixture
def suites(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SPADE_SUITES_DIR", str(tmp_path))
    return tmp_path


def _make_ready(folder: Path, name: str) -> None:
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").symlink_to(sys.executable)
    (folder / suite_envs.STAMP).write_text(json.dumps(
        {"fingerprint": SUITE_ENVS[name].fingerprint()}), encoding="utf-8")


def test_where_they_live(monkeypatch, tmp_path):
    monkeypatch.delenv("SPADE_SUITES_DIR", raising=False)
    assert suites_dir() == ROOT / ".venv-suites"  # a source checkout
    monkeypatch.setenv("SPADE_SUITES_DIR", str(tmp_path))
    assert suites_dir() == tmp_path.resolve()


def test_a_missing_stale_or_ready_environment(suites):
    assert "not installed at" in problem("gem") and "run `spade suites install gem`" in \
        problem("gem")
    with pytest.raises(ConfigError, match="spade suites install bfcl"):
        suite_envs.require("bfcl")
    _make_ready(suites / "gem", "gem")
    assert problem("gem") is None
    assert suite_envs.require("gem") == str(suites / "gem" / "bin" / "python")
    (suites / "gem" / suite_envs.STAMP).write_text('{"fingerprint": "old"}', encoding="utf-8")
    assert "other pins" in problem("gem")
    check = suite_envs.preflight("gem")
    assert check(None, type("Context", (), {"where": "--suite gem"})())[0].startswith(
        "--suite gem: the gem suite's environment")


def test_every_suite_has_its_lock_and_the_sandbox_requirement():
    for spec in SUITE_ENVS.values():
        lock = spec.lock_text()
        assert "restrictedpython==9.0" in lock.lower() and "RestrictedPython" in spec.requirements
        package = spec.requirements[0].split("==")[0]
        assert f"{package}=={spec.requirements[0].split('==')[1]}" in lock.lower()
    assert "torch==2.13.0\n" in SUITE_ENVS["bfcl"].lock_text()  # the CPU build matches it


def test_commands_with_uv_and_without(monkeypatch, tmp_path):
    monkeypatch.delenv("UV_FIND_LINKS", raising=False)
    monkeypatch.setenv("PIP_FIND_LINKS", "/wheels /more")
    lock = tmp_path / "lock.txt"
    venv, fill = suite_envs.commands("gem", tmp_path / "gem", lock, "/bin/uv")
    assert venv[:2] == ["/bin/uv", "venv"] and os.path.realpath(sys.executable) in venv
    assert fill[:3] == ["/bin/uv", "pip", "install"]
    assert fill[-3:] == ["gem-llm==0.1.0", "pandas", "RestrictedPython"]
    assert ["--find-links", "/wheels", "--find-links", "/more", "-c", str(lock)] == \
        fill[fill.index("--find-links"):fill.index(str(lock)) + 1]
    monkeypatch.setenv("UV_FIND_LINKS", "/wheels")  # uv reads its own
    assert "--find-links" not in suite_envs.commands("gem", tmp_path, lock, "/bin/uv")[1]
    venv, fill = suite_envs.commands("gem", tmp_path / "gem", lock, None)
    assert venv[1:3] == ["-m", "venv"] and fill[1:4] == ["-m", "pip", "install"]
    assert "--no-deps" not in fill


class FakeDone:
    """What the faked ``subprocess.run`` returns."""

    def __init__(self, returncode: int = 0, stderr: str = "") -> None:
        self.returncode, self.stderr, self.stdout = returncode, stderr, ""


def fake_venv(command: list[str]) -> None:
    """What a ``venv`` command leaves: the environment's ``bin/python``."""
    (Path(command[-1]) / "bin").mkdir(parents=True)
    (Path(command[-1]) / "bin" / "python").symlink_to(sys.executable)


def test_install_makes_it_once_and_says_why_it_failed(suites, monkeypatch):
    ran: list[list[str]] = []

    def fake_run(command, **kwargs):
        ran.append(command)
        assert kwargs["env"]["UV_PYTHON_DOWNLOADS"] == "never"
        if command[1] == "venv":
            fake_venv(command)
        return FakeDone()

    monkeypatch.setattr(suite_envs.subprocess, "run", fake_run)
    monkeypatch.setattr(suite_envs, "find_uv", lambda: "/bin/uv")
    said: list[str] = []
    assert install("tau2", say=said.append) == suites / "tau2" / "bin" / "python"
    assert [c[1] for c in ran] == ["venv", "pip"] and problem("tau2") is None
    assert not list(suites.glob(".*constraints.txt"))  # the lock copy is removed
    install("tau2", say=said.append)
    assert len(ran) == 2 and said[-1].startswith("tau2: up to date")
    install("tau2", force=True, say=said.append)
    assert len(ran) == 4
    monkeypatch.setattr(suite_envs.subprocess, "run",
                        lambda command, **kwargs: FakeDone(1, "No solution found"))
    with pytest.raises(ConfigError, match="(?s)tau2: `/bin/uv venv.*failed.*No solution found"):
        install("tau2", force=True, say=said.append)
    assert problem("tau2") is not None  # nothing half-made counts as ready
    with pytest.raises(ConfigError, match="no suite 'tau3'"):
        install("tau3")


def test_a_second_install_waits_for_the_first_and_finds_it_made(suites, monkeypatch):
    import threading

    ran: list[list[str]] = []
    first_inside, second_waits = threading.Event(), threading.Event()

    def slow_run(command, **kwargs):
        ran.append(command)
        if command[1] == "venv":
            # the first install is half-way when the second one asks
            first_inside.set()
            assert second_waits.wait(timeout=60), "the second install never waited"
            fake_venv(command)
        return FakeDone()

    monkeypatch.setattr(suite_envs.subprocess, "run", slow_run)
    monkeypatch.setattr(suite_envs, "find_uv", lambda: "/bin/uv")
    first_said: list[str] = []
    first = threading.Thread(target=install, args=("gem",), kwargs={"say": first_said.append})
    first.start()
    assert first_inside.wait(timeout=60)  # the first holds the lock, inside its first command
    second_said: list[str] = []

    def say(line: str) -> None:
        second_said.append(line)
        if "waiting" in line:
            second_waits.set()

    assert install("gem", say=say) == suites / "gem" / "bin" / "python"
    first.join(timeout=60)
    assert [c[1] for c in ran] == ["venv", "pip"]  # made once, by the first
    assert second_said == ["gem: another install of it is running; waiting for it",
                           f"gem: up to date at {suites / 'gem'}"]
    assert problem("gem") is None


def test_a_suite_sandbox_runs_on_the_environment(suites):
    _make_ready(suites / "gem", "gem")
    assert suite_envs.suite_sandbox(None, "gem") is None
    with pytest.raises(ConfigError, match="cannot start workers on another interpreter"):
        suite_envs.suite_sandbox(object(), "gem")

    class Derives:
        def on_interpreter(self, python):
            return ("derived", python)

    assert suite_envs.suite_sandbox(Derives(), "gem") == \
        ("derived", str(suites / "gem" / "bin" / "python"))


class LoadsNoModel:
    """Registers the backend ``no-model``, which must never be built."""

    @hookimpl
    def register_generation_backends(self, register):
        def build(options, context):
            raise AssertionError("the model was loaded")

        register("no-model", build)


def test_spade_eval_stops_before_the_model_loads(suites, capsys):
    argv = ["eval", str(ROOT / "configs" / "quickstart.yaml"), "--set", "backend=no-model",
            "--suite", "gem", "--suite", "tau2"]
    assert main(argv, plugins=load_builtin_plugins(LoadsNoModel())) == 2
    error = capsys.readouterr().err
    assert "--suite gem: the gem suite runs on an environment of its own" in error
    assert "run `spade suites install gem`" in error and "spade suites install tau2" in error
