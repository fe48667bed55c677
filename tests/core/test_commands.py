"""Commands plugins register (hook ``register_commands``): running them, broken and clashing ones,
and the built-in ``memory``, ``report`` and ``bench`` members through their entry points."""

from __future__ import annotations

import json

import pytest

from spade_core.cli import CORE_COMMANDS, build_parser, load_commands, main
from spade_core.commands import typed_path
from spade_core.hookspecs import hookimpl
from spade_core.testing import load_test_plugins

from fakes.cli import run_spade
from fakes.plugin_dists import make_dist


class Greeter:
    """A plugin with a top-level command (with sub-commands) and a benchmark."""

    calls: list[str] = []

    @hookimpl
    def register_commands(self, register):
        def arguments(parser):
            actions = parser.add_subparsers(dest="greet_action", required=True)
            hello = actions.add_parser("hello")
            hello.add_argument("who")
            hello.add_argument("--times", type=int, default=1)
            actions.add_parser("bye")

        def run(args):
            Greeter.calls.append(f"{args.greet_action}:{getattr(args, 'who', '')}")
            print(f"{args.greet_action} {getattr(args, 'who', '')} x{getattr(args, 'times', 1)}")
            return 3

        def bench_arguments(parser):
            parser.add_argument("--rounds", type=int, default=2)

        def bench_run(args):
            print(json.dumps({"rounds": args.rounds}))
            return 0

        register("greet", arguments, run, help="say hello")
        register("greeting", bench_arguments, bench_run, help="greetings per second",
                 group="bench")


class Raises:
    @hookimpl
    def register_commands(self, register):
        register("fine-before-raise", lambda p: None, lambda a: 0)
        raise RuntimeError("no commands today")


class Clashes:
    """Takes a core command's name, a core benchmark's, and Greeter's ``greet``."""

    @hookimpl
    def register_commands(self, register):
        register("run", lambda p: None, lambda a: 0)
        register("loop", lambda p: None, lambda a: 0, group="bench")
        register("greet", lambda p: None, lambda a: 0)
        register("wave", lambda p: None, lambda a: 0, help="wave")


class BadArguments:
    @hookimpl
    def register_commands(self, register):
        def arguments(parser):
            raise KeyError("missing")

        register("broken-args", arguments, lambda a: 0)


def test_hook_register_commands(capsys):
    loaded = load_test_plugins(Greeter())
    assert set(load_commands(loaded).commands) == {"greet", "bench greeting"}
    Greeter.calls.clear()
    assert main(["greet", "hello", "world", "--times", "2"], plugins=loaded) == 3
    assert Greeter.calls == ["hello:world"]
    assert capsys.readouterr().out == "hello world x2\n"
    assert main(["bench", "greeting", "--rounds", "5"], plugins=loaded) == 0
    assert json.loads(capsys.readouterr().out) == {"rounds": 5}


def test_help_lists_plugin_commands_without_setting_them_up(capsys):
    loaded = load_test_plugins(Greeter(), BadArguments())
    with pytest.raises(SystemExit) as exit_:
        main(["--help"], plugins=loaded)
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "greet" in out and "say hello" in out and "broken-args" in out
    with pytest.raises(SystemExit):
        main(["bench", "--help"], plugins=loaded)
    out = capsys.readouterr().out
    assert "greeting" in out and "loop" in out
    with pytest.raises(SystemExit):
        main(["greet", "hello", "--help"], plugins=loaded)
    assert "--times" in capsys.readouterr().out


def test_add_arguments_raising_breaks_only_that_command(capsys):
    loaded = load_test_plugins(Greeter(), BadArguments())
    assert main(["broken-args"], plugins=loaded) == 1
    err = capsys.readouterr().err
    assert "command 'broken-args'" in err and "KeyError" in err and "failed to set up" in err
    assert err.count("\n") == 1
    assert main(["greet", "bye"], plugins=loaded) == 3


def test_raising_hook_is_reported_and_others_keep_working(capsys):
    loaded = load_test_plugins(Raises(), Greeter())
    commands = load_commands(loaded)
    assert "fine-before-raise" not in commands.commands and "greet" in commands.commands
    [problem] = commands.problems
    assert "register_commands raised RuntimeError: no commands today" in problem.error
    assert main(["greet", "bye"], plugins=loaded) == 3
    capsys.readouterr()
    assert main(["plugins", "--json"], plugins=loaded) == 0
    rows = json.loads(capsys.readouterr().out)
    failed = [r for r in rows if r["error"]]
    assert len(failed) == 1 and failed[0]["kind"] == "command"
    assert "no commands today" in failed[0]["error"]
    assert {"name": "greet", "kind": "command", "summary": "say hello", "error": None}.items() \
        <= next(r for r in rows if r["name"] == "greet").items()


def test_clashing_names_are_reported(capsys):
    loaded = load_test_plugins(Greeter(), Clashes())
    commands = load_commands(loaded)
    errors = {p.name: p.error for p in commands.problems}
    assert "clashes with the core command" in errors["run"]
    assert "clashes with the core command" in errors["bench loop"]
    assert "duplicate command name 'greet'" in errors["greet"]
    assert set(commands.commands) == {"wave", "bench greeting"}
    # The core keeps its own, the clashing name says why, the rest work.
    assert main(["greet", "bye"], plugins=loaded) == 1
    assert "duplicate command name 'greet'" in capsys.readouterr().err
    assert main(["wave"], plugins=loaded) == 0
    with pytest.raises(SystemExit):
        main(["bench", "loop", "--help"], plugins=loaded)
    assert "--envs" in capsys.readouterr().out
    assert main(["plugins"], plugins=loaded) == 0
    out = capsys.readouterr().out
    assert out.count("FAILED") == 4 and "clashes with the core command" in out


