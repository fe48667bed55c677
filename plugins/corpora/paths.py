"""Where a sampler's ``path`` option points: the bundled corpus or a local path."""

from __future__ import annotations

from pathlib import Path

#: The grounding corpus shipped with spade-rl, used by the ``jsonl`` sampler when no path is given.
BUNDLED_CORPUS = Path(__file__).resolve().parent / "data" / "grounding.jsonl"
BUNDLED_NAME = "bundled:grounding"


def resolve_path(path: str | None, *, default: Path | None = None, what: str = "corpus") -> Path:
    """``path`` made absolute against the current working directory (``~`` expanded).

    ``None`` or ``"bundled:grounding"`` give ``default`` (the bundled corpus) when there is one.
    """
    if path is None or path == BUNDLED_NAME:
        if default is None:
            raise _config_error(f"corpus.options.path: the {what} sampler needs a path "
                                "(a local file or folder).")
        return default
    if path.startswith("bundled:"):
        raise _config_error(f"corpus.options.path: unknown bundled corpus {path!r}; the only one "
                            f"is {BUNDLED_NAME!r}.")
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = Path.cwd() / resolved
    return resolved


def _config_error(message: str) -> Exception:
    from spade_core.errors import ConfigError

    return ConfigError(message)
