"""The vLLM worker extension: loads every tensor of a safetensors file into the worker's model,
through vLLM's in-place reload where the worker has it, else the model's ``load_weights``; and
stays importable without the rest of spade-rl."""

from __future__ import annotations

import subprocess
import sys

import torch
from safetensors.torch import save_file

from plugins.backends.vllm_worker import EXTENSION, LOAD_METHOD, WeightLoader

WEIGHTS = {"model.norm.weight": torch.ones(3), "lm_head.weight": torch.arange(6.0).view(2, 3)}


def _received(weights) -> dict:
    return {name: tensor for name, tensor in weights}


def test_the_worker_reloads_the_files_weights_in_place(tmp_path):
    path = tmp_path / "w.safetensors"
    save_file(WEIGHTS, str(path))

    class Worker(WeightLoader):
        def reload_weights(self, weights_iterator):
            self.got = _received(weights_iterator)

    worker = Worker()
    assert getattr(worker, LOAD_METHOD)(str(path)) == {"loaded": 2}
    assert sorted(worker.got) == sorted(WEIGHTS)
    assert all(torch.equal(worker.got[n], t) for n, t in WEIGHTS.items())


def test_an_older_worker_loads_them_into_its_model(tmp_path):
    path = tmp_path / "w.safetensors"
    save_file(WEIGHTS, str(path))

    class Model:
        def load_weights(self, weights):
            self.got = _received(weights)

    model = Model()

    class Worker(WeightLoader):
        model_runner = type("Runner", (), {"get_model": staticmethod(lambda: model)})()

    assert Worker().spade_load_weights(str(path)) == {"loaded": 2}
    assert all(torch.equal(model.got[n], t) for n, t in WEIGHTS.items())


def test_the_extension_names_itself_and_imports_without_spade_core():
    assert EXTENSION == f"{WeightLoader.__module__}.{WeightLoader.__qualname__}"
    code = ("import sys, plugins.backends.vllm_worker\n"
            "print([m for m in sys.modules if m.startswith('spade_core') or m == 'torch'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
