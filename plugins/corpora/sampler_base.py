"""What every corpus sampler shares: the seeded draw order, resumable state and truncation.

A sampler knows its documents by index (0..size-1) and loads one on demand. The order of draws is
counter-based: draw ``k`` depends only on the seed, the sampling mode and ``k``, so the whole state
is one counter and a resumed sampler continues exactly the same sequence.
"""

from __future__ import annotations

import hashlib
import random
import re
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import CorpusSampler
from spade_core.records import Document

_WORD = re.compile(r"\S+")
_STATE_VERSION = 1


def truncate_words(text: str, max_words: int | None) -> tuple[str, int]:
    """Cut ``text`` after its ``max_words``-th whitespace-separated word, keeping the original
    spacing and line breaks before the cut. Returns the text and its full word count."""
    words = 0
    end = len(text)
    for match in _WORD.finditer(text):
        words += 1
        if max_words is not None and words == max_words:
            end = match.end()
    if max_words is None or words <= max_words:
        return text, words
    return text[:end], words


def fingerprint(ids: Sequence[str]) -> str:
    """Short hash of the ordered document ids, to notice a changed corpus on resume."""
    digest = hashlib.sha256()
    for doc_id in ids:
        digest.update(doc_id.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:16]


class IndexedSampler(CorpusSampler):
    """Base of the built-in samplers: draws indices, loads and truncates the documents."""

    #: Registered name, recorded in the state so a state is not loaded into another sampler kind.
    kind: str = ""

    def __init__(self, *, source: str, ids: list[str], seed: int, sampling: str,
                 max_words: int | None, truncation_note: bool = False) -> None:
        if not ids:
            raise ConfigError(f"{source}: the corpus is empty (no documents with text found).")
        self.source = source
        self.ids = ids
        self.seed = seed
        self.sampling = sampling
        self.max_words = max_words
        self.truncation_note = truncation_note
        self.drawn = 0
        self._fingerprint = fingerprint(ids)
        self._epoch_cache: tuple[int, list[int]] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @abstractmethod
    def _load(self, index: int) -> tuple[str, dict[str, Any]]:
        """The full text and the metadata of document ``index``."""

    def index_of_draw(self, k: int) -> int:
        """Index of the document that draw number ``k`` (from 0) returns."""
        n = len(self.ids)
        if self.sampling == "uniform":
            return random.Random(f"spade-corpus:uniform:{self.seed}:{k}").randrange(n)
        epoch, position = divmod(k, n)
        if self._epoch_cache is None or self._epoch_cache[0] != epoch:
            order = list(range(n))
            random.Random(f"spade-corpus:shuffle:{self.seed}:{epoch}").shuffle(order)
            self._epoch_cache = (epoch, order)
        return self._epoch_cache[1][position]

    def document(self, index: int) -> Document:
        """Document ``index``, truncated to ``max_words`` (with the reference's note line after
        a cut when ``truncation_note`` is on)."""
        text, meta = self._load(index)
        cut, words = truncate_words(text, self.max_words)
        truncated = len(cut) < len(text)
        if truncated and self.truncation_note:
            cut += f"\n[Document truncated at ~{self.max_words} words]"
        meta = dict(meta, index=index, words=words, truncated=truncated)
        return Document(id=self.ids[index], text=cut, source=self.source, meta=meta)

    def sample(self, n: int) -> list[Document]:
        """The next ``n`` documents of the seeded sequence."""
        if n < 0:
            raise ValueError(f"sample(n): n must be >= 0, got {n}")
        docs = [self.document(self.index_of_draw(self.drawn + i)) for i in range(n)]
        self.drawn += n
        return docs

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue the sequence: the draw counter and what it depends on."""
        return {
            "version": _STATE_VERSION, "sampler": self.kind, "seed": self.seed,
            "sampling": self.sampling, "drawn": self.drawn, "size": len(self.ids),
            "fingerprint": self._fingerprint,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state``; refuses a state from another sampler, seed, mode or corpus."""
        if not isinstance(state, dict) or not isinstance(state.get("drawn"), int):
            raise ConfigError(f"{self.source}: corpus sampler state must be a mapping with an "
                              f"integer 'drawn', got {state!r:.200}.")
        expected = self.state_dict()
        for key in ("sampler", "seed", "sampling", "size", "fingerprint"):
            if state.get(key) != expected[key]:
                what = ("the corpus changed since the checkpoint (different documents)"
                        if key in ("size", "fingerprint") else "the config changed")
                raise ConfigError(
                    f"{self.source}: cannot resume the corpus sampler: {key} is "
                    f"{state.get(key)!r} in the checkpoint but {expected[key]!r} now; {what}. "
                    "Resume with the same corpus and corpus options, or start a new run."
                )
        if state["drawn"] < 0:
            raise ConfigError(f"{self.source}: corpus sampler state has negative 'drawn'.")
        self.drawn = state["drawn"]
