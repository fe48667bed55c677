"""Registers ``spade envs export`` and ``spade export-model`` (entry point ``exports``).

``envs`` is a core command group that plugins add members to (like ``bench``), so the environment
export lives next to ``envs import``. Modules load only when their command is typed."""

from __future__ import annotations

from spade_core.commands import from_module
from spade_core.hookspecs import hookimpl

ENVS_EXPORT_HELP = "export a run's environments (jsonl, hf-dataset, verifiers, openenv)"


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("export", *from_module("plugins.exports.envs_cmd"), help=ENVS_EXPORT_HELP,
             group="envs")
    register("export-model", *from_module("plugins.exports.model_cmd"),
             help="export a run's trained model as a save_pretrained folder with a model card")
