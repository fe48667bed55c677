"""spade_core/cli/bench_cmd.py: ``spade bench`` lists the core's benchmark and the plugins' ones,
sets up only the typed one, and keeps the core's names."""

from __future__ import annotations

from spade_core.cli import build_parser, load_commands, main
from spade_core.cli.bench_cmd import CORE_BENCHMARKS
from spade_core.hookspecs import hookimpl
from spade_core.testing import load_test_plugins

from fakes.commands import help_text


class FakeBenchPlugin:
    def __init__(self):
        self.set_up: list[str] = []
        self.ran: list[int] = []

    @hookimpl
    def register_commands(self, register):
        def arguments(parser):
            self.set_up.append("echo")
            parser.add_argument("--times", type=int, default=1)

        register("echo", arguments, lambda args: self.ran.append(args.times) or 0,
                 help="echo a number", group="bench")
        register("loop", lambda p: None, lambda args: 0, help="taken", group="bench")


def test_the_core_benchmark_is_listed_with_its_help():
    assert [c.name for c in CORE_BENCHMARKS] == ["loop"]
    text = help_text(["bench"])
    assert "Available:" in text and "loop" in text
    assert "--envs" in help_text(["bench", "loop"])  # the loop benchmark's own options


def test_a_plugin_benchmark_is_set_up_only_when_typed_runs_and_cannot_take_loop():
    plugin = FakeBenchPlugin()
    loaded = load_test_plugins(plugin)
    commands = load_commands(loaded)
    assert "bench echo" in commands.commands and "bench loop" not in commands.commands
    assert any("loop" in p.name and "clashes" in p.error for p in commands.problems)
    build_parser(["bench", "loop", "--help"], plugins=loaded)
    assert plugin.set_up == []  # another benchmark typed: echo's arguments are not set up
    assert main(["bench", "echo", "--times", "3"], plugins=loaded) == 0
    assert plugin.set_up == ["echo"] and plugin.ran == [3]
