"""``spade suites``: list says which environments are ready and where, path prints a ready one's
interpreter (or the command that makes it), install makes the named ones."""

from __future__ import annotations

import pytest

from spade_core.cli import main

from plugins.evals import suite_envs


@pytest.fixture
def suites(tmp_path, monkeypatch):
    monkeypatch.setenv("SPADE_SUITES_DIR", str(tmp_path))
    return tmp_path


def test_list_and_path(suites, capsys):
    assert main(["suites", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("bfcl", "tau2", "gem"):
        assert f"{name}" in out and str(suites / name) in out
        assert f"run `spade suites install {name}`" in out
    assert main(["suites", "path", "gem"]) == 2
    assert "spade suites install gem" in capsys.readouterr().err


def test_install_the_named_suites(suites, capsys, monkeypatch):
    made: list[tuple[str, bool]] = []
    monkeypatch.setattr(suite_envs, "install", lambda name, force=False:
                        made.append((name, force)) or suites / name / "bin" / "python")
    assert main(["suites", "install", "gem", "bfcl", "gem"]) == 0
    assert made == [("gem", False), ("bfcl", False)]
    assert "gem: ready" in capsys.readouterr().out
    assert main(["suites", "install", "--all", "--force"]) == 0
    assert made[2:] == [(name, True) for name in suite_envs.SUITE_ENVS]
    assert main(["suites", "install"]) == 2
    assert "name the suites" in capsys.readouterr().err
