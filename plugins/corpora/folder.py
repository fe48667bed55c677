"""The ``folder`` sampler: every text or markdown file under a folder is one document.

Files are found recursively and sorted by their path relative to the folder, so the same folder
gives the same document indices on every machine. Each file is read once when the sampler is built
(to report files that are not UTF-8 before the run starts) and again when drawn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugins.corpora.sampler_base import IndexedSampler
from plugins.corpora.options import FolderOptions
from plugins.corpora.paths import resolve_path
from spade_core.errors import ConfigError


def find_files(root: Path, extensions: list[str], include_hidden: bool) -> list[Path]:
    """Files under ``root`` whose name ends in one of ``extensions``, sorted by relative path."""
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if not include_hidden and any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and path.name.lower().endswith(tuple(extensions)):
            found.append(path)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def read_text(path: Path) -> str:
    """The file's text; a :class:`ConfigError` naming the file when it is not UTF-8."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); convert "
                          "it or leave it out with corpus.options.extensions.") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}.") from None


class FolderSampler(IndexedSampler):
    """Documents from the files of a folder; empty or blank files are skipped."""

    kind = "folder"

    def __init__(self, options: FolderOptions, seed: int) -> None:
        self.options = options
        self.root = resolve_path(options.path, what="folder")
        if not self.root.exists():
            raise ConfigError(f"corpus.options.path: {self.root}: no such folder; give a folder "
                              "of .txt/.md files (relative paths start at the current directory).")
        if not self.root.is_dir():
            raise ConfigError(f"corpus.options.path: {self.root}: not a folder; the folder "
                              "sampler reads a folder of text files (use 'jsonl' for a .jsonl "
                              "file).")
        self.files: list[Path] = []
        self.skipped_blank = 0
        for path in find_files(self.root, options.extensions, options.include_hidden):
            if read_text(path).strip():
                self.files.append(path)
            else:
                self.skipped_blank += 1
        if not self.files:
            raise ConfigError(
                f"{self.root}: the corpus is empty: no non-blank files ending in "
                f"{', '.join(options.extensions)} under it"
                + ("" if options.include_hidden else " (hidden files and folders are skipped)")
                + "."
            )
        ids = [p.relative_to(self.root).as_posix() for p in self.files]
        super().__init__(source=str(self.root), ids=ids, seed=seed,
                         sampling=options.sampling, max_words=options.max_words,
                         truncation_note=options.truncation_note)

    def _load(self, index: int) -> tuple[str, dict[str, Any]]:
        path = self.files[index]
        return read_text(path), {"path": str(path)}
