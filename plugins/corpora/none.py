"""The ``none`` corpus: no grounding documents (the reference's no-corpus ablation).

Every draw is an empty document; the designer strategies then ask for an environment from the
target skill's aim and ideas alone (``plugins.designer.prompt_parts.document_block``)."""

from __future__ import annotations

from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import CorpusSampler
from spade_core.records import Document

SOURCE = "none"


class NoCorpus(CorpusSampler):
    """Yields empty documents, numbered so that each proposal's document id is distinct."""

    kind = "none"

    def __init__(self) -> None:
        self.drawn = 0

    def sample(self, n: int) -> list[Document]:
        if n < 0:
            raise ValueError(f"sample(n): n must be >= 0, got {n}")
        docs = [Document(id=f"none:{self.drawn + i}", text="", source=SOURCE) for i in range(n)]
        self.drawn += n
        return docs

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": self.kind, "drawn": self.drawn}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if not isinstance(state, dict) or state.get("sampler") != self.kind \
                or not isinstance(state.get("drawn"), int) or state["drawn"] < 0:
            raise ConfigError(f"corpus none: cannot resume from sampler state {state!r:.200}; "
                              "resume with the corpus the run started with.")
        self.drawn = state["drawn"]
