"""Test fixture: a small OpenAI-compatible HTTP server on 127.0.0.1 (ephemeral port) that answers
``/v1/chat/completions`` by running a real generation backend, for testing the ``openai`` backend
without network access. Not part of the product."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OpenAITestServer:
    """Serves ``GET /v1/models`` and ``POST /v1/chat/completions`` from ``backend``.

    ``fail_next`` holds HTTP status codes to answer the next completion requests with (to test
    retries); ``api_key`` makes the server require ``Authorization: Bearer <key>``; ``requests``
    records every completion request body.
    """

    def __init__(self, backend: Any, model_name: str = "smollm2-test", api_key: str | None = None):
        self.backend = backend
        self.model_name = model_name
        self.api_key = api_key
        self.fail_next: list[int] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()  # the backend generates one request at a time
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "OpenAITestServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def complete(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if body.get("model") != self.model_name:
            return 404, {"error": {"message": f"model {body.get('model')!r} not found"}}
        with self._lock:
            generation = self.backend.generate(
                [body["messages"]], max_new_tokens=int(body.get("max_tokens", 16)),
                temperature=float(body.get("temperature", 1.0)), seed=body.get("seed"),
                tools=body.get("tools"), top_p=body.get("top_p"), top_k=body.get("top_k"),
                chat_template_kwargs=body.get("chat_template_kwargs"))[0]
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": generation.text},
            "finish_reason": generation.finish_reason,
        }
        if body.get("logprobs"):
            tokenizer = self.backend.tokenizer
            choice["logprobs"] = {"content": [
                {"token": tokenizer.convert_ids_to_tokens(t), "logprob": lp}
                for t, lp in zip(generation.completion_ids, generation.logprobs)]}
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion",
            "model": self.model_name, "choices": [choice],
            "usage": {"prompt_tokens": len(generation.prompt_ids),
                      "completion_tokens": len(generation.completion_ids),
                      "total_tokens": len(generation.prompt_ids) + len(generation.completion_ids)},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorised(self) -> bool:
                if server.api_key is None:
                    return True
                if self.headers.get("Authorization") == f"Bearer {server.api_key}":
                    return True
                self._send(401, {"error": {"message": "invalid api key"}})
                return False

            def do_GET(self) -> None:
                if not self._authorised():
                    return
                if self.path == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": server.model_name, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                if not self._authorised():
                    return
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                server.requests.append(body)
                if server.fail_next:
                    self._send(server.fail_next.pop(0), {"error": {"message": "injected failure"}})
                    return
                status, payload = server.complete(body)
                if status == 200 and body.get("stream"):
                    self._stream(payload)
                else:
                    self._send(status, payload)

            def _stream(self, payload: dict[str, Any]) -> None:
                """The completion as server-sent events (``stream: true``, as verifiers' agents
                ask): one chunk with the whole reply, a usage chunk, then ``[DONE]``."""
                [choice] = payload["choices"]
                base = {"id": payload["id"], "object": "chat.completion.chunk",
                        "model": payload["model"]}
                chunks = [
                    {**base, "choices": [{"index": 0, "delta": choice["message"],
                                          "finish_reason": None}]},
                    {**base, "choices": [{"index": 0, "delta": {},
                                          "finish_reason": choice["finish_reason"]}]},
                    {**base, "choices": [], "usage": payload["usage"]},
                ]
                data = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks)
                data += b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
