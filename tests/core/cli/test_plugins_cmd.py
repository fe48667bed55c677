"""spade_core/cli/plugins_cmd.py: ``spade plugins`` lists every component and plugin command with
its distribution, and every failed plugin with its error (the listing of the installed built-ins
and third parties: tests/core/test_plugins.py)."""

from __future__ import annotations

import json

from spade_core.cli import main
from spade_core.cli.plugins_cmd import plugin_rows
from spade_core.hookspecs import hookimpl
from spade_core.testing import load_test_plugins

from fakes.all_kinds import FakeAllKinds


class FakeCommandPlugin:
    @hookimpl
    def register_commands(self, register):
        register("greet", lambda p: None, lambda args: 0, help="say hello")


def test_rows_are_components_commands_and_failures_sorted_by_kind(capsys):
    loaded = load_test_plugins(FakeAllKinds(), FakeCommandPlugin())
    rows = plugin_rows(loaded)
    kinds = [r["kind"] for r in rows]
    assert kinds == sorted(kinds, key=lambda k: k or "~")
    assert {"name": "greet", "kind": "command", "summary": "say hello", "error": None}.items() \
        <= next(r for r in rows if r["name"] == "greet").items()
    assert "fake-estimator" in {r["name"] for r in rows if r["kind"] == "difficulty_estimator"}
    assert main(["plugins", "--json"], plugins=loaded) == 0
    assert json.loads(capsys.readouterr().out) == rows
    assert main(["plugins"], plugins=loaded) == 0
    text = capsys.readouterr().out
    assert any(line.startswith("command") and "greet" in line and "say hello" in line
               for line in text.splitlines())


def test_no_plugins_says_so(capsys):
    assert main(["plugins"], plugins=load_test_plugins()) == 0
    assert "no plugins loaded (is SPADE_PLUGINS set?)" in capsys.readouterr().out
