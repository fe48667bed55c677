"""BFCL's own AST checker (``bfcl_eval.eval_checker.ast_eval.ast_checker``) as a sandbox scorer.

Trusted prelude source of the ``bfcl`` suite's scorer (``spade_core.eval.sandboxed_scoring``), run
in a sandbox worker on the bfcl environment after ``SCORER_BASE``. It defines
``score_request({"functions", "calls", "answer", "category", "language"})``: 1.0 when BFCL's
checker accepts the decoded calls. The checker is BFCL's code, unchanged, but third-party code
fed with the model's values, so it runs in the worker rather than in the host process.

The checker module imports ``bfcl_eval.constants.model_config``, which imports every API SDK's
model handler (installed in the bfcl environment, but slow to import and never used here). The
checker only reads that table to learn whether a model's API turned dots in function names into
underscores; our replies keep the names as given. So the checker is imported against
a stand-in table that says "names unchanged" for every model, and the stand-in is removed again
afterwards.
"""

import importlib as _importlib
import sys as _sys
import types as _types

__all__ = list(globals().get("__all__", []))

_TABLE = "bfcl_eval.constants.model_config"
_CHECKER = "bfcl_eval.eval_checker.ast_eval.ast_checker"
#: What the fork servers import before forking (everything the checker needs but the table).
PRELOAD = ("bfcl_eval.constants.enums", "bfcl_eval.constants.type_mappings",
           "bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter",
           "bfcl_eval.eval_checker.ast_eval.type_convertor.js_type_converter")


class _NamesUnchanged:
    underscore_to_dot = False


class _AnyModel(dict):
    def __missing__(self, key):
        return _NamesUnchanged()


def bfcl_checker():
    """BFCL's ``ast_checker`` module, imported once per process."""
    if _CHECKER in _sys.modules:
        return _sys.modules[_CHECKER]
    stand_in = _types.ModuleType(_TABLE)
    stand_in.MODEL_CONFIG_MAPPING = _AnyModel()
    previous = _sys.modules.get(_TABLE)
    _sys.modules[_TABLE] = stand_in
    try:
        return _importlib.import_module(_CHECKER)
    finally:
        if previous is None:
            _sys.modules.pop(_TABLE, None)
        else:
            _sys.modules[_TABLE] = previous


def check_calls(functions, calls, possible_answer, category, language="python"):
    """BFCL's verdict (``{"valid": bool, "error": [...], ...}``) for decoded ``calls``
    (``[{name: {param: value}}]``) against ``possible_answer`` of ``category``; ``language``
    (python, java, javascript) chooses BFCL's type checks and converters."""
    language = _importlib.import_module("bfcl_eval.constants.enums").Language(language)
    return bfcl_checker().ast_checker(functions, calls, possible_answer, language, category,
                                      "spade")


def score_request(request):
    """1.0 when BFCL's checker accepts ``request["calls"]``, else 0.0."""
    try:
        verdict = check_calls(request["functions"], request["calls"], request["answer"],
                              request["category"], request.get("language", "python"))
    except Exception:  # noqa: BLE001 - the checker choking on odd values is a failure
        return 0.0
    return 1.0 if verdict.get("valid") else 0.0
