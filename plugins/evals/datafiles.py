"""Reading a benchmark's public data from where the user put it: the location named by
``eval.data.<suite>`` (or the suite's ``data`` option), never the network.

A location is a file (``.jsonl``, ``.json``, ``.parquet``, ``.csv``, ``.tsv``), a folder of such
files (read recursively, in name order), a folder written by ``datasets``' ``save_to_disk``, or
``hf:<dataset id>[:<config>]``, a dataset already in the local Hugging Face ``datasets`` cache,
loaded with the hub switched off. Rows come back as plain dicts in the dataset's own column
names; each suite maps them. Suites that read data files (``aime``, ``gpqa-diamond``, and
plugins' own) share this module: see docs/eval.md, "Writing a suite".
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spade_core.errors import ConfigError

#: File endings read as tables.
SUFFIXES = (".jsonl", ".json", ".parquet", ".csv", ".tsv")
_SAVED_MARKERS = ("dataset_dict.json", "state.json")
_PREFERRED_SPLITS = ("train", "test", "validation")


@dataclass(frozen=True)
class DataSource:
    """What a suite reads and where a user gets it (for the error messages)."""

    #: The suite's registered name (``eval.data.<suite>``).
    suite: str
    #: What the data is, e.g. "the AIME problems and answers".
    what: str
    #: Where to get it, e.g. "the Hugging Face dataset Idavidrein/gpqa (gated)".
    where: str


@dataclass(frozen=True)
class Row:
    """One row of a dataset, with the location it came from (a file path or ``hf:ID``)."""

    origin: str
    values: dict[str, Any]


def read_rows(location: str | Sequence[str] | None, source: DataSource) -> list[Row]:
    """Every row of every location, in order. A ``ConfigError`` when no location is set, a path
    does not exist or holds no readable file, or a ``hf:`` dataset is not in the local cache;
    each names what is missing and where to get it."""
    if not location:
        raise ConfigError(
            f"the {source.suite} eval suite needs {source.what}, which ships on no package "
            f"index: set eval.data.{source.suite} (or --option {source.suite}.data=...) to a "
            "local file or folder of them, or to hf:DATASET[:CONFIG] for a dataset in the "
            f"local Hugging Face datasets cache. Get them from {source.where}. Nothing is "
            "downloaded at run time.")
    locations = [location] if isinstance(location, str) else list(location)
    rows: list[Row] = []
    for one in locations:
        if one.startswith("hf:"):
            rows.extend(_read_hf(one, source))
        else:
            rows.extend(_read_path(one, source))
    return rows


def _read_path(raw: str, source: DataSource) -> list[Row]:
    path = Path(raw).expanduser()
    if not path.exists():
        raise ConfigError(
            f"eval.data.{source.suite}: {path}: no such file or folder. The {source.suite} "
            f"suite reads {source.what} from there; get them from {source.where} and give "
            "the file's path (nothing is downloaded at run time).")
    if path.is_dir() and any((path / m).is_file() for m in _SAVED_MARKERS):
        return _from_datasets(_load_from_disk(path, source), str(path))
    files = ([path] if path.is_file() else
             sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES))
    if not files:
        raise ConfigError(
            f"eval.data.{source.suite}: {path} holds no data file "
            f"({', '.join(SUFFIXES)}); put {source.what} there (from {source.where}).")
    rows: list[Row] = []
    for file in files:
        rows.extend(Row(str(file), values) for values in _read_file(file, source))
    return rows


def _read_file(path: Path, source: DataSource) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    where = f"eval.data.{source.suite}: {path}"
    try:
        if suffix == ".jsonl":
            with path.open(encoding="utf-8") as handle:
                found = [json.loads(line) for line in handle if line.strip()]
        elif suffix == ".json":
            loaded = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(loaded, dict):
                loaded = next((v for v in loaded.values() if isinstance(v, list)), [loaded])
            found = loaded
        elif suffix in (".csv", ".tsv"):
            with path.open(encoding="utf-8-sig", newline="") as handle:
                found = list(csv.DictReader(handle, delimiter="\t" if suffix == ".tsv" else ","))
        elif suffix == ".parquet":
            import pyarrow.parquet as pq

            found = pq.read_table(path).to_pylist()
        else:
            raise ConfigError(f"{where}: cannot read {suffix or 'a file without an ending'}; "
                              f"give one of {', '.join(SUFFIXES)}")
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - json, csv and pyarrow raise many types
        raise ConfigError(f"{where}: unreadable ({type(exc).__name__}: {str(exc)[:300]})"
                          ) from None
    if not isinstance(found, list) or not all(isinstance(r, dict) for r in found):
        raise ConfigError(f"{where}: expected rows (objects with named fields)")
    return found


@contextmanager
def _offline() -> Iterator[Any]:
    """``datasets`` with the hub switched off for the duration (environment and the flags it
    read at import), restored afterwards."""
    names = ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE")
    saved_env = {n: os.environ.get(n) for n in names}
    os.environ.update({n: "1" for n in names})
    import datasets
    import huggingface_hub.constants as hub

    saved = (datasets.config.HF_DATASETS_OFFLINE, datasets.config.HF_HUB_OFFLINE,
             hub.HF_HUB_OFFLINE)
    datasets.config.HF_DATASETS_OFFLINE = datasets.config.HF_HUB_OFFLINE = True
    hub.HF_HUB_OFFLINE = True
    try:
        yield datasets
    finally:
        (datasets.config.HF_DATASETS_OFFLINE, datasets.config.HF_HUB_OFFLINE,
         hub.HF_HUB_OFFLINE) = saved
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _read_hf(spec: str, source: DataSource) -> list[Row]:
    dataset_id, _, config = spec[len("hf:"):].partition(":")
    if not dataset_id:
        raise ConfigError(f"eval.data.{source.suite}: {spec!r}: write hf:DATASET[:CONFIG]")
    with _offline() as datasets:
        try:
            loaded = datasets.load_dataset(dataset_id, config or None)
        except Exception as exc:  # noqa: BLE001 - offline misses raise several types
            cache = datasets.config.HF_DATASETS_CACHE
            raise ConfigError(
                f"eval.data.{source.suite}: {spec}: not in the local datasets cache ({cache}); "
                "nothing is downloaded at run time. On a machine with network run "
                f"datasets.load_dataset({dataset_id!r}{', ' + repr(config) if config else ''}) "
                f"with the same cache, or give a local file of {source.what} (from "
                f"{source.where}). ({type(exc).__name__}: {str(exc)[:200]})") from None
    return _from_datasets(loaded, spec)


def _load_from_disk(path: Path, source: DataSource) -> Any:
    with _offline() as datasets:
        try:
            return datasets.load_from_disk(str(path))
        except Exception as exc:  # noqa: BLE001
            raise ConfigError(f"eval.data.{source.suite}: {path}: datasets could not load it "
                              f"({type(exc).__name__}: {str(exc)[:300]})") from None


def _from_datasets(loaded: Any, origin: str) -> list[Row]:
    """Rows of a ``Dataset``, or of one split of a ``DatasetDict`` (``train``, else ``test``,
    else ``validation``, else the first)."""
    if isinstance(loaded, dict):  # a DatasetDict
        splits = list(loaded.keys())
        split = next((s for s in _PREFERRED_SPLITS if s in splits), splits[0])
        loaded = loaded[split]
    return [Row(origin, dict(values)) for values in loaded]


def first_field(values: dict[str, Any], names: Sequence[str]) -> Any:
    """The value of the first of ``names`` present (and not empty) in ``values``, else ``None``."""
    for name in names:
        value = values.get(name)
        if value is not None and value != "":
            return value
    return None
