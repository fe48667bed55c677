"""spade_core/cli/envs_cmd.py: ``spade envs`` is a group plugins add members to (``spade envs
export``), light to start (issue 17)."""

from __future__ import annotations

from fakes.cli import run_spade
from fakes.commands import imported_after


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
