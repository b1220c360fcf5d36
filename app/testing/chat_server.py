"""FakeChatServer: a scripted loopback Chat Completions API (OpenAI-compatible) for tests."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULT_KINDS = ("429", "500", "503", "timeout", "malformed", "status")
ROUTE = "/v1/chat/completions"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    429: "requests",
    500: "server_error",
    503: "server_error",
}
_ERROR_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}

Responder = Callable[["FakeChatServer", dict[str, Any]], None]
"""Called with a request's body when the queue is empty; it queues that request's answer."""


@dataclass
class _Step:
    """One scripted answer: a status, a body (JSON value or raw bytes) and extra headers."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr lines of http.server."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        owner = self.server.owner
        if self.path.split("?", 1)[0] != ROUTE:
            self._send(_Step(status=404, body=_error_body(404, f"no route {self.path}")))
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._send(_Step(status=400, body=_error_body(400, "request body is not JSON")))
            return
        wanted = owner.api_key
        if wanted is not None and self.headers.get("authorization") != f"Bearer {wanted}":
            with owner._lock:
                owner.requests.append(body if isinstance(body, dict) else {})
            self._send(_Step(status=401, body=_error_body(401, "Incorrect API key provided.")))
            return
        step = owner._next_step(body)
        if step.delay and owner._stopping.wait(step.delay):
            return
        self._send(step)

    def _send(self, step: _Step) -> None:
        request_id = f"req_fake_{self.server.owner.request_count:04d}"
        data = step.raw if step.raw is not None else json.dumps(step.body).encode("utf-8")
        try:
            self.send_response(step.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("x-request-id", request_id)
            for name, value in step.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test); nothing to answer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: FakeChatServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


def _error_body(status: int, message: str, error_type: str | None = None) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": error_type or _ERROR_TYPES.get(status, "server_error"),
            "param": None,
            "code": _ERROR_CODES.get(status),
        }
    }


