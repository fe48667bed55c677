"""The openai backend against a local OpenAI-compatible server (a test fixture that runs our
transformers backend on the bundled model), plus its retry and error paths."""

from __future__ import annotations

import socket

import pytest
from fakes.openai_server import OpenAITestServer
from fakes.bundled_model import bundled_backend

from plugins.backends import options as backend_options
from plugins.backends import plugin as backends_plugin
from plugins.backends.generation_errors import GenerationError
from plugins.backends.openai_backend import OpenAIBackend
from spade_core.components import BuildContext
from spade_core.testing import check_component, load_test_plugins

CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": "Name a colour of the sky."}],
]


@pytest.fixture(scope="module")
def server():
    with OpenAITestServer(bundled_backend()) as srv:
        yield srv


@pytest.fixture
def fresh(server):
    server.fail_next.clear()
    server.api_key = None
    server.requests.clear()
    return server


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_matches_the_local_backend_greedy(fresh):
    client = OpenAIBackend(fresh.url, "smollm2-test", logprobs=True)
    remote = client.generate(CONVERSATIONS, max_new_tokens=10, temperature=0.0, seed=4)
    # the server generates one request at a time, so compare with unbatched local generation
    local = [bundled_backend().generate([c], max_new_tokens=10, temperature=0.0)[0]
             for c in CONVERSATIONS]
    assert [g.text for g in remote] == [g.text for g in local]
    assert [g.finish_reason for g in remote] == [g.finish_reason for g in local]
    for r, loc in zip(remote, local):
        assert r.prompt_ids is None and r.completion_ids is None
        assert r.logprobs == pytest.approx(loc.logprobs, abs=1e-3)
    bodies = sorted(fresh.requests, key=lambda b: b["seed"])
    assert [b["seed"] for b in bodies] == [4, 5] and all(b["max_tokens"] == 10 for b in bodies)
    client.close()


def test_model_name_comes_from_the_server_when_unset(fresh):
    client = OpenAIBackend(fresh.url)
    [g] = client.generate(CONVERSATIONS[:1], max_new_tokens=3, temperature=0.0)
    assert client.model == "smollm2-test" and g.text


def test_tools_reach_the_server_and_its_template(fresh):
    tool = {"type": "function", "function": {"name": "lookup_city", "description": "Find a city.",
                                             "parameters": {"type": "object", "properties": {}}}}
    client = OpenAIBackend(fresh.url, "smollm2-test")
    client.generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0, tools=[tool])
    assert fresh.requests[-1]["tools"] == [tool]


def test_top_p_top_k_and_template_kwargs_reach_the_server(fresh):
    """Sent only when given (OpenAI's own API refuses top_k and chat_template_kwargs), over
    extra_body; the test server samples with them, so top_k=1 is greedy at any temperature."""
    greedy = [bundled_backend().generate([c], max_new_tokens=8, temperature=0.0)[0].text
              for c in CONVERSATIONS]
    client = OpenAIBackend(fresh.url, "smollm2-test",
                           extra_body={"chat_template_kwargs": {"enable_thinking": True,
                                                                "custom": 1}})
    plain = client.generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0)
    assert plain[0].text and not {"top_p", "top_k"} & set(fresh.requests[-1])
    assert fresh.requests[-1]["chat_template_kwargs"] == {"enable_thinking": True, "custom": 1}
    fresh.requests.clear()
    gens = client.generate(CONVERSATIONS, max_new_tokens=8, temperature=1.5, seed=2, top_k=1,
                           top_p=0.95, chat_template_kwargs={"enable_thinking": False})
    assert [g.text for g in gens] == greedy
    for body in fresh.requests:
        assert body["top_k"] == 1 and body["top_p"] == 0.95
        assert body["chat_template_kwargs"] == {"enable_thinking": False, "custom": 1}
    with pytest.raises(GenerationError, match="top_p must be in"):
        client.generate(CONVERSATIONS, max_new_tokens=2, temperature=0.0, top_p=2.0)
    client.close()