@pytest.mark.parametrize("call, message", [
    ("register('two words', lambda p: None, lambda a: 0)", "must be a word"),
    ("register('-x', lambda p: None, lambda a: 0)", "must be a word"),
    ("register('x', lambda p: None, lambda a: 0, group='nope')", "unknown group 'nope'"),
    ("register('x', None, lambda a: 0)", "must be callables"),
    ("register('x', print, print); register('x', print, print)", "registered twice"),
])
def test_bad_registrations_are_errors(call, message):
    class Bad:
        @hookimpl
        def register_commands(self, register):
            exec(call, {"register": register})

    [problem] = load_commands(load_test_plugins(Bad())).problems
    assert message in problem.error


def test_typed_path():
    assert typed_path([], ["bench"]) == ()
    assert typed_path(["--debug", "memory", "stats", "x"], ["bench"]) == ("memory",)
    assert typed_path(["bench", "--help"], ["bench"]) == ("bench",)
    assert typed_path(["bench", "sandbox", "--seconds", "1"], ["bench"]) == ("bench", "sandbox")


def test_core_command_table_matches_the_parser():
    parser = build_parser(plugins=load_test_plugins())
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == {*CORE_COMMANDS, "bench"}


def test_core_command_loads_no_plugin():
    """``spade run ...`` parses without loading plugins: a plugin cannot shadow or slow it."""

    class Loud:
        @hookimpl
        def register_commands(self, register):
            raise AssertionError("plugins were loaded")

    loaded = load_test_plugins(Loud())
    parser = build_parser(["config", "check", "x.yaml"], plugins=loaded)
    assert parser.parse_args(["config", "check", "x.yaml"]).func


@pytest.mark.parametrize("args, expected", [
    (["memory", "--help"], "search"),
    (["memory", "search", "--help"], "TEXT_OR_FILE"),
    (["report", "--help"], "--neighbours"),
    (["bench", "sandbox", "--help"], "--fresh-episodes"),
    (["bench", "memory", "--help"], "--switch-size"),
    (["bench", "generation", "--help"], "--batch-sizes"),
    (["bench", "loop", "--help"], "--envs"),
])
def test_builtin_commands_through_entry_points(args, expected):
    result = run_spade(*args)
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout and f"usage: spade {' '.join(args[:-1])}" in result.stdout


def test_builtin_commands_listed_by_spade_plugins():
    result = run_spade("plugins", "--json")
    rows = [r for r in json.loads(result.stdout) if r["kind"] == "command"]
    assert {r["name"] for r in rows} >= {"memory", "report", "bench sandbox", "bench memory",
                                         "bench generation"}
    assert all(r["distribution"] == "spade-rl" and not r["error"] for r in rows)


def test_spade_plugins_env_drops_commands_of_unloaded_plugins():
    result = run_spade("--help", env={"SPADE_PLUGINS": "report"})
    assert result.returncode == 0 and "report" in result.stdout
    assert "memory" not in result.stdout
    result = run_spade("memory", "stats", ".", env={"SPADE_PLUGINS": ""})
    assert result.returncode == 2 and "invalid choice: 'memory'" in result.stderr


def test_installed_broken_and_clashing_plugins(tmp_path):
    site = tmp_path / "site"
    good = ("from spade_core.hookspecs import hookimpl\n"
            "@hookimpl\ndef register_commands(register):\n"
            "    register('hi', lambda p: p.add_argument('--name', default='you'),\n"
            "             lambda a: print('hi', a.name), help='greets')\n")
    broken = ("from spade_core.hookspecs import hookimpl\n"
              "@hookimpl\ndef register_commands(register):\n    raise ValueError('bad')\n")
    clash = ("from spade_core.hookspecs import hookimpl\n"
             "@hookimpl\ndef register_commands(register):\n"
             "    register('memory', print, print)\n")
    make_dist(site, "spade-hi", "1.0", {"spade_hi": good}, {"hi": "spade_hi"})
    make_dist(site, "spade-cmdbroken", "0.1", {"spade_cmdbroken": broken},
              {"cmdbroken": "spade_cmdbroken"})
    make_dist(site, "spade-memclash", "0.2", {"spade_memclash": clash},
              {"memclash": "spade_memclash"})
    env = {"PYTHONPATH": str(site)}
    result = run_spade("hi", "--name", "there", env=env)
    assert result.returncode == 0 and result.stdout == "hi there\n", result.stderr
    rows = json.loads(run_spade("plugins", "--json", env=env).stdout)
    by_dist = {r["distribution"]: r for r in rows if r["kind"] == "command" and r["error"]}
    assert "register_commands raised ValueError: bad" in by_dist["spade-cmdbroken"]["error"]
    assert by_dist["spade-memclash"]["name"] == "memory"
    assert "duplicate command name 'memory'" in by_dist["spade-memclash"]["error"]
    assert "spade-rl" in by_dist["spade-memclash"]["error"]
    result = run_spade("memory", "stats", ".", env=env)
    assert result.returncode == 1 and "duplicate command name 'memory'" in result.stderr
    result = run_spade("report", "--help", env=env)
    assert result.returncode == 0
