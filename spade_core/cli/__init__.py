"""The ``spade`` command line. Each core command lives in its own module; this one only wires
them, with the commands plugins register through the ``register_commands`` hook
(:mod:`spade_core.commands`).

Command modules must stay light at import time (``spade --help`` imports all of them): heavy
libraries are imported inside their ``run`` functions. Plugins are loaded only when the typed
command may be theirs (no command, ``--help``, a group such as ``bench`` or ``envs`` without a core
member after it, or a word that is no core command), so a core command such as ``spade run`` or
``spade envs import`` parses its arguments without loading any plugin.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from spade_core import __version__
from spade_core.commands import CommandSet, add_parsers, typed_path
from spade_core.errors import PluginError, SpadeError

if TYPE_CHECKING:
    from spade_core.plugins import LoadedPlugins

#: Core commands -> their module, which has ``add_parser(subparsers)``; the parser's ``func`` runs
#: the command. ``bench`` is separate: it is a group plugins add benchmarks to. ``envs`` is a core
#: command and a group: its module's ``add_parser(subparsers, members, typed)`` adds the plugins'
#: members (``envs export``) next to its own (``envs import``).
CORE_COMMANDS: dict[str, str] = {
    "run": "spade_core.cli.run_cmd",
    "eval": "spade_core.cli.eval_cmd",
    "config": "spade_core.cli.config_cmd",
    "plugins": "spade_core.cli.plugins_cmd",
    "check-env": "spade_core.cli.check_env_cmd",
    "doctor": "spade_core.cli.doctor_cmd",
    "envs": "spade_core.cli.envs_cmd",
    "seeds": "spade_core.cli.seeds_cmd",
    "experiment": "spade_core.cli.experiment_cmd",
}
#: Core commands that plugins can add members to (``register(..., group="bench")``, ``"envs"``).
GROUPS: tuple[str, ...] = ("bench", "envs")


def reserved_names() -> dict[str | None, set[str]]:
    """The names the core uses: its top-level commands, and the core members of each group."""
    from spade_core.cli.bench_cmd import CORE_BENCHMARKS
    from spade_core.cli.envs_cmd import CORE_MEMBERS

    return {None: {*CORE_COMMANDS, *GROUPS}, "bench": {c.name for c in CORE_BENCHMARKS},
            "envs": set(CORE_MEMBERS)}


def _needs_plugins(typed: tuple[str, ...]) -> bool:
    """Whether the typed command may be a plugin's: not for a core command, nor for a core member
    of a group (``envs import``); yes for a group alone (its help lists the plugins' members)."""
    from spade_core.cli.envs_cmd import CORE_MEMBERS

    if not typed or typed[0] not in CORE_COMMANDS:
        return True
    if typed[0] == "envs":
        return len(typed) == 1 or typed[1] not in CORE_MEMBERS
    return False


def load_commands(plugins: "LoadedPlugins | None" = None) -> CommandSet:
    """The plugins' commands: of ``plugins``, or of every installed plugin SPADE_PLUGINS allows."""
    from spade_core.commands import collect_commands
    from spade_core.plugins import load_plugins

    return collect_commands(plugins if plugins is not None else load_plugins(), reserved_names())


def _build(argv: Sequence[str], plugins: "LoadedPlugins | None"
           ) -> tuple[argparse.ArgumentParser, CommandSet | None]:
    """The parser for ``argv``: every command, with arguments set up only for the typed one."""
    from spade_core.cli import bench_cmd, envs_cmd

    typed = typed_path(argv, GROUPS)
    parser = argparse.ArgumentParser(
        prog="spade",
        description="Self-play RL for LLM agents in environments the model writes itself.",
    )
    parser.add_argument("--version", action="version", version=f"spade-rl {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show a traceback for errors instead of a one-paragraph message")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = load_commands(plugins) if _needs_plugins(typed) else None

    def add_group(group: ModuleType) -> None:
        member = typed[1] if len(typed) > 1 and typed[0] == group.GROUP else None
        group.add_parser(sub, commands.members(group.GROUP) if commands else (), member)

    for name, module in CORE_COMMANDS.items():
        if name == envs_cmd.GROUP:
            add_group(envs_cmd)
        else:
            importlib.import_module(module).add_parser(sub)
    add_group(bench_cmd)
    if commands is not None:
        why = commands.unavailable.get(" ".join(typed))
        if why:
            raise PluginError(why)
        add_parsers(sub, commands.members(None), typed[0] if typed else None)
    return parser, commands


def build_parser(argv: Sequence[str] = (), plugins: "LoadedPlugins | None" = None
                 ) -> argparse.ArgumentParser:
    """The ``spade`` parser as ``argv`` needs it (by default: every command, none set up)."""
    return _build(list(argv), plugins)[0]


def _report(exc: BaseException, debug: bool) -> int:
    """Turn an error into its one-paragraph message and exit status."""
    if debug:
        traceback.print_exc()
    if isinstance(exc, SpadeError):
        print(f"spade: error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(f"spade: error: {type(exc).__name__}: {exc} (run again with --debug for the "
          "traceback)", file=sys.stderr)
    return 1


#: Exit status when the reader of stdout went away (``spade plugins | head -1``): 128 + SIGPIPE,
#: what a program killed by SIGPIPE reports, as ``yes | head -1`` does.
EXIT_CLOSED_STDOUT = 141


def _closed_stdout() -> int:
    """stdout's reader is gone: point stdout at /dev/null so that the interpreter's final flush
    cannot fail again, and exit quietly (the standard SIGPIPE handling of Python CLIs)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no real file (tests capture it): nothing to do
        pass
    return EXIT_CLOSED_STDOUT


def main(argv: Sequence[str] | None = None, *, plugins: "LoadedPlugins | None" = None) -> int:
    """Run ``spade`` with ``argv`` (default: the process's arguments). ``plugins`` replaces the
    installed plugins (tests pass :func:`spade_core.testing.load_test_plugins`'s result).
    A closed stdout ends any command quietly with :data:`EXIT_CLOSED_STDOUT`."""
    try:
        status = _main(argv, plugins)
        sys.stdout.flush()  # a pipe closed after the last write shows here, not at shutdown
        return status
    except BrokenPipeError:
        return _closed_stdout()
    except SystemExit as exit_:  # argparse's --help, --version and usage errors
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            return _closed_stdout()
        raise exit_ from None


def _main(argv: Sequence[str] | None, plugins: "LoadedPlugins | None") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        parser, _ = _build(argv, plugins)
    except Exception as exc:  # noqa: BLE001 - a plugin's argument set-up failed: say it briefly
        return _report(exc, debug)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    args._plugins = plugins  # for ``spade plugins`` run with test plugins
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("spade: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise
    except Exception as exc:  # noqa: BLE001 - a bug or a plugin's failure: say it, keep it short
        return _report(exc, args.debug)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
