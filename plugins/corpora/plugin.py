"""Registers the built-in corpus samplers: ``jsonl``, ``folder``, ``hf-dataset`` and ``none``.

Light at import: each sampler module is imported by its factory, and ``datasets`` only when an
``hf-dataset`` sampler is built. ``options.seed: null`` takes the run seed from the build context.
"""

from __future__ import annotations

from typing import Any

from plugins.corpora.options import (
    FolderOptions,
    HfDatasetOptions,
    JsonlOptions,
    NoCorpusOptions,
)
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


def build_none(options: Any, context: Any) -> Any:
    """A :class:`~plugins.corpora.none.NoCorpus`: empty documents (no grounding)."""
    from plugins.corpora.none import NoCorpus

    return NoCorpus()


def _path_check(kind: str, needs_path: bool) -> Any:
    """A preflight check that ``options.path`` names an existing ``kind`` (file, folder or
    either) on this machine."""

    def check(options: Any, preflight: Any) -> list[str]:
        from plugins.corpora.paths import BUNDLED_CORPUS, resolve_path
        from spade_core.errors import ConfigError

        key = f"{preflight.where}.path"
        try:
            path = resolve_path(options.path, default=None if needs_path else BUNDLED_CORPUS)
        except ConfigError as exc:
            return [str(exc)]  # it names the key already
        if not path.exists():
            return [f"{key}: no such {kind}: {path}"]
        if kind == "file" and not path.is_file():
            return [f"{key}: {path} is not a file; the jsonl sampler reads one .jsonl file "
                    "(use corpus: folder for a folder of documents)"]
        if kind == "folder" and not path.is_dir():
            return [f"{key}: {path} is not a folder; the folder sampler reads every matching "
                    "file under a folder (use corpus: jsonl for one .jsonl file)"]
        return []

    return check


@hookimpl
def register_corpus_samplers(register):
    register("jsonl", build_jsonl, JsonlOptions,
             "JSON Lines with 'text' or 'orig_doc' (SPADE format); default: bundled corpus",
             preflight=_path_check("file", needs_path=False))
    register("folder", build_folder, FolderOptions,
             "every .txt/.md file under a folder, recursively",
             preflight=_path_check("folder", needs_path=True))
    register("hf-dataset", build_hf_dataset, HfDatasetOptions,
             "a local Hugging Face datasets dataset (save_to_disk folder or data file)",
             preflight=_path_check("file or folder", needs_path=True))
    register("none", build_none, NoCorpusOptions,
             "no documents: the designer works from the skill alone (the no-corpus ablation)")
