"""The converted-model cache: reused without reconverting, atomic under killed and concurrent
builders, and a full GGUF conversion into an empty cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fakes.bundled_model import bundled_model

from plugins.backends import cache, model_source
from plugins.backends.model_source import DEFAULT_MODEL, resolve_model
from fakes.cli import ROOT

_BUILDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from plugins.backends.cache import build_once

    entry, counter, delay = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
    def build(tmp):
        with open(counter, "a") as f:
            f.write("built\\n")
        (tmp / "weights.bin").write_bytes(b"x" * 1000)
        time.sleep(delay)
        (tmp / "done.txt").write_text("ok")
        return {"delay": delay}
    path, built = build_once(entry, build)
    print(path, built)
""")


def _start_builder(entry: Path, counter: Path, delay: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", _BUILDER, str(entry), str(counter), str(delay)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_second_load_reuses_the_cache(monkeypatch):
    first = bundled_model()
    assert cache.is_complete(first.path)
    assert (first.path / "model.safetensors").is_file() and (first.path / "tokenizer.json").is_file()

    def no_conversion(*args, **kwargs):
        raise AssertionError("the cached model was converted again")

    monkeypatch.setattr(model_source, "convert_gguf", no_conversion)
    again = resolve_model(DEFAULT_MODEL)
    assert again.path == first.path and again.converted is False


def test_killed_builder_leaves_no_entry_and_next_builder_recovers(tmp_path):
    entry, counter = tmp_path / "models" / "m", tmp_path / "count.txt"
    proc = _start_builder(entry, counter, delay=60)
    deadline = time.monotonic() + 30
    while not list(entry.parent.glob(".tmp-m-*/weights.bin")):
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert not entry.exists() and not cache.is_complete(entry)
    assert list(entry.parent.glob(".tmp-m-*"))  # the killed builder's half-written directory

    path, built = cache.build_once(entry, lambda tmp: (tmp / "done.txt").write_text("ok") and {})
    assert built and path == entry and (entry / "done.txt").read_text() == "ok"
    assert not list(entry.parent.glob(".tmp-m-*"))  # stale temp removed under the lock
    assert cache.build_once(entry, lambda tmp: pytest.fail("rebuilt")) == (entry, False)


def test_concurrent_builders_build_once(tmp_path):
    entry, counter = tmp_path / "models" / "m", tmp_path / "count.txt"
    procs = [_start_builder(entry, counter, delay=1.0) for _ in range(3)]
    outputs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    assert counter.read_text().count("built") == 1
    assert sorted(out.split()[1] for out, _ in outputs) == ["False", "False", "True"]
    assert cache.read_marker(entry)["delay"] == 1.0


def test_failed_build_leaves_nothing(tmp_path):
    entry = tmp_path / "models" / "m"

    def failing(tmp):
        (tmp / "partial").write_text("x")
        raise RuntimeError("conversion failed")

    with pytest.raises(RuntimeError, match="conversion failed"):
        cache.build_once(entry, failing)
    assert not entry.exists() and not list(entry.parent.glob(".tmp-*"))


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SPADE_CACHE_DIR", str(tmp_path / "c"))
    assert cache.cache_root() == tmp_path / "c"
    monkeypatch.delenv("SPADE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_root() == tmp_path / "xdg" / "spade-rl"


@pytest.mark.slow
def test_full_conversion_into_an_empty_cache(monkeypatch, tmp_path):
    """Converts the bundled GGUF from scratch (~20-40 s) and checks the result is a plain fp32
    checkpoint with the same weights as the shared cached copy."""
    from safetensors import safe_open

    from plugins.backends import model_source

    name = DEFAULT_MODEL.removeprefix("bundled:")
    gguf = model_source.bundled_gguf_path(name)  # where `spade models fetch` put it
    monkeypatch.setenv("SPADE_CACHE_DIR", str(tmp_path))
    fetched = model_source._bundled(name).cached  # the empty cache's place for it
    fetched.parent.mkdir(parents=True)
    fetched.symlink_to(gguf)
    fresh = resolve_model(DEFAULT_MODEL)
    assert fresh.converted and fresh.path.parent == tmp_path / "models"
    marker = cache.read_marker(fresh.path)
    assert marker["dtype"] == "float32" and marker["source"].endswith(".gguf")
    config = (fresh.path / "config.json").read_text()
    assert "quantization_config" not in config
    reference = bundled_model().path / "model.safetensors"
    with safe_open(fresh.path / "model.safetensors", "pt") as new, safe_open(reference, "pt") as old:
        assert sorted(new.keys()) == sorted(old.keys())
        name = "model.layers.0.self_attn.q_proj.weight"
        assert str(new.get_tensor(name).dtype) == "torch.float32"
        assert (new.get_tensor(name) == old.get_tensor(name)).all()
