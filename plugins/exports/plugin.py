"""Registers ``spade export-envs`` and ``spade export-model`` (entry point ``exports``).

``envs`` is a core command whose members plugins cannot extend (only ``bench`` is a group in
:mod:`spade_core.cli`), so the environment export is the top-level ``export-envs`` rather than
``envs export``. Modules load only when their command is typed."""

from __future__ import annotations

from spade_core.commands import from_module
from spade_core.hookspecs import hookimpl


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("export-envs", *from_module("plugins.exports.envs_cmd"),
             help="export a run's environments (jsonl, hf-dataset, verifiers, openenv)")
    register("export-model", *from_module("plugins.exports.model_cmd"),
             help="export a run's trained model as a save_pretrained folder with a model card")
