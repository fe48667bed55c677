"""Errors the CLI turns into clear messages and exit codes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spade_core.records import Verdict


class SpadeError(Exception):
    """Base class: an error with a message meant for the user, not a traceback."""

    exit_code = 1


class ConfigError(SpadeError):
    """The config (file, key or value) is wrong. Exit status 2."""

    exit_code = 2


class UsageError(SpadeError):
    """The command line is wrong. Exit status 2."""

    exit_code = 2


class PluginError(SpadeError):
    """A plugin failed to load, register or build a component."""


class SandboxError(SpadeError):
    """An environment program could not be run; ``verdict`` says why."""

    def __init__(self, verdict: "Verdict") -> None:
        super().__init__(f"{verdict.category}: {verdict.message}")
        self.verdict = verdict
