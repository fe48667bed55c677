"""Registers ``spade envs export`` and ``spade export-model`` (entry point ``exports``), and the
gymnasium adapter behind :func:`spade_core.api.open_env` (hook ``spade_gym_env``).

``envs`` is a core command group that plugins add members to (like ``bench``), so the environment
export lives next to ``envs import``. Modules load only when their command is typed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spade_core.commands import from_module
from spade_core.hookspecs import hookimpl

ENVS_EXPORT_HELP = "export a run's environments (jsonl, hf-dataset, verifiers, openenv)"


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("export", *from_module("plugins.exports.envs_cmd"), help=ENVS_EXPORT_HELP,
             group="envs")
    register("export-model", *from_module("plugins.exports.model_cmd"),
             help="export a run's trained model as a save_pretrained folder with a model card")


@hookimpl
def spade_gym_env(open_session: Callable[[], Any], on_close: Callable[[], None],
                  options: dict[str, Any]) -> Any:
    """A :class:`plugins.families.gym.SandboxTextEnv` over the sessions ``open_session`` opens,
    calling ``on_close`` when it is closed (the API's sandbox goes with the env)."""
    from plugins.exports.gym_env import OwnedSandboxTextEnv

    return OwnedSandboxTextEnv(open_session, on_close, **options)
