"""Commands that plugins add to the ``spade`` command line (hook ``register_commands``).

A plugin registers a command with ``register(name, add_arguments, run, help="", group=None)``: a
top-level ``spade NAME`` command, or with ``group="bench"`` a member of a core command group
(``spade bench NAME``). The core names no plugin's module; it only calls what was registered.

Loading rules, the same as for components: a plugin whose ``register_commands`` raises contributes
no command and is reported; a name that clashes with a core command is refused; a name two plugins
register is refused for both, and typing it says why. Problems are listed by ``spade plugins``.

Speed: ``add_arguments`` runs only for the command actually typed (``spade --help`` calls none), so
a plugin's argument definitions, and any module holding them, are loaded only when needed.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

HOOK = "register_commands"
AddArguments = Callable[[argparse.ArgumentParser], None]
Run = Callable[[argparse.Namespace], "int | None"]
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


class RegisterCommand(Protocol):
    """The callback ``register_commands`` receives."""

    def __call__(self, name: str, add_arguments: AddArguments, run: Run, help: str = "",
                 group: str | None = None) -> None: ...


@dataclass(frozen=True)
class Command:
    """One command: its place on the command line, its two callables, and who registered it."""

    name: str
    add_arguments: AddArguments
    run: Run
    help: str = ""
    group: str | None = None
    #: The registering plugin's entry-point name; empty for a core command.
    plugin: str = ""
    distribution: str = ""
    version: str = ""

    @property
    def path(self) -> str:
        """The words that select it: ``"memory"`` or ``"bench sandbox"``."""
        return f"{self.group} {self.name}" if self.group else self.name

    def owner(self) -> str:
        """Who registered it, for error messages."""
        if not self.plugin:
            return "the core"
        return f"plugin {self.plugin!r} from {self.distribution} {self.version}"

    def setup(self, parser: argparse.ArgumentParser) -> None:
        """Fill ``parser`` with the command's arguments; a plugin's failure becomes a
        :class:`~spade_core.errors.PluginError` naming the command and its plugin."""
        from spade_core.errors import PluginError

        try:
            self.add_arguments(parser)
        except Exception as exc:  # noqa: BLE001 - a broken plugin gets a one-line error
            raise PluginError(f"command {self.path!r} ({self.owner()}) failed to set up its "
                              f"arguments: {type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True)
class CommandProblem:
    """A registration that was refused: ``name`` is the command, or the plugin when its hook
    raised."""

    name: str
    plugin: str
    distribution: str
    version: str
    error: str


@dataclass
class CommandSet:
    """Every usable plugin command by path, and every refused registration."""

    commands: dict[str, Command] = field(default_factory=dict)
    problems: list[CommandProblem] = field(default_factory=list)
    #: Paths two or more plugins registered: why typing them cannot work.
    unavailable: dict[str, str] = field(default_factory=dict)

    def members(self, group: str | None) -> list[Command]:
        """The commands of ``group`` (``None``: top level), sorted by name."""
        return sorted((c for c in self.commands.values() if c.group == group),
                      key=lambda c: c.name)


def _registrar(found: list[Command], info: Any, groups: Collection[str]) -> RegisterCommand:
    """The ``register`` callback of one plugin: checks each call and collects it in ``found``."""

    def register(name: str, add_arguments: AddArguments, run: Run, help: str = "",  # noqa: A002
                 group: str | None = None) -> None:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"command name {name!r} must be a word of letters, digits, '.', "
                             "'_' or '-' that does not start with '-'")
        if group is not None and group not in groups:
            raise ValueError(f"command {name!r}: unknown group {group!r}; groups: "
                             f"{', '.join(sorted(groups)) or 'none'}")
        if not callable(add_arguments) or not callable(run):
            raise TypeError(f"command {name!r}: add_arguments and run must be callables")
        command = Command(name=name, add_arguments=add_arguments, run=run, help=str(help or ""),
                          group=group, plugin=info.name, distribution=info.distribution,
                          version=info.version)
        if any(c.path == command.path for c in found):
            raise ValueError(f"command {command.path!r} registered twice")
        found.append(command)

    return register


def collect_commands(loaded: Any, reserved: Mapping[str | None, Collection[str]]) -> CommandSet:
    """Call every plugin's ``register_commands`` once, in isolation, and sort out clashes.

    ``loaded`` is a :class:`spade_core.plugins.LoadedPlugins` (not imported here: the hook specs
    import this module's types, and the plugin loader imports the hook specs).

    ``reserved`` maps each group to the names the core already uses in it: ``None`` to the core's
    top-level commands, and each core group that accepts plugin members (``"bench"``) to its core
    members. Plugins that failed to load are skipped (``spade plugins`` reports them already).
    """
    groups = [g for g in reserved if g is not None]
    infos = {p.name: p for p in loaded.plugins}
    result = CommandSet()
    pending: dict[str, list[Command]] = {}
    for impl in getattr(loaded.manager.hook, HOOK).get_hookimpls():
        info = infos.get(impl.plugin_name)
        if info is None or info.error:
            continue
        found: list[Command] = []
        try:
            impl.function(register=_registrar(found, info, groups))
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the CLI
            result.problems.append(CommandProblem(
                info.name, info.name, info.distribution, info.version,
                f"{HOOK} raised {type(exc).__name__}: {exc}; none of its commands is available"))
            continue
        for command in found:
            pending.setdefault(command.path, []).append(command)
    for path, claimants in sorted(pending.items()):
        if claimants[0].name in reserved.get(claimants[0].group, ()):
            for c in claimants:
                result.problems.append(CommandProblem(
                    path, c.plugin, c.distribution, c.version,
                    f"command {path!r} clashes with the core command of that name; "
                    "the plugin's is left out"))
        elif len(claimants) > 1:
            owners = " and ".join(f"{c.distribution} (plugin {c.plugin!r})" for c in claimants)
            why = (f"duplicate command name {path!r}: registered by {owners}; uninstall one or "
                   "limit loading with SPADE_PLUGINS")
            result.unavailable[path] = why
            for c in claimants:
                result.problems.append(CommandProblem(path, c.plugin, c.distribution,
                                                      c.version, why))
        else:
            result.commands[path] = claimants[0]
    return result


def typed_path(argv: Sequence[str], groups: Collection[str]) -> tuple[str, ...]:
    """The command words in ``argv``: ``()``, ``("memory",)`` or ``("bench", "sandbox")``.

    The top-level parser has options only (``--debug``, ``--version``, ``--help``), none taking a
    value, so the first word is the command; in a group, the next word is the member.
    """
    words = [token for token in argv if not token.startswith("-")]
    if not words:
        return ()
    return tuple(words[:2]) if words[0] in groups else (words[0],)


def add_parsers(sub: argparse._SubParsersAction, commands: Iterable[Command],
                typed: str | None) -> None:
    """One sub-parser per command, running ``command.run``. Only the ``typed`` command's
    arguments are set up: the others are never parsed, and their modules never imported."""
    for command in commands:
        parser = sub.add_parser(command.name, help=command.help or None,
                                description=command.help or None)
        parser.set_defaults(func=command.run)
        if command.name == typed:
            command.setup(parser)


def from_module(module: str) -> tuple[AddArguments, Run]:
    """``(add_arguments, run)`` for a command implemented by ``module`` (a plugin's own module
    with ``add_arguments(parser)`` and ``run(args)``), imported only when the command is typed;
    its docstring becomes the command's description."""
    import importlib

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        implementation = importlib.import_module(module)
        parser.description = parser.description or implementation.__doc__
        implementation.add_arguments(parser)

    def run(args: argparse.Namespace) -> int | None:
        return importlib.import_module(module).run(args)

    return add_arguments, run

