"""A vLLM worker extension that loads new weights from a safetensors file, for the ``vllm-server``
backend.

A vLLM server started with ``--worker-extension-cls plugins.backends.vllm_worker.WeightLoader``
mixes this class into each of its workers; the trainer writes its weights to a file both processes
can read (``/dev/shm`` on one machine) and calls :meth:`WeightLoader.spade_load_weights` through
the server's dev-mode ``POST /collective_rpc`` endpoint (``VLLM_SERVER_DEV_MODE=1``). That endpoint
passes only JSON arguments, so the weights themselves travel as a file, not in the request.

This module must stay importable by the server process without the rest of spade-rl's heavy
imports: it needs only ``safetensors`` and the worker it is mixed into.
"""

from __future__ import annotations

from typing import Any

#: The qualified name to give ``--worker-extension-cls``.
EXTENSION = "plugins.backends.vllm_worker.WeightLoader"
#: The worker method ``/collective_rpc`` calls.
LOAD_METHOD = "spade_load_weights"


class WeightLoader:
    """Mixed into vLLM's worker class (so ``self`` is the worker): method names carry a ``spade_``
    prefix because vLLM refuses an extension whose attributes clash with the worker's own."""

    def spade_load_weights(self, path: str) -> dict[str, Any]:
        """Load every tensor of the safetensors file at ``path`` (Hugging Face parameter names)
        into the model in place and return ``{"loaded": count}``.

        Uses the worker's own ``reload_weights`` (vLLM's in-place reload, which also re-applies
        any post-load processing of the weights) where this vLLM has it, else the model's
        ``load_weights``.
        """
        from safetensors.torch import load_file

        weights = list(load_file(path).items())
        reload = getattr(self, "reload_weights", None)
        if reload is not None:
            reload(weights_iterator=weights)
        else:  # older vLLM: load straight into the module
            self.model_runner.get_model().load_weights(weights)  # type: ignore[attr-defined]
        return {"loaded": len(weights)}
