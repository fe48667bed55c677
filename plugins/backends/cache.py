"""Atomic on-disk cache of built artefacts (converted models), safe against concurrent builders
and builders killed half-way.

An entry is built in a temporary sibling directory and renamed into place only when complete, so a
reader never sees a half-written entry. A per-entry lock file (``fcntl.flock``) makes concurrent
builders wait for the first one instead of converting the same model twice; temporary directories
left by killed builders are removed by the next builder that holds the lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

CACHE_ENV = "SPADE_CACHE_DIR"
#: Written last into a complete entry; an entry without it is not trusted.
MARKER = "spade-cache.json"
_TMP_PREFIX = ".tmp-"


def cache_root() -> Path:
    """The user's spade-rl cache: ``$SPADE_CACHE_DIR``, else ``$XDG_CACHE_HOME/spade-rl``, else
    ``~/.cache/spade-rl``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "spade-rl"


def is_complete(entry: Path) -> bool:
    """Whether ``entry`` is a finished cache entry (its marker file exists)."""
    return (entry / MARKER).is_file()


def read_marker(entry: Path) -> dict[str, Any]:
    """The metadata the builder stored with the entry."""
    return json.loads((entry / MARKER).read_text())


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock, the atomic rename still protects readers
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _remove_stale_temps(entry: Path) -> None:
    for stale in entry.parent.glob(f"{_TMP_PREFIX}{entry.name}-*"):
        shutil.rmtree(stale, ignore_errors=True)


def build_once(entry: Path, build: Callable[[Path], dict[str, Any]]) -> tuple[Path, bool]:
    """Return ``entry``, building it first with ``build(tmp_dir)`` unless it is already complete.

    ``build`` writes the artefact's files into the empty directory it is given and returns metadata
    to store in the marker. Returns ``(entry, built)`` where ``built`` says whether this call built
    it (False when it was cached, or another process finished it while this one waited).
    """
    if is_complete(entry):
        return entry, False
    lock = entry.parent / f".{entry.name}.lock"
    with _locked(lock):
        if is_complete(entry):
            return entry, False
        # Holding the lock, any temp dir for this entry belongs to a builder that died.
        _remove_stale_temps(entry)
        if entry.exists():  # an incomplete entry (should not happen with rename; be safe)
            shutil.rmtree(entry)
        tmp = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{entry.name}-", dir=entry.parent))
        try:
            started = time.monotonic()
            meta = dict(build(tmp))
            meta.setdefault("build_seconds", round(time.monotonic() - started, 2))
            (tmp / MARKER).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
            os.chmod(tmp, 0o755)  # mkdtemp makes it private; a finished entry is readable like any cache
            os.rename(tmp, entry)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return entry, True
