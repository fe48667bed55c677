"""The built-in export formats and ``export_envs``: a verifiers package is named after the run
and its latest iteration, so two exports install side by side."""

from __future__ import annotations

import json

from fakes.exported_envs import export as _export


def test_verifiers_packages_are_named_after_the_run_and_iteration(run_dir, tmp_path, capsys):
    """Two exports of different runs (or iterations) install side by side; --name overrides."""
    import shutil
    import tomllib

    from plugins.exports.formats import package_name

    def exported(source, out, *extra):
        assert _export(source, out, "verifiers", "--json", *extra) == 0
        name = json.loads(capsys.readouterr().out)["name"]
        project = tomllib.loads((out / "pyproject.toml").read_text())
        assert project["project"]["name"] == name.replace("_", "-")
        assert project["tool"]["setuptools"]["packages"] == [name]
        assert f'id: str = "{name}"' in (out / name / "__init__.py").read_text()
        return name

    later = tmp_path / "later run"
    shutil.copytree(run_dir, later)
    (later / "config.resolved.yaml").write_text("run: {name: Qwen-7b.selfplay}\n")
    (later / "metrics.jsonl").write_text('{"iteration": 0}\n{"iteration": 11}\n')
    assert package_name(later) == "spade_qwen_7b_selfplay_iter11"
    first = exported(run_dir, tmp_path / "a")
    second = exported(later, tmp_path / "b")
    assert first == package_name(run_dir) and second == "spade_qwen_7b_selfplay_iter11"
    assert exported(later, tmp_path / "c", "--name", "my_envs") == "my_envs"
    assert _export(run_dir, tmp_path / "d", "jsonl", "--name", "x") == 2
    assert "--name is for verifiers" in capsys.readouterr().err
    assert _export(run_dir, tmp_path / "e", "verifiers", "--name", "Not-an-identifier") == 2
    assert "String should match pattern" in capsys.readouterr().err
