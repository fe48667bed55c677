"""BFCL's own AST checker (``bfcl_eval.eval_checker.ast_eval.ast_checker``), importable offline.

``bfcl-eval`` is installed with ``--no-deps`` (its pins would downgrade numpy and faiss), and the
checker module imports ``bfcl_eval.constants.model_config``, which imports every API SDK's model
handler (anthropic, openai, ...). The checker only reads that table to learn whether a model's
API turned dots in function names into underscores; our replies keep the names as given. So when
the real table cannot be imported, the checker is imported against a stand-in table that says
"names unchanged" for every model, and the stand-in is removed again afterwards. Everything else
(type checks, value matching against the possible answers, order-free parallel matching) is
BFCL's code, unchanged.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from functools import cache
from typing import Any

from spade_core.errors import ConfigError

INSTALL_HINT = "pip install --no-deps bfcl-eval==2026.3.23"
_TABLE = "bfcl_eval.constants.model_config"
_CHECKER = "bfcl_eval.eval_checker.ast_eval.ast_checker"


class _NamesUnchanged:
    underscore_to_dot = False


class _AnyModel(dict):
    def __missing__(self, key: str) -> _NamesUnchanged:
        return _NamesUnchanged()


@cache
def checker() -> types.ModuleType:
    """BFCL's ``ast_checker`` module; a ``ConfigError`` with the install line when bfcl-eval is
    missing."""
    if importlib.util.find_spec("bfcl_eval") is None:
        raise ConfigError(f"the bfcl eval suite needs the bfcl-eval package: {INSTALL_HINT} "
                          "(--no-deps: its pins would downgrade numpy and faiss)")
    try:
        return importlib.import_module(_CHECKER)
    except ImportError:
        sys.modules.pop(_CHECKER, None)
    stand_in = types.ModuleType(_TABLE)
    stand_in.MODEL_CONFIG_MAPPING = _AnyModel()  # type: ignore[attr-defined]
    previous = sys.modules.get(_TABLE)
    sys.modules[_TABLE] = stand_in
    try:
        return importlib.import_module(_CHECKER)
    finally:
        if previous is None:
            sys.modules.pop(_TABLE, None)
        else:
            sys.modules[_TABLE] = previous


def check(functions: list[dict[str, Any]], calls: list[dict[str, dict[str, Any]]],
          possible_answer: list[dict[str, Any]], category: str) -> dict[str, Any]:
    """BFCL's verdict (``{"valid": bool, "error": [...], ...}``) for decoded ``calls``
    (``[{name: {param: value}}]``) against ``possible_answer`` of a Python ``category``."""
    module = checker()
    language = importlib.import_module("bfcl_eval.constants.enums").Language.PYTHON
    return module.ast_checker(functions, calls, possible_answer, language, category, "spade")
