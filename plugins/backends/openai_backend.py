"""The ``openai`` generation backend: any OpenAI-compatible ``/chat/completions`` endpoint (a vLLM or
llama.cpp server, or a hosted model) over plain HTTP with the standard library.

Requests of one batch run concurrently (``max_concurrency``); connection failures, timeouts, HTTP 408,
409, 429 and 5xx are retried with exponential backoff; every error names the URL. Tool calls that
the server returns as structured ``tool_calls`` are written back into the text as
``<tool_call>{json}</tool_call>`` so environments see one protocol whatever the server.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from plugins.backends.errors import GenerationError
from spade_core.interfaces.backend import Generation, GenerationBackend

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


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
        self._pool = ThreadPoolExecutor(max_workers=max_concurrency,
                                        thread_name_prefix="spade-openai")

    def _request_headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self.headers}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def generate(
        self,
        conversations: Sequence[list[dict[str, Any]]],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> list[Generation]:
        """One completion per conversation, in order; request ``i`` gets seed ``seed + i`` so that
        repeated prompts still differ while the whole batch stays reproducible."""
        if max_new_tokens < 1:
            raise GenerationError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
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
            }
            if seed is not None:
                body["seed"] = seed + i
            if tools:
                body["tools"] = tools
            if self.logprobs:
                body["logprobs"] = True
            bodies.append(body)
        return list(self._pool.map(self._complete, bodies))

    def model_name(self) -> str:
        """The model requests name: the configured one, else the server's first listed model."""
        if self.model is None:
            listing = self._get_json(f"{self.base_url}/models", timeout_s=self.timeout_s)
            try:
                self.model = str(listing["data"][0]["id"])
            except (KeyError, IndexError, TypeError) as exc:
                raise GenerationError(f"{self.base_url}/models lists no model; set the backend "
                                      f"option model: {json.dumps(listing)[:300]}") from exc
        return self.model

    def _get_json(self, url: str, timeout_s: float) -> Any:
        request = urllib.request.Request(url, headers=self._request_headers(), method="GET")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise GenerationError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise GenerationError(f"{url}: cannot reach the server: "
                                  f"{getattr(exc, 'reason', exc)}") from exc
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
        data = json.dumps(body).encode("utf-8")
        last_error = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            request = urllib.request.Request(self.url, data=data, headers=self._request_headers(),
                                             method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    raw = response.read()
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", "replace")[:500]
                last_error = f"HTTP {exc.code} {exc.reason}: {detail}"
                if exc.code in RETRY_STATUS:
                    continue
                hint = (f" (is the API key in ${self.api_key_env} right?)"
                        if exc.code in (401, 403) else "")
                raise GenerationError(f"{self.url}: {last_error}{hint}") from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                last_error = f"cannot reach the server: {reason}"
                continue
            try:
                return json.loads(raw)
            except json.JSONDecodeError as exc:
                raise GenerationError(f"{self.url}: reply is not JSON: {raw[:300]!r}") from exc
        raise GenerationError(f"{self.url}: giving up after {self.max_retries + 1} attempts; last "
                              f"error: {last_error}")

    def wait_until_ready(self, timeout_s: float, poll_s: float = 1.0) -> None:
        """Poll ``GET {base_url}/models`` until the server answers (a vLLM server takes 30-100 s to
        start); raises :class:`GenerationError` naming the URL after ``timeout_s``."""
        url = f"{self.base_url}/models"
        deadline = time.monotonic() + timeout_s
        last_error = "no attempt made"
        while True:
            request = urllib.request.Request(url, headers=self._request_headers(), method="GET")
            try:
                with urllib.request.urlopen(request, timeout=max(poll_s, 5.0)):
                    return
            except urllib.error.HTTPError as exc:
                last_error = f"HTTP {exc.code} {exc.reason}"
                if exc.code not in RETRY_STATUS:
                    raise GenerationError(f"{url}: {last_error}") from exc
            except (urllib.error.URLError, OSError) as exc:
                last_error = f"cannot reach the server: {getattr(exc, 'reason', exc)}"
            if time.monotonic() >= deadline:
                raise GenerationError(f"{url}: server not ready after {timeout_s:g} s; last error: "
                                      f"{last_error}")
            time.sleep(poll_s)

    def close(self) -> None:
        """Stop the request threads."""
        self._pool.shutdown(wait=False, cancel_futures=True)