def test_structured_tool_calls_become_protocol_text(monkeypatch):
    client = OpenAIBackend("http://127.0.0.1:9/v1", "m")
    reply = {"choices": [{"finish_reason": "tool_calls", "message": {"content": None, "tool_calls": [
        {"type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}]}}]}
    monkeypatch.setattr(client, "_post", lambda body: reply)  # fake server reply
    [g] = client.generate(CONVERSATIONS[:1], max_new_tokens=5, temperature=0.0)
    assert g.text == '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>'
    assert g.finish_reason == "stop"


def test_retries_transient_errors(fresh):
    fresh.fail_next[:] = [503, 429]
    client = OpenAIBackend(fresh.url, "smollm2-test", max_retries=2, backoff_s=0.01)
    [g] = client.generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0)
    assert g.text and len(fresh.requests) == 3


def test_gives_up_naming_the_url_and_status(fresh):
    fresh.fail_next[:] = [500] * 5
    client = OpenAIBackend(fresh.url, "smollm2-test", max_retries=1, backoff_s=0.01)
    with pytest.raises(GenerationError, match=r"/v1/chat/completions: giving up after 2 attempts"
                                              r".*HTTP 500"):
        client.generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0)


def test_client_errors_are_not_retried(fresh):
    client = OpenAIBackend(fresh.url, "no-such-model", max_retries=3, backoff_s=0.01)
    with pytest.raises(GenerationError, match="HTTP 404.*no-such-model"):
        client.generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0)
    assert len(fresh.requests) == 1


def test_api_key_comes_from_the_named_variable(fresh, monkeypatch):
    fresh.api_key = "sekret"
    monkeypatch.delenv("SPADE_TEST_KEY", raising=False)
    client = OpenAIBackend(fresh.url, "smollm2-test", api_key_env="SPADE_TEST_KEY")
    with pytest.raises(GenerationError, match=r"HTTP 401.*\$SPADE_TEST_KEY"):
        client.generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0)
    monkeypatch.setenv("SPADE_TEST_KEY", "sekret")
    assert client.generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0)[0].text


def test_unreachable_url_is_a_clear_error():
    url = _closed_port_url()
    client = OpenAIBackend(url, "m", max_retries=1, backoff_s=0.01, timeout_s=5)
    with pytest.raises(GenerationError, match=f"{url}/chat/completions: giving up after 2 "
                                              "attempts; last error: cannot reach the server"):
        client.generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0)
    with pytest.raises(GenerationError, match=f"{url}/models: server not ready after 0.3 s"):
        client.wait_until_ready(0.3, poll_s=0.1)
    with pytest.raises(GenerationError, match=f"{url}/models: cannot reach the server"):
        OpenAIBackend(url).generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0)


def test_plugin_builds_and_waits_for_the_server(fresh):
    loaded = load_test_plugins(backends_plugin)
    options = backend_options.OpenAIOptions(base_url=fresh.url, wait_for_server_s=5)
    backend = check_component(loaded, "generation_backend", "openai", options=options,
                              context=BuildContext(model="bundled:smollm2-135m"))
    assert backend.generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0)[0].text
    backend.close()


def test_without_the_openai_sdk_preflight_and_build_say_how_to_install_it(monkeypatch):
    import sys

    from fakes.cli import ROOT

    from spade_core.config.load import load_config
    from spade_core.config.preflight import preflight_problems

    from spade_core.plugins import load_plugins

    monkeypatch.setitem(sys.modules, "openai", None)  # as if it were not installed
    loaded = load_plugins()
    resolved = load_config(ROOT / "configs" / "quickstart.yaml", loaded.registry,
                           ["trainer=none", "backend=openai"])
    (found,) = preflight_problems(resolved, loaded)
    assert found.startswith("backend: ") and "pip install 'spade-rl[openai]'" in found
    with pytest.raises(GenerationError, match=r"needs the openai package.*spade-rl\[openai\]"):
        OpenAIBackend("http://127.0.0.1:9/v1", "m")


def test_retries_are_the_sdks_with_the_configured_backoff(fresh, monkeypatch):
    import openai

    delays = []
    monkeypatch.setattr("time.sleep", lambda s: delays.append(s))  # the SDK sleeps with time.sleep
    fresh.fail_next[:] = [503, 503, 503]
    client = OpenAIBackend(fresh.url, "smollm2-test", max_retries=3, backoff_s=2.0)
    assert isinstance(client._client, openai.OpenAI)
    [g] = client.generate(CONVERSATIONS[:1], max_new_tokens=2, temperature=0.0)
    assert g.text and len(fresh.requests) == 4
    # 2, 4, 8 s, less the SDK's jitter (up to a quarter)
    assert len(delays) == 3
    for delay, full in zip(delays, (2.0, 4.0, 8.0)):
        assert 0.75 * full <= delay <= full


class _SurrogateServerBackend:
    """What a hostile OpenAI-compatible server answers: lone surrogates, which it sends as JSON
    escapes (a plain namespace, not a ``Generation``, so nothing cleans them on this side)."""

    def generate(self, conversations, **kwargs):
        from types import SimpleNamespace

        return [SimpleNamespace(text="\\boxed{\udfff\ud800} <tool_call>\udfff</tool_call>",
                                finish_reason="stop", prompt_ids=[1], completion_ids=[1],
                                logprobs=None) for _ in conversations]


def test_lone_surrogates_from_the_server_are_replaced_and_the_next_turn_is_sent():
    with OpenAITestServer(_SurrogateServerBackend()) as srv:
        client = OpenAIBackend(srv.url, srv.model_name, max_retries=0)
        [g] = client.generate(CONVERSATIONS[:1], max_new_tokens=5, temperature=0.0)
        assert g.text == "\\boxed{\ufffd\ufffd} <tool_call>\ufffd</tool_call>"
        g.text.encode("utf-8")
        # the reply goes back to the server in the next turn's history (an encode that once
        # ended the run with UnicodeEncodeError)
        history = CONVERSATIONS[0] + [{"role": "assistant", "content": g.text},
                                      {"role": "user", "content": "again"}]
        [again] = client.generate([history], max_new_tokens=5, temperature=0.0)
        assert "\ufffd" in again.text and srv.requests[-1]["messages"][1]["content"] == g.text
        client.close()
