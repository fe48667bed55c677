"""BFCL's data and constants for the host, read inside a sandbox worker on the bfcl environment.

Trusted loader source of the ``bfcl`` suite (``spade_core.eval.sandboxed_data``). Requests:

- ``{"op": "read", "path"}``: the records of a JSON-lines file under ``bfcl_eval/data/``;
- ``{"op": "constants"}``: BFCL's per-turn step limit, the user message that brings held-out
  functions, each simulator class's function-document file and module;
- ``{"op": "signatures", "classes"}``: each simulator class's method names and their parameter
  names (to name a ground truth's positional arguments);
- ``{"op": "shown", "entries"}``: each entry's function documents as BFCL shows them to a model
  (``add_language_specific_hint_to_function_doc``).
"""

import copy as _copy
import importlib as _importlib
import inspect as _inspect
import json as _json

__all__ = list(globals().get("__all__", []))

_PROMPTS = "bfcl_eval.constants.default_prompts"
_BACKEND = "bfcl_eval.constants.executable_backend_config"


def _read(relative):
    resources = _importlib.import_module("importlib.resources")
    text = (resources.files("bfcl_eval") / "data" / relative).read_text(encoding="utf-8")
    return [_json.loads(line) for line in text.splitlines() if line.strip()]


def _constants():
    prompts = _importlib.import_module(_PROMPTS)
    config = _importlib.import_module(_BACKEND)
    return {"step_limit": int(prompts.MAXIMUM_STEP_LIMIT),
            "additional_prompt": str(prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC),
            "func_doc_files": dict(config.MULTI_TURN_FUNC_DOC_FILE_MAPPING),
            "class_modules": dict(config.CLASS_FILE_PATH_MAPPING)}


def _signatures(classes):
    config = _importlib.import_module(_BACKEND)
    found = {}
    for name in classes:
        if name not in config.CLASS_FILE_PATH_MAPPING:
            raise ValueError(f"bfcl multi-turn: unknown simulator class {name!r}")
        cls = getattr(_importlib.import_module(config.CLASS_FILE_PATH_MAPPING[name]), name)
        found[name] = {method: [p for p in _inspect.signature(function).parameters
                                if p != "self"]
                       for method, function in _inspect.getmembers(cls, _inspect.isfunction)}
    return found


def _writable_root():
    """bfcl-eval makes result, score and lock folders under its project root when
    ``bfcl_eval.utils`` is imported (by default inside site-packages, read-only in a worker):
    the root is this worker's scratch folder, or a new temporary one."""
    os = _importlib.import_module("os")
    if "BFCL_PROJECT_ROOT" not in os.environ:
        here = os.getcwd()
        os.environ["BFCL_PROJECT_ROOT"] = here if os.access(here, os.W_OK) else \
            _importlib.import_module("tempfile").mkdtemp(prefix="spade-bfcl-")


def _shown(entries):
    _writable_root()
    utils = _importlib.import_module("bfcl_eval.utils")
    return [utils.add_language_specific_hint_to_function_doc([_copy.deepcopy(e)])[0]["function"]
            for e in entries]


def load_request(request):
    op = request.get("op")
    if op == "read":
        return _read(str(request["path"]))
    if op == "constants":
        return _constants()
    if op == "signatures":
        return _signatures([str(c) for c in request["classes"]])
    if op == "shown":
        return _shown(request["entries"])
    raise ValueError(f"unknown request {op!r}")
