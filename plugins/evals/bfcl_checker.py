"""Where BFCL's AST checker runs: in a sandbox worker, as the ``bfcl`` suite's scorer
(``plugins/evals/preludes/bfcl_scorer.py``, trusted source), never in the host process."""

from __future__ import annotations

import importlib.util
from functools import cache
from importlib import resources

from spade_core.errors import ConfigError
from spade_core.eval.sandboxed_scoring import ScorerFamily

INSTALL_HINT = "pip install --no-deps bfcl-eval==2026.3.23"
SCORER_SOURCE = "bfcl_scorer.py"


def require_bfcl() -> None:
    """A ``ConfigError`` with the install line when bfcl-eval is missing."""
    if importlib.util.find_spec("bfcl_eval") is None:
        raise ConfigError(f"the bfcl eval suite needs the bfcl-eval package: {INSTALL_HINT} "
                          "(--no-deps: its pins would downgrade numpy and faiss)")


@cache
def scorer_family() -> ScorerFamily:
    """The sandbox scorer that runs BFCL's checker on a request's decoded calls."""
    from plugins.evals.preludes import bfcl_scorer

    source = resources.files("plugins.evals.preludes").joinpath(SCORER_SOURCE).read_text(
        encoding="utf-8")
    return ScorerFamily("bfcl", source, bfcl_scorer.PRELOAD)
