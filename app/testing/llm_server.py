"""FakeMessagesServer: a scripted loopback Anthropic Messages API for tests (no network)."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cairn.testing.cache_sim import MinTokens, PromptCacheSimulator, estimate_tokens, unmarked

FAULT_KINDS = ("429", "529", "500", "slow", "malformed", "status")

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

Responder = Callable[["FakeMessagesServer", dict[str, Any]], None]
"""Called with a request's body when the queue is empty; it queues that request's answer."""


@dataclass
class _Step:
    """One scripted answer: a status, a body (JSON value or raw text) and extra headers."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    content_type: str = "application/json"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr lines of http.server."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        owner = self.server.owner
        if self.path.split("?", 1)[0] != "/v1/messages":
            self._send(_Step(status=404, body=_error_body(404, f"no route {self.path}")))
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._send(_Step(status=400, body=_error_body(400, "request body is not JSON")))
            return
        step = owner._next_step(body)
        if step.delay and owner._stopping.wait(step.delay):
            return
        self._send(step)

    def _send(self, step: _Step) -> None:
        request_id = f"req_fake_{self.server.owner.request_count:04d}"
        body = step.body
        if isinstance(body, dict) and body.get("type") == "error":
            body = {**body, "request_id": request_id}
        data = step.raw if step.raw is not None else json.dumps(body).encode("utf-8")
        try:
            self.send_response(step.status)
            self.send_header("content-type", step.content_type)
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", request_id)
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

    def __init__(self, owner: FakeMessagesServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


def _error_body(status: int, message: str, error_type: str | None = None) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error_type or _ERROR_TYPES.get(status, "api_error"), "message": message},
        "request_id": None,
    }


class FakeMessagesServer:
    """A ThreadingHTTPServer on 127.0.0.1 (port 0) answering POST /v1/messages from a script.

    Queue answers with `queue_text`, `queue_tool_use` and `queue_fault`; each request takes
    the next one. An empty queue asks `responder` (when set) to queue the answer for that
    request, e.g. the forced tool's input in a long scripted play; otherwise it answers
    `default_text`. Every request body is kept in `requests` (headers are not kept: they hold
    the API key). Use as a context manager; point a client at `base_url`.

    Answers queued without `usage` report an estimate; a request that marks blocks with
    `cache_control` has it billed as the API's prompt cache would (`cache`, a
    `PromptCacheSimulator`: marked prefixes remembered per model, read by later requests;
    `cache_min_tokens` is the shortest prefix it caches: one number, per model, or
    `cache_sim.api_min_cache_tokens` for the API's own minimums).
    """

    def __init__(
        self,
        default_text: str = "OK",
        model: str | None = None,
        responder: Responder | None = None,
        cache_min_tokens: MinTokens = 0,
    ) -> None:
        self.default_text = default_text
        self.model = model
        self.responder = responder
        self.cache = PromptCacheSimulator(cache_min_tokens)
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[_Step] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def request_count(self) -> int:
        """How many requests reached /v1/messages (retries included)."""
        with self._lock:
            return len(self.requests)

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT of the running server."""
        if self._server is None:
            raise RuntimeError("FakeMessagesServer is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeMessagesServer:
        """Start serving in a background thread."""
        if self._server is None:
            self._stopping.clear()
            self._server = _Server(self)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.02},
                name="fake-messages-server",
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

    def __enter__(self) -> FakeMessagesServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def queue_text(
        self,
        text: str,
        usage: tuple[int, int] | dict[str, int] | None = None,
        stop_reason: str = "end_turn",
    ) -> None:
        """Queue a plain text answer; `usage` is (input_tokens, output_tokens) or a dict."""
        self._push(_Step(body=self._message([{"type": "text", "text": text}], stop_reason, usage)))

    def queue_tool_use(
        self,
        name: str,
        input: Any,
        *,
        text: str | None = None,
        tool_id: str | None = None,
        usage: tuple[int, int] | dict[str, int] | None = None,
    ) -> None:
        """Queue a tool_use answer (stop_reason "tool_use"); `input` is sent as given, so a
        schema-breaking input is just a bad `input`."""
        blocks: list[dict[str, Any]] = []
        if text is not None:
            blocks.append({"type": "text", "text": text})
        blocks.append(
            {
                "type": "tool_use",
                "id": tool_id or self._new_id("toolu"),
                "name": name,
                "input": input,
            }
        )
        self._push(_Step(body=self._message(blocks, "tool_use", usage)))

    def queue_fault(self, kind: str | int, **opts: Any) -> None:
        """Queue a failure. Kinds and options:

        - "429": rate_limit_error with `retry-after` (`retry_after` seconds, default 0.01);
        - "529": overloaded_error; "500": api_error (`retry_after` optional for both);
        - "slow": waits `delay` seconds (default 2.0) then answers `text` (default "late");
        - "malformed": 200 with `body` (default not JSON) or, with `shape="wrong"`, JSON that is
          not a message;
        - "status": any `status` with `message` and optional `error_type`.
        """
        kind = str(kind)
        headers: dict[str, str] = {}
        retry_after = opts.get("retry_after", 0.01 if kind == "429" else None)
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        if kind in ("429", "529", "500"):
            status = int(kind)
            message = str(opts.get("message", f"scripted {kind}"))
            self._push(_Step(status=status, body=_error_body(status, message), headers=headers))
        elif kind == "status":
            status = int(opts["status"])
            message = str(opts.get("message", f"scripted {status}"))
            body = _error_body(status, message, opts.get("error_type"))
            self._push(_Step(status=status, body=body, headers=headers))
        elif kind == "slow":
            text = str(opts.get("text", "late"))
            body = self._message([{"type": "text", "text": text}], "end_turn", None)
            self._push(_Step(body=body, delay=float(opts.get("delay", 2.0))))
        elif kind == "malformed":
            if opts.get("shape") == "wrong":
                wrong = {"type": "message", "id": self._new_id("msg"), "content": "not a list"}
                self._push(_Step(body=wrong))
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

    def _message(
        self,
        blocks: list[dict[str, Any]],
        stop_reason: str,
        usage: tuple[int, int] | dict[str, int] | None,
    ) -> dict[str, Any]:
        """A Messages API answer; `model` is filled in from the request when it is sent."""
        if isinstance(usage, tuple):
            usage = {"input_tokens": usage[0], "output_tokens": usage[1]}
        return {
            "id": self._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
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
            blocks = [{"type": "text", "text": self.default_text}]
            step = _Step(body=self._message(blocks, "end_turn", None))
        body = step.body
        if isinstance(body, dict) and body.get("type") == "message":
            body = dict(body)
            model = request_body.get("model") if isinstance(request_body, dict) else None
            if body.get("model") is None:
                body["model"] = model or "fake-model"
            if "usage" in body and body["usage"] is None:
                body["usage"] = self._estimate_usage(body_of_request, body.get("content"))
            step = replace(step, body=body)
        return step

    def _estimate_usage(self, request_body: dict[str, Any], content: Any) -> dict[str, int]:
        """A deterministic stand-in for token counts (about four characters a token), the
        input billed through the cache when the request marks a prefix."""
        output = estimate_tokens(content)
        cached = self.cache.usage(request_body, estimate_tokens(unmarked(request_body)))
        if cached is None:
            return {"input_tokens": estimate_tokens(request_body), "output_tokens": output}
        return {**cached, "output_tokens": output}
