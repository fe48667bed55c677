"""The ``hf-dataset`` sampler: a Hugging Face ``datasets`` dataset from a local path, never the hub.

``path`` may be a folder written by ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk``, a
data file that a packaged builder reads (``json``/``jsonl``, ``parquet``, ``csv``, ``txt``,
``arrow``), or a local folder of such files. The datasets library is imported only when this sampler is built, in
offline mode, so a name like ``owner/dataset`` is refused instead of downloaded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from plugins.corpora.sampler_base import IndexedSampler
from plugins.corpora.jsonl import DEFAULT_TEXT_FIELDS, scalar_meta
from plugins.corpora.options import HfDatasetOptions
from plugins.corpora.paths import resolve_path
from spade_core.errors import ConfigError

#: File name endings -> the datasets builder that reads them.
BUILDERS: dict[str, str] = {
    ".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv", ".tsv": "csv",
    ".txt": "text", ".arrow": "arrow",
}
_SAVED_MARKERS = ("dataset_dict.json", "state.json")


def _datasets_offline() -> Any:
    """Import ``datasets`` with hub access switched off."""
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets

    datasets.config.HF_HUB_OFFLINE = True
    datasets.config.HF_DATASETS_OFFLINE = True
    return datasets


def _not_local(path: Path, raw: str) -> ConfigError:
    hub_like = "/" in raw and not raw.startswith((".", "/", "~")) and raw.count("/") == 1
    hint = (f" {raw!r} looks like a hub dataset name: the hf-dataset sampler never downloads; "
            "on a machine with network run datasets.load_dataset(NAME).save_to_disk(DIR) and "
            "give DIR here." if hub_like else "")
    return ConfigError(f"corpus.options.path: {path}: no such local file or folder.{hint} "
                       "Give a folder written by save_to_disk or a local data file "
                       "(.jsonl, .json, .parquet, .csv, .txt, .arrow).")


def open_dataset(options: HfDatasetOptions) -> tuple[Any, Path]:
    """Load the dataset (one split) that ``options`` names, from local disk only."""
    if options.path is None:
        raise ConfigError("corpus.options.path: the hf-dataset sampler needs a path: a folder "
                          "written by save_to_disk or a local data file.")
    path = resolve_path(options.path, what="hf-dataset")
    if not path.exists():
        raise _not_local(path, options.path)
    datasets = _datasets_offline()
    bars_were_off = datasets.is_progress_bar_enabled() is False
    datasets.disable_progress_bars()  # a run shows its own progress; keep datasets' bars out of it
    try:
        if path.is_dir() and any((path / m).is_file() for m in _SAVED_MARKERS):
            loaded = datasets.load_from_disk(str(path))
        elif path.is_dir():
            loaded = (datasets.load_dataset(options.builder, data_dir=str(path),
                                            cache_dir=options.cache_dir)
                      if options.builder else
                      datasets.load_dataset(str(path), cache_dir=options.cache_dir))
        else:
            builder = options.builder or BUILDERS.get(path.suffix.lower())
            if builder is None:
                known = ", ".join(sorted(set(BUILDERS.values())))
                raise ConfigError(f"corpus.options.builder: cannot tell which datasets builder "
                                  f"reads {path.name}; set builder to one of {known}.")
            loaded = datasets.load_dataset(builder, data_files=str(path),
                                           cache_dir=options.cache_dir)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - datasets raises many types; report them all alike
        raise ConfigError(f"corpus.options.path: {path}: datasets could not load it: "
                          f"{type(exc).__name__}: {str(exc)[:400]}") from None
    finally:
        if not bars_were_off:
            datasets.enable_progress_bars()
    return _one_split(loaded, options.split, path), path


def _one_split(loaded: Any, split: str | None, path: Path) -> Any:
    if not hasattr(loaded, "keys"):  # a single Dataset
        if split is not None:
            raise ConfigError(f"corpus.options.split: {path} holds a single dataset, not splits; "
                              f"remove split (got {split!r}).")
        return loaded
    splits = list(loaded.keys())
    if split is None:
        if "train" in splits:
            return loaded["train"]
        if len(splits) == 1:
            return loaded[splits[0]]
        raise ConfigError(f"corpus.options.split: {path} has splits {', '.join(splits)}; choose "
                          "one with split.")
    if split not in splits:
        raise ConfigError(f"corpus.options.split: {path} has no split {split!r}; it has "
                          f"{', '.join(splits)}.")
    return loaded[split]


class HfDatasetSampler(IndexedSampler):
    """Documents from one split of a local datasets dataset; null or blank texts are skipped."""

    kind = "hf-dataset"

    def __init__(self, options: HfDatasetOptions, seed: int) -> None:
        self.options = options
        self.dataset, self.path = open_dataset(options)
        columns = list(self.dataset.column_names)
        self.text_field = self._text_column(columns)
        self.id_column = options.id_field if options.id_field in columns else None
        self.rows, ids = self._index()
        super().__init__(source=str(self.path), ids=ids, seed=seed,
                         sampling=options.sampling, max_words=options.max_words,
                         truncation_note=options.truncation_note)

    def _text_column(self, columns: list[str]) -> str:
        wanted = (self.options.text_field,) if self.options.text_field else DEFAULT_TEXT_FIELDS
        name = next((c for c in wanted if c in columns), None)
        if name is None:
            fix = ("set corpus.options.text_field to the column that holds the document text"
                   if not self.options.text_field else "fix corpus.options.text_field")
            raise ConfigError(f"{self.path}: the dataset has no {' or '.join(map(repr, wanted))} "
                              f"column (columns: {', '.join(columns) or 'none'}); {fix}.")
        dtype = getattr(self.dataset.features[name], "dtype", None)
        if dtype not in ("string", "large_string"):
            raise ConfigError(f"{self.path}: column {name!r} must hold strings, but its type is "
                              f"{self.dataset.features[name]}.")
        return name

    def _index(self) -> tuple[list[int], list[str]]:
        import pyarrow.compute as pc

        keep_cols = [self.text_field] + ([self.id_column] if self.id_column else [])
        view = self.dataset.select_columns(keep_cols).with_format("arrow")
        rows: list[int] = []
        ids: list[str] = []
        start = 0
        for batch in view.iter(batch_size=4096):
            texts = batch.column(self.text_field)
            keep = pc.fill_null(pc.greater(pc.utf8_length(pc.utf8_trim_whitespace(texts)), 0),
                                False).to_pylist()
            id_values = (batch.column(self.id_column).to_pylist() if self.id_column
                         else [None] * len(keep))
            for offset, (ok, value) in enumerate(zip(keep, id_values)):
                if not ok:
                    continue
                row = start + offset
                rows.append(row)
                ids.append(str(value) if value is not None and str(value).strip() else
                           f"row-{row}")
            start += len(keep)
        self.skipped_blank = start - len(rows)
        return rows, ids

    def _load(self, index: int) -> tuple[str, dict[str, Any]]:
        row = self.rows[index]
        entry = self.dataset[row]
        skip = {self.text_field, *([self.id_column] if self.id_column else [])}
        return entry[self.text_field], dict(scalar_meta(entry, skip), row=row)
