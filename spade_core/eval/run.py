"""What ``spade eval`` and :func:`spade_core.evaluate` do once the config is loaded: choose the
suites and their options (flags over ``eval.*`` of the config), play them, optionally play or
read a baseline, and gather the JSON result both report."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # light at import: ``spade --help`` reads DEFAULT_SUITES
    from spade_core.components import Registry
    from spade_core.eval.scores import SuiteResult

#: Suites evaluated when neither the caller nor ``eval.suites`` of the config names any.
DEFAULT_SUITES = ("reasoning-gym", "bfcl")


@dataclass
class EvalRun:
    """One evaluation: the results (and the baseline's) and the JSON result holding both."""

    results: list[SuiteResult]
    #: What ``spade eval --json`` prints and :func:`spade_core.evaluate` returns.
    payload: dict[str, Any]
    baseline: list[SuiteResult] | None = None


def run_eval(resolved: Any, registry: Registry, *, config_label: str,
             suites: Sequence[str] | None = None,
             options: Mapping[str, Mapping[str, Any]] | None = None, limit: int | None = None,
             samples: int = 1, temperature: float | None = None,
             max_new_tokens: int | None = None, seed: int | None = None,
             model: str | None = None, checkpoint: str | Path | None = None,
             baseline: str | Path | None = None, save_replies: bool = False,
             defaults: Mapping[str, Mapping[str, Any]] | None = None) -> EvalRun:
    """Evaluate the model of ``resolved`` (already loaded with ``model.path`` set to ``model`` when
    one is given) on ``suites`` (default ``eval.suites``, else :data:`DEFAULT_SUITES`).
    ``options``: ``{suite: {key: value}}`` over ``eval.options``; ``checkpoint``: a run's trained
    weights merged first; ``baseline``: a checkpoint, ``"base"`` or an earlier ``--out`` file
    compared side by side. ``config_label`` names the config in the result. ``defaults``:
    ``{suite: {key: value}}`` under ``eval.options`` (what a paper table plays by default,
    :data:`spade_core.eval.paper_table.TABLE_OPTIONS`), for the selected suites only."""
    from spade_core.errors import PluginError, UsageError
    from spade_core.eval.evaluate import EvalRequest, evaluate
    from spade_core.eval.weights import trainer_folder

    if samples < 1 or (limit is not None and limit < 1):
        raise UsageError("eval: --samples and --limit must be at least 1")
    for source in (checkpoint, baseline):  # missing or damaged: refused before any model loads
        if source and str(source) != "base" and not Path(source).is_file():
            trainer_folder(source)
    if not registry.names("eval_suite"):
        raise PluginError("the 'eval' command has no eval suite to run: no loaded plugin "
                          "registers one (the built-in suites come with the plugin 'evals'; is "
                          "it left out by SPADE_PLUGINS?)")
    section = resolved.config.eval
    chosen = list(dict.fromkeys(suites or section.suites or DEFAULT_SUITES))
    merged = {name: {**(defaults or {}).get(name, {}), **section.options.get(name, {})}
              for name in chosen}
    for name, values in (options or {}).items():
        if name not in merged:
            raise UsageError(f"eval: options for suite {name!r}, which is not selected "
                             f"({', '.join(chosen)})")
        merged[name].update(values)
    request = EvalRequest(
        suites=chosen, options=merged, limit=limit if limit is not None else section.limit,
        samples=samples, temperature=temperature, max_new_tokens=max_new_tokens, seed=seed,
        model_override=model, save_replies=save_replies, data=dict(section.data))
    compared: list[SuiteResult] | None = None
    compared_label = None
    if baseline:
        compared, compared_label = _baseline(str(baseline), resolved, registry, request)
    started = time.perf_counter()
    checkpoint = str(checkpoint) if checkpoint else checkpoint
    results, settings = evaluate(resolved, registry, request, checkpoint=checkpoint)
    folder = settings.pop("checkpoint_folder", None)
    payload: dict[str, Any] = {
        "config": config_label, "model": resolved.config.model.path,
        "checkpoint": checkpoint,
        # What was scored: the model, and the trained weights merged into it (their folder).
        "scored": {"model": resolved.config.model.path, "checkpoint": folder,
                   "save_replies": save_replies},
        "settings": settings,
        "seconds": round(time.perf_counter() - started, 1),
        "suites": [r.to_dict() for r in results]}
    if compared is not None:
        payload["baseline"] = {"source": compared_label,
                               "suites": [r.to_dict() for r in compared]}
    return EvalRun(results=results, payload=payload, baseline=compared)


def _baseline(source: str, resolved: Any, registry: Registry, request: Any
              ) -> tuple[list[SuiteResult], str]:
    """The baseline's results: read from an earlier ``--out`` file, or evaluated now."""
    from spade_core.eval.evaluate import evaluate
    from spade_core.eval.scores import results_from_json

    path = Path(source)
    if path.is_file():
        return results_from_json(json.loads(path.read_text(encoding="utf-8"))), str(path)
    checkpoint = None if source == "base" else source
    results, settings = evaluate(resolved, registry, request, checkpoint=checkpoint)
    return results, settings.get("checkpoint_folder") or source