class FakeChatServer:
    """A ThreadingHTTPServer on 127.0.0.1 (port 0) answering POST /v1/chat/completions.

    Queue answers with `queue_text`, `queue_tool_call(s)`, `queue_body` and `queue_fault`; each
    request takes the next one. An empty queue asks `responder` (when set) to queue the answer
    for that request, e.g. the forced tool's input in a long scripted play; otherwise it
    answers `default_text`. With `api_key` set, a request without that bearer key is answered
    401 (as `vllm serve --api-key` does); without it any key, or none, is accepted. Every
    request body is kept in `requests` (headers are not: they hold the key). Use as a context
    manager; point a client at `base_url` (it ends in /v1, as OPENAI_BASE_URL does).
    """

    def __init__(
        self,
        default_text: str = "OK",
        model: str | None = None,
        responder: Responder | None = None,
        api_key: str | None = None,
    ) -> None:
        self.default_text = default_text
        self.api_key = api_key
        self.model = model
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[_Step] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def request_count(self) -> int:
        """How many requests reached /v1/chat/completions (retries included)."""
        with self._lock:
            return len(self.requests)

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT/v1 of the running server."""
        if self._server is None:
            raise RuntimeError("FakeChatServer is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeChatServer:
        """Start serving in a background thread."""
        if self._server is None:
            self._stopping.clear()
            self._server = _Server(self)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.02},
                name="fake-chat-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port; slow answers in progress are abandoned."""
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def queue_text(
        self,
        text: str,
        usage: tuple[int, ...] | dict[str, Any] | None = None,
        finish_reason: str = "stop",
    ) -> None:
        """Queue a plain text answer; `usage` is (prompt, completion[, cached]) tokens or the
        usage object as sent (None: estimated from the request)."""
        message = {"role": "assistant", "content": text}
        self._push(_Step(body=self._completion(message, finish_reason, usage)))

    def queue_tool_call(
        self,
        name: str,
        arguments: Any,
        *,
        text: str | None = None,
        call_id: str | None = None,
        usage: tuple[int, ...] | dict[str, Any] | None = None,
    ) -> None:
        """Queue an answer calling one tool; `arguments` is JSON-encoded unless it is a string
        (sent as is: a string that is not a JSON object is a malformed call)."""
        self.queue_tool_calls([(name, arguments, call_id)], text=text, usage=usage)

    def queue_tool_calls(
        self,
        calls: Sequence[tuple[str, Any] | tuple[str, Any, str | None]],
        *,
        text: str | None = None,
        usage: tuple[int, ...] | dict[str, Any] | None = None,
    ) -> None:
        """Queue an answer calling several tools: (name, arguments[, call id]) each."""
        tool_calls = []
        for name, arguments, *rest in calls:
            call_id = rest[0] if rest and rest[0] else self._new_id("call")
            encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
            tool_calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": encoded},
                }
            )
        message = {"role": "assistant", "content": text, "tool_calls": tool_calls}
        self._push(_Step(body=self._completion(message, "tool_calls", usage)))

    def queue_body(self, body: Any, status: int = 200) -> None:
        """Queue any JSON body as it is (a completion without usage, a 200 with an error...)."""
        self._push(_Step(status=status, raw=json.dumps(body).encode("utf-8")))

    def queue_fault(self, kind: str | int, **opts: Any) -> None:
        """Queue a failure. Kinds and options:

        - "429": rate limited; "500": server error; "503": overloaded; each with `retry-after`
          (`retry_after` seconds, default 0.01, so the SDK's retry is quick) and `message`;
        - "timeout": waits `delay` seconds (default 2.0) then answers `text` (default "late");
        - "malformed": 200 with `body` (default not JSON) or, with `shape="wrong"`, JSON that
          is not a completion;
        - "status": any `status` with `message` and optional `error_type`.
        """
        kind = str(kind)
        headers: dict[str, str] = {}
        retry_after = opts.get("retry_after", 0.01 if kind in ("429", "500", "503") else None)
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        if kind in ("429", "500", "503"):
            status = int(kind)
            text = str(opts.get("message", f"scripted {kind}"))
            self._push(_Step(status=status, body=_error_body(status, text), headers=headers))
        elif kind == "status":
            status = int(opts["status"])
            text = str(opts.get("message", f"scripted {status}"))
            body = _error_body(status, text, opts.get("error_type"))
            self._push(_Step(status=status, body=body, headers=headers))
        elif kind == "timeout":
            message = {"role": "assistant", "content": str(opts.get("text", "late"))}
            body = self._completion(message, "stop", None)
            self._push(_Step(body=body, delay=float(opts.get("delay", 2.0))))
        elif kind == "malformed":
            if opts.get("shape") == "wrong":
                wrong = {"id": self._new_id("chatcmpl"), "object": "chat.completion"}
                self._push(_Step(body={**wrong, "choices": "not a list"}))
            else:
                raw = str(opts.get("body", "<html>this is not JSON")).encode("utf-8")
                self._push(_Step(raw=raw))
        else:
            raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")

    def _push(self, step: _Step) -> None:
        with self._lock:
            self._queue.append(step)

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_fake_{self._ids:04d}"

    def _completion(
        self,
        message: dict[str, Any],
        finish_reason: str,
        usage: tuple[int, ...] | dict[str, Any] | None,
    ) -> dict[str, Any]:
        """A Chat Completions answer; `model` and estimated usage are filled in when sent."""
        if isinstance(usage, tuple):
            prompt, completion, *cached = usage
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
            if cached:
                usage["prompt_tokens_details"] = {"cached_tokens": cached[0]}
        return {
            "id": self._new_id("chatcmpl"),
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": usage,
        }

    def _next_step(self, request_body: Any) -> _Step:
        """Record the request and take the next scripted answer (asking `responder` for one
        when none is queued; else the default text)."""
        body_of_request = request_body if isinstance(request_body, dict) else {}
        with self._lock:
            self.requests.append(body_of_request)
            empty = not self._queue
        if empty and self.responder is not None:
            self.responder(self, body_of_request)
        with self._lock:
            step = self._queue.popleft() if self._queue else None
        if step is None:
            message = {"role": "assistant", "content": self.default_text}
            step = _Step(body=self._completion(message, "stop", None))
        body = step.body
        if isinstance(body, dict) and body.get("object") == "chat.completion":
            body = dict(body)
            if body.get("model") is None:
                body["model"] = body_of_request.get("model") or "fake-model"
            if "usage" in body and body["usage"] is None:
                body["usage"] = _estimate_usage(body_of_request, body.get("choices"))
            step = replace(step, body=body)
        return step


def _estimate_usage(request_body: Any, choices: Any) -> dict[str, int]:
    """A deterministic stand-in for token counts: about four characters a token."""
    prompt = max(1, len(json.dumps(request_body, sort_keys=True)) // 4)
    completion = max(1, len(json.dumps(choices, sort_keys=True)) // 4)
    total = prompt + completion
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}
