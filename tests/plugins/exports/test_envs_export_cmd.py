"""``spade envs export RUN_DIR --format NAME --out DIR``: the command as typed and in-process, its
JSON result, and a third-party format chosen like a built-in one."""

from __future__ import annotations

import json

import pytest

from fakes.exported_envs import export as _export

#: The command (its pre-release alias ``export-envs`` is gone).
SPELLINGS = (("envs", "export"),)


@pytest.mark.parametrize("command", SPELLINGS, ids=" ".join)
def test_both_spellings_export_the_same(run_dir, tmp_path, command, capsys):
    assert _export(run_dir, tmp_path / "j", "jsonl", "--json", command=command) == 0
    result = json.loads(capsys.readouterr().out)
    assert result == {"out": str(tmp_path / "j"), "format": "jsonl", "environments": 4}
    assert len((tmp_path / "j" / "environments.jsonl").read_text().splitlines()) == 4


@pytest.mark.parametrize("command", SPELLINGS, ids=" ".join)
def test_both_spellings_on_the_command_line(run_dir, tmp_path, command):
    """As a user types it: the installed plugin's member of the core ``envs`` group."""
    from fakes.cli import run_spade

    result = run_spade(*command, "--help")
    assert result.returncode == 0 and "--format" in result.stdout, result.stderr
    assert f"usage: spade {' '.join(command)}" in result.stdout
    result = run_spade(*command, str(run_dir), "--format", "jsonl", "--out", str(tmp_path / "x"),
                       "--status", "rejected")
    assert result.returncode == 0, result.stderr
    assert "exported 1 environment as jsonl" in result.stdout


def test_a_plugin_adds_an_export_format(run_dir, tmp_path, capsys):
    """A third-party format is chosen with --format like a built-in one; an unknown name is an
    error listing the installed formats."""
    from spade_core.cli import main
    from spade_core.hookspecs import hookimpl
    from spade_core.interfaces import ExportFormat
    from spade_core.testing import load_builtin_plugins

    class IdsFormat(ExportFormat):
        def write(self, rows, out, *, sandbox):
            (out / "ids.txt").write_text("\n".join(r["id"] for r in rows) + "\n")

    class IdsPlugin:
        @hookimpl
        def register_export_formats(self, register):
            register("ids", lambda options, context: IdsFormat(), None, "ids, one a line")

    loaded = load_builtin_plugins(IdsPlugin())
    out = tmp_path / "ids"
    assert main(["envs", "export", str(run_dir), "--format", "ids", "--out", str(out)],
                plugins=loaded) == 0
    assert len((out / "ids.txt").read_text().split()) == 4
    capsys.readouterr()
    assert main(["envs", "export", str(run_dir), "--format", "idz", "--out",
                 str(tmp_path / "x")], plugins=loaded) == 2
    err = capsys.readouterr().err
    assert "unknown export format 'idz'" in err and "ids" in err and "jsonl" in err
    assert not (tmp_path / "x").exists()
