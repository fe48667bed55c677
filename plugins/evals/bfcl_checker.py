"""Where BFCL's code runs: its AST checker as the ``bfcl`` suite's scorer
(``plugins/evals/preludes/bfcl_scorer.py``) and its data and constants read by the suite's
loader (``preludes/bfcl_data.py``), both trusted source run in sandbox workers on the bfcl
environment (``spade suites install bfcl``: bfcl-eval pins numpy 1.26 and faiss 1.11), never in
the host process."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from spade_core.eval.sandboxed_data import load_once, loader_family
from spade_core.eval.sandboxed_scoring import ScorerFamily
from spade_core.interfaces import Sandbox

SCORER_SOURCE = "bfcl_scorer.py"


def _source(name: str) -> str:
    return resources.files("plugins.evals.preludes").joinpath(name).read_text(encoding="utf-8")


@cache
def scorer_family() -> ScorerFamily:
    """The sandbox scorer that runs BFCL's checker on a request's decoded calls."""
    from plugins.evals.preludes import bfcl_scorer

    return ScorerFamily("bfcl", _source(SCORER_SOURCE), bfcl_scorer.PRELOAD)


@cache
def data_family() -> ScorerFamily:
    """The loader of BFCL's data files and constants."""
    return loader_family("bfcl", _source("bfcl_data.py"))


class BfclData:
    """bfcl-eval's data, read in a loader worker of ``sandbox`` (on the bfcl environment), each
    request once per process."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    def _ask(self, request: dict[str, Any]) -> Any:
        return load_once(self.sandbox, data_family(), [request])[0]

    def read(self, relative: str) -> list[dict[str, Any]]:
        """The records of ``bfcl_eval/data/<relative>`` (JSON lines)."""
        return self._ask({"op": "read", "path": relative})

    def constants(self) -> dict[str, Any]:
        """``step_limit`` (BFCL's ``MAXIMUM_STEP_LIMIT``, 20 in 2026.3.23),
        ``additional_prompt`` (the user message that brings held-out functions, ``miss_func``),
        ``func_doc_files`` and ``class_modules`` (each simulator class's function-document file
        and module)."""
        return self._ask({"op": "constants"})

    def signatures(self, classes: list[str]) -> dict[str, dict[str, list[str]]]:
        """Each simulator class's methods and their parameter names (``self`` left out)."""
        return self._ask({"op": "signatures", "classes": sorted(classes)})

    def shown(self, entries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        """Each entry's function documents as BFCL shows them to a model (a language hint in
        each description; for Java and JavaScript every parameter typed as a string)."""
        return self._ask({"op": "shown", "entries": entries}) if entries else []
