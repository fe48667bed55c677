"""The ``jsonl`` sampler: one JSON object per line, text in ``text`` or ``orig_doc`` (the SPADE
corpus format) or a configured field.

The file is scanned once when the sampler is built, so that a broken line or an entry without text
is reported before the run starts; only byte offsets and ids are kept, and each drawn document is
read back from disk, so corpora far larger than memory work.
"""

from __future__ import annotations

import json
import logging
from array import array
from typing import Any

from plugins.corpora.sampler_base import IndexedSampler
from plugins.corpora.options import JsonlOptions
from plugins.corpora.paths import BUNDLED_CORPUS, resolve_path
from spade_core.errors import ConfigError

LOG = logging.getLogger(__name__)

#: Fields tried, in order, when ``text_field`` is not set.
DEFAULT_TEXT_FIELDS: tuple[str, ...] = ("text", "orig_doc")


def pick_text(entry: dict[str, Any], text_field: str | list[str] | None, where: str) -> str:
    """The text of ``entry``, or a :class:`ConfigError` saying which field is missing or wrong.

    ``text_field``: one field; a list, a precedence (the first field holding non-blank text
    wins, so ``[orig_doc, text]`` falls back to ``text`` when ``orig_doc`` is empty, as the
    reference); ``None``: ``text`` if present, else ``orig_doc``."""
    if isinstance(text_field, list):
        found = False
        for name in text_field:
            value = entry.get(name)
            if name in entry:
                found = True
                if not isinstance(value, str):
                    raise ConfigError(f"{where}: field {name!r} must be a string, got "
                                      f"{type(value).__name__}.")
                if value.strip():
                    return value
        if found:
            return ""
        fields: tuple[str, ...] = tuple(text_field)
    else:
        fields = (text_field,) if text_field else DEFAULT_TEXT_FIELDS
        for name in fields:
            if name in entry:
                value = entry[name]
                if not isinstance(value, str):
                    raise ConfigError(f"{where}: field {name!r} must be a string, got "
                                      f"{type(value).__name__}.")
                return value
    present = ", ".join(sorted(map(str, entry))[:12]) or "none"
    wanted = " or ".join(repr(f) for f in fields)
    fix = ("set corpus.options.text_field to the field that holds the document text"
           if not text_field else "fix corpus.options.text_field or the entry")
    raise ConfigError(f"{where}: line has no {wanted} field (fields: {present}); {fix}.")


def text_fields(text_field: str | list[str] | None) -> tuple[str, ...]:
    """Every field ``text_field`` may take the text from (left out of the metadata)."""
    if isinstance(text_field, list):
        return tuple(text_field)
    return (text_field,) if text_field else DEFAULT_TEXT_FIELDS


def _doc_id(entry: dict[str, Any], id_field: str, fallback: str) -> str:
    value = entry.get(id_field)
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
        return str(value)
    return fallback


def scalar_meta(entry: dict[str, Any], skip: set[str]) -> dict[str, Any]:
    """The entry's scalar fields (e.g. ``topic``) other than the text and id, for logs."""
    return {k: v for k, v in entry.items()
            if k not in skip and isinstance(v, (str, int, float, bool)) and not (
                isinstance(v, str) and len(v) > 200)}


class JsonlSampler(IndexedSampler):
    """Documents from a JSON Lines file; blank lines and entries with blank text are skipped;
    with ``on_bad_line: skip`` broken lines too, counted in :attr:`skipped_lines`."""

    kind = "jsonl"

    def __init__(self, options: JsonlOptions, seed: int) -> None:
        self.options = options
        self.path = resolve_path(options.path, default=BUNDLED_CORPUS, what="jsonl")
        if not self.path.exists():
            raise ConfigError(f"corpus.options.path: {self.path}: no such file; give the path of "
                              "a .jsonl file (relative paths start at the current directory).")
        if not self.path.is_file():
            raise ConfigError(f"corpus.options.path: {self.path}: not a file; the jsonl sampler "
                              "reads one JSON Lines file (use the 'folder' sampler for a folder).")
        self.offsets = array("q")
        self.lines = array("q")
        self.skipped_blank = 0
        #: Broken lines left out under ``on_bad_line: skip`` (always 0 under ``error``).
        self.skipped_lines = 0
        ids = self._scan()
        if self.skipped_lines:
            LOG.warning("%s: skipped %d bad line(s) (corpus.options.on_bad_line: skip); "
                        "%d documents loaded", self.path, self.skipped_lines, len(ids))
        super().__init__(source=str(self.path), ids=ids, seed=seed,
                         sampling=options.sampling, max_words=options.max_words,
                         truncation_note=options.truncation_note)

    def _parse(self, raw: bytes, lineno: int) -> dict[str, Any] | None:
        where = f"{self.path}:{lineno}"
        try:
            line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start}).") \
                from None
        if not line.strip():
            return None
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); each "
                              "line must be one JSON object.") from None
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: expected a JSON object, got {type(entry).__name__}.")
        return entry

    def _scan(self) -> list[str]:
        ids: list[str] = []
        offset = 0
        with self.path.open("rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                start, offset = offset, offset + len(raw)
                try:
                    entry = self._parse(raw, lineno)
                    if entry is None:
                        continue
                    text = pick_text(entry, self.options.text_field, f"{self.path}:{lineno}")
                except ConfigError:
                    if self.options.on_bad_line == "error":
                        raise
                    self.skipped_lines += 1
                    continue
                if not text.strip():
                    self.skipped_blank += 1
                    continue
                self.offsets.append(start)
                self.lines.append(lineno)
                ids.append(_doc_id(entry, self.options.id_field, f"{self.path.name}:{lineno}"))
        return ids

    def _load(self, index: int) -> tuple[str, dict[str, Any]]:
        lineno = self.lines[index]
        with self.path.open("rb") as fh:
            fh.seek(self.offsets[index])
            raw = fh.readline()
        try:
            entry = self._parse(raw, lineno)
            if entry is None:
                raise ConfigError(f"{self.path}:{lineno}: the line is blank now")
            text = pick_text(entry, self.options.text_field, f"{self.path}:{lineno}")
        except ConfigError as exc:
            raise ConfigError(f"{exc} The file changed after the sampler read it; restart the "
                              "run with the file left unchanged.") from None
        skip = {self.options.id_field, *text_fields(self.options.text_field)}
        return text, dict(scalar_meta(entry, skip), line=lineno)

    def state_dict(self) -> dict[str, Any]:
        """The base state plus ``skipped_lines`` (for the metrics; not checked on resume)."""
        return {**super().state_dict(), "skipped_lines": self.skipped_lines}
