"""spade_core/cli/doctor_cmd.py: ``spade doctor`` reports library versions and the model without
importing the heavy libraries."""

from __future__ import annotations

import sys

from fakes.cli import run_spade
from fakes.commands import imported_after


def test_doctor_reports_library_versions_without_importing_them():
    import json

    from spade_core.cli.doctor_cmd import LIBRARIES, NOT_INSTALLED, versions

    found = versions()
    assert found["python"] == "{}.{}.{}".format(*sys.version_info[:3])
    assert set(LIBRARIES) <= set(found) and "bubblewrap" in found
    assert found["vllm"] in (NOT_INSTALLED,) or found["vllm"][0].isdigit()
    from importlib import metadata
    assert found["transformers"] == metadata.version("transformers")
    assert {"accelerate", "deepspeed", "datasets", "reasoning-gym"} <= set(found)
    result = run_spade("doctor", "--json", timeout=120)
    report = json.loads(result.stdout)
    assert report["versions"] == found
    assert report["model"] == {"spec": "bundled:smollm2-135m", "backend": "transformers",
                               "found": True, "problems": []}
    absent = run_spade("doctor", "--model", "/no/such/model", timeout=120)
    assert absent.returncode == 1
    assert "model /no/such/model: NOT FOUND: model.path: model '/no/such/model'" in absent.stdout
    text = run_spade("doctor", timeout=120).stdout
    assert text.startswith("versions: python ") and f"transformers {found['transformers']}" in text
    heavy = {"torch", "transformers", "trl", "vllm", "faiss", "peft", "ray"}
    assert imported_after(["doctor", "--json"]) & heavy == set()
