"""The ``openai`` generation backend: any OpenAI-compatible ``/chat/completions`` endpoint (a vLLM
or llama.cpp server, or a hosted model) through the ``openai`` SDK
(``pip install 'spade-rl[openai]'``).

Requests of one batch run concurrently (``max_concurrency``); the SDK retries connection failures,
timeouts, HTTP 408, 409, 429 and 5xx with exponential backoff (honouring ``Retry-After``); every
error names the URL. Tool calls that the server returns as structured ``tool_calls`` are written
back into the text as ``<tool_call>{json}</tool_call>`` so environments see one protocol whatever
the server.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from plugins.backends.generation_errors import GenerationError
from plugins.backends.sampling import call_sampling
from spade_core.interfaces.backend import Generation, GenerationBackend

#: Statuses the SDK retries (and 5xx); a final one of these means the retries ran out.
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
#: The SDK's first retry delay, which ``backoff_s`` replaces (its later delays double it).
SDK_INITIAL_RETRY_DELAY = 0.5
INSTALL_HINT = "pip install 'spade-rl[openai]'"


def import_openai() -> Any:
    """The ``openai`` SDK, or a :class:`GenerationError` saying how to install it."""
    try:
        import openai
    except ImportError as exc:
        raise GenerationError(f"the openai backend needs the openai package, which is not "
                              f"installed; install it with {INSTALL_HINT}") from exc
    return openai


def _client(openai: Any, base_url: str, timeout_s: float, max_retries: int, backoff_s: float,
            headers: dict[str, str]) -> Any:
    """An ``openai.OpenAI`` client whose retry delays start at ``backoff_s`` (not the SDK's
    0.5 s) unless the server says how long to wait."""

    class Client(openai.OpenAI):
        def _calculate_retry_timeout(self, remaining_retries, options, response_headers=None):
            delay = super()._calculate_retry_timeout(remaining_retries, options, response_headers)
            if response_headers is not None and any(
                    name in response_headers for name in ("retry-after", "retry-after-ms")):
                return delay
            return delay * backoff_s / SDK_INITIAL_RETRY_DELAY

    # The SDK insists on a key; every request replaces its header with the real one (read from
    # the variable each time) or removes it when the variable is unset.
    return Client(base_url=base_url, api_key="replaced-per-request", timeout=timeout_s,
                  max_retries=max_retries, default_headers=headers)


class OpenAIBackend(GenerationBackend):
    """Chat completions from an OpenAI-compatible server.

    :param base_url: the API root, e.g. ``http://127.0.0.1:8000/v1``; ``/chat/completions`` is
        appended.
    :param model: the model name the server expects; ``None`` takes the first model that
        ``GET {base_url}/models`` lists (what a single-model vLLM or llama.cpp server serves).
    :param api_key_env: name of the environment variable holding the API key; no
        ``Authorization`` header is sent when it is unset (local servers need none).
    :param logprobs: ask the server for per-token log-probabilities (not every server supports it).
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        max_concurrency: int = 8,
        logprobs: bool = False,
        extra_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_concurrency = max_concurrency
        self.logprobs = logprobs
        self.extra_body = dict(extra_body or {})
        self.headers = dict(headers or {})
        self._openai = import_openai()
        self._client = _client(self._openai, self.base_url, timeout_s, max_retries, backoff_s,
                               self.headers)
        self._executor = ThreadPoolExecutor(max_workers=max_concurrency,
                                        thread_name_prefix="spade-openai")

    def _auth_headers(self) -> dict[str, Any]:
        """``Authorization`` from the key's variable, read now; none when it is unset."""
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return {"Authorization": f"Bearer {key}" if key else self._openai.Omit()}

    def _status_error(self, url: str, exc: Any) -> str:
        response = exc.response
        detail = response.text[:500] if response is not None else str(exc)
        return f"HTTP {exc.status_code} {response.reason_phrase if response is not None else ''}" \
               f": {detail}"

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
        """One completion per conversation, in order; request ``i`` gets seed ``seed + i`` so that
        repeated prompts still differ while the whole batch stays reproducible.

        ``top_p`` is a standard request field; ``top_k`` and ``chat_template_kwargs`` are not
        (vLLM, SGLang and llama.cpp servers read them; OpenAI's own API refuses them), so each is
        sent only when given, over what ``extra_body`` says (template kwargs merged key by key).
        """
        call_sampling(max_new_tokens, top_p, top_k)  # checks only: unset values are not sent
        sampling: dict[str, Any] = {}
        if top_p is not None:
            sampling["top_p"] = top_p
        if top_k is not None:
            sampling["top_k"] = top_k
        if chat_template_kwargs:
            sampling["chat_template_kwargs"] = {
                **(self.extra_body.get("chat_template_kwargs") or {}), **chat_template_kwargs}
        model = self.model_name()
        bodies = []
        for i, conversation in enumerate(conversations):
            body: dict[str, Any] = {
                "model": model,
                "messages": conversation,
                "max_tokens": max_new_tokens,
                "temperature": temperature,
                "n": 1,
                **self.extra_body,
                **sampling,
            }
            if seed is not None:
                body["seed"] = seed + i
            if tools:
                body["tools"] = tools
            if self.logprobs:
                body["logprobs"] = True
            bodies.append(body)
        return list(self._executor.map(self._complete, bodies))

    def model_name(self) -> str:
        """The model requests name: the configured one, else the server's first listed model."""
        if self.model is None:
            listing = self._list_models(timeout_s=self.timeout_s)
            try:
                self.model = str(listing["data"][0]["id"])
            except (KeyError, IndexError, TypeError) as exc:
                raise GenerationError(f"{self.base_url}/models lists no model; set the backend "
                                      f"option model: {json.dumps(listing)[:300]}") from exc
        return self.model

    def _list_models(self, timeout_s: float) -> Any:
        """``GET {base_url}/models`` once (no retries), as JSON."""
        url = f"{self.base_url}/models"
        openai = self._openai
        try:
            response = self._client.with_options(max_retries=0, timeout=timeout_s) \
                .models.with_raw_response.list(extra_headers=self._auth_headers())
            return json.loads(response.http_response.text)
        except openai.APIStatusError as exc:
            raise GenerationError(f"{url}: {self._status_error(url, exc)}") from exc
        except openai.APIConnectionError as exc:
            raise GenerationError(f"{url}: cannot reach the server: {exc.__cause__ or exc}"
                                  ) from exc
        except json.JSONDecodeError as exc:
            raise GenerationError(f"{url}: reply is not JSON") from exc

    def _complete(self, body: dict[str, Any]) -> Generation:
        reply = self._post(body)
        try:
            choice = reply["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise GenerationError(f"{self.url}: reply has no choices[0].message: "
                                  f"{json.dumps(reply)[:300]}") from exc
        text = message.get("content") or ""
        for call in message.get("tool_calls") or []:
            fn = call.get("function", call)
            arguments = fn.get("arguments", {})
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    pass  # keep the server's text as it is
            payload = json.dumps({"name": fn.get("name"), "arguments": arguments})
            text += ("\n" if text else "") + f"<tool_call>\n{payload}\n</tool_call>"
        logprobs = None
        content = (choice.get("logprobs") or {}).get("content") if self.logprobs else None
        if content:
            logprobs = [float(item["logprob"]) for item in content]
        finish = choice.get("finish_reason") or "stop"
        return Generation(text=text, logprobs=logprobs,
                          finish_reason="length" if finish == "length" else "stop")

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        """The server's JSON reply to one completion request; the SDK retries what is
        transient (``max_retries``, delays from ``backoff_s`` doubling)."""
        import httpx  # the SDK's HTTP library

        openai = self._openai
        attempts = f"giving up after {self.max_retries + 1} attempts; last error"
        try:
            # The SDK's documented way to post a body as it is: extra_body keys and all.
            response = self._client.post("/chat/completions", body=body, cast_to=httpx.Response,
                                         options={"headers": self._auth_headers()})
            raw = response.content
        except openai.APIStatusError as exc:
            error = self._status_error(self.url, exc)
            if exc.status_code in RETRY_STATUS or exc.status_code >= 500:
                raise GenerationError(f"{self.url}: {attempts}: {error}") from exc
            hint = (f" (is the API key in ${self.api_key_env} right?)"
                    if exc.status_code in (401, 403) else "")
            raise GenerationError(f"{self.url}: {error}{hint}") from exc
        except openai.APIConnectionError as exc:
            raise GenerationError(f"{self.url}: {attempts}: cannot reach the server: "
                                  f"{exc.__cause__ or exc}") from exc
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise GenerationError(f"{self.url}: reply is not JSON: {raw[:300]!r}") from exc

    def wait_until_ready(self, timeout_s: float, poll_s: float = 1.0) -> None:
        """Poll ``GET {base_url}/models`` until the server answers (a vLLM server takes 30-100 s to
        start); raises :class:`GenerationError` naming the URL after ``timeout_s``."""
        url = f"{self.base_url}/models"
        openai = self._openai
        client = self._client.with_options(max_retries=0, timeout=max(poll_s, 5.0))
        deadline = time.monotonic() + timeout_s
        last_error = "no attempt made"
        while True:
            try:
                client.models.with_raw_response.list(extra_headers=self._auth_headers())
                return
            except openai.APIStatusError as exc:
                last_error = f"HTTP {exc.status_code} {exc.response.reason_phrase}"
                if exc.status_code not in RETRY_STATUS:
                    raise GenerationError(f"{url}: {last_error}") from exc
            except openai.APIConnectionError as exc:
                last_error = f"cannot reach the server: {exc.__cause__ or exc}"
            if time.monotonic() >= deadline:
                raise GenerationError(f"{url}: server not ready after {timeout_s:g} s; last error: "
                                      f"{last_error}")
            time.sleep(poll_s)

    def close(self) -> None:
        """Stop the request threads and close the SDK's connections."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._client.close()
