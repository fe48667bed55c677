"""Model specs resolved to a loadable directory, and a bad one named in a clear error."""

from __future__ import annotations

import pytest

from plugins.backends.errors import ModelSourceError
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
