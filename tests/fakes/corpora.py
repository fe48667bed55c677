"""A small numbered JSONL corpus for the corpus-sampler tests, and the ids of drawn documents."""

from __future__ import annotations

import json
from pathlib import Path

N_DOCS = 12


def write_numbered_corpus(path: Path) -> Path:
    """``N_DOCS`` documents ``d0``.. ``d11`` with the text "document number i"."""
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"document number {i}"}) + "\n"
                            for i in range(N_DOCS)))
    return path


def ids(docs: list) -> list[str]:
    return [d.id for d in docs]
