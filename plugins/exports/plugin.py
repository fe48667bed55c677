"""Registers ``spade envs export`` with its built-in export formats (``jsonl``, ``hf-dataset``,
``verifiers``, ``openenv``), ``spade envs serve --mcp``, ``spade bench mcp`` and ``spade
export-model`` (entry point ``exports``).

``envs`` is a core command group that plugins add members to (like ``bench``), so the environment
export lives next to ``envs import``. Modules load only when their command is typed."""

from __future__ import annotations

from typing import Any

from spade_core.commands import from_module
from spade_core.hookspecs import hookimpl

from plugins.exports.options import VerifiersOptions

ENVS_EXPORT_HELP = "export a run's environments (jsonl, hf-dataset, verifiers, openenv)"
ENVS_SERVE_HELP = "serve one environment over MCP (stdio, or streamable HTTP on 127.0.0.1)"
MCP_BENCH_HELP = "tool-call round trips through an MCP server against direct play"


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("export", *from_module("plugins.exports.envs_export_cmd"), help=ENVS_EXPORT_HELP,
             group="envs")
    register("serve", *from_module("plugins.exports.serve_cmd"), help=ENVS_SERVE_HELP,
             group="envs")
    register("mcp", *from_module("plugins.exports.mcp_bench"), help=MCP_BENCH_HELP,
             group="bench")
    register("export-model", *from_module("plugins.exports.model_cmd"),
             help="export a run's trained model as a save_pretrained folder with a model card")


def _jsonl(options: Any, context: Any) -> Any:
    from plugins.exports.formats import JsonlFormat

    return JsonlFormat()


def _hf_dataset(options: Any, context: Any) -> Any:
    from plugins.exports.formats import HfDatasetFormat

    return HfDatasetFormat()


def _verifiers(options: Any, context: Any) -> Any:
    from plugins.exports.formats import VerifiersFormat

    return VerifiersFormat(options.name or "spade_envs")


def _openenv(options: Any, context: Any) -> Any:
    from plugins.exports.formats import OpenEnvFormat

    return OpenEnvFormat()


@hookimpl
def register_export_formats(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("jsonl", _jsonl, None,
             "environments.jsonl, one environment per line")
    register("hf-dataset", _hf_dataset, None,
             "a datasets dataset written with save_to_disk")
    register("verifiers", _verifiers, VerifiersOptions,
             "an installable verifiers environment package playing in the sandbox")
    register("openenv", _openenv, None,
             "an OpenEnv environment (openenv.yaml, server/app.py) playing in the sandbox")
