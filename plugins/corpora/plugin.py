"""Registers the built-in corpus samplers: ``jsonl``, ``folder`` and ``hf-dataset``.

Light at import: each sampler module is imported by its factory, and ``datasets`` only when an
``hf-dataset`` sampler is built. ``options.seed: null`` takes the run seed from the build context.
"""

from __future__ import annotations

from typing import Any

from plugins.corpora.options import FolderOptions, HfDatasetOptions, JsonlOptions
from spade_core.hookspecs import hookimpl


def _seed(options: Any, context: Any) -> int:
    return options.seed if options.seed is not None else int(getattr(context, "seed", 0) or 0)


def build_jsonl(options: JsonlOptions, context: Any) -> Any:
    """A :class:`~plugins.corpora.jsonl.JsonlSampler` (the bundled corpus when no path is given)."""
    from plugins.corpora.jsonl import JsonlSampler

    return JsonlSampler(options, _seed(options, context))


def build_folder(options: FolderOptions, context: Any) -> Any:
    """A :class:`~plugins.corpora.folder.FolderSampler`."""
    from plugins.corpora.folder import FolderSampler

    return FolderSampler(options, _seed(options, context))


def build_hf_dataset(options: HfDatasetOptions, context: Any) -> Any:
    """A :class:`~plugins.corpora.hf_dataset.HfDatasetSampler` (local datasets only)."""
    from plugins.corpora.hf_dataset import HfDatasetSampler

    return HfDatasetSampler(options, _seed(options, context))


@hookimpl
def register_corpus_samplers(register):
    register("jsonl", build_jsonl, JsonlOptions,
             "JSON Lines with 'text' or 'orig_doc' (SPADE format); default: bundled corpus")
    register("folder", build_folder, FolderOptions,
             "every .txt/.md file under a folder, recursively")
    register("hf-dataset", build_hf_dataset, HfDatasetOptions,
             "a local Hugging Face datasets dataset (save_to_disk folder or data file)")
