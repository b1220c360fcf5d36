"""LoopbackServer: what the scripted loopback API servers (FakeMessagesServer, FakeChatServer)
share, so each keeps only its API's wire format.

A ThreadingHTTPServer on 127.0.0.1 (port 0), run in a daemon thread, answering POSTs to one
route from a queue of scripted `Step`s (an empty queue asks `responder`, else answers the
default text), keeping every request body, and queueing the faults both APIs have in common
(rate limits and server errors with retry-after, any status, a slow answer, an answer dripped a
byte at a time, a malformed body).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self


@dataclass
class Step:
    """One scripted answer: a status, a body (JSON value or raw bytes) and extra headers."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    content_type: str = "application/json"
    drip: float = 0.0
    """Seconds between the bytes of the body's last `drip_tail` bytes (0: sent at once)."""
    drip_tail: int = 0


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr lines of http.server."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        owner = self.server.owner
        if self.path.split("?", 1)[0] != owner.route:
            self._send(Step(status=404, body=owner._error_body(404, f"no route {self.path}")))
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._send(Step(status=400, body=owner._error_body(400, "request body is not JSON")))
            return
        refusal = owner._refuse(self.headers, body)
        if refusal is not None:
            self._send(refusal)
            return
        step = owner._next_step(body)
        if step.delay and owner._stopping.wait(step.delay):
            return
        self._send(step)

    def _send(self, step: Step) -> None:
        owner = self.server.owner
        request_id = f"req_fake_{owner.request_count:04d}"
        body = owner._wire_body(step.body, request_id)
        data = step.raw if step.raw is not None else json.dumps(body).encode("utf-8")
        try:
            self.send_response(step.status)
            self.send_header("content-type", step.content_type)
            self.send_header("content-length", str(len(data)))
            self.send_header(owner.request_id_header, request_id)
            for name, value in step.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if step.drip:
                self._drip(data, step)
            else:
                self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            owner.dropped.set()  # the client gave up (a timeout test); nothing to answer

    def _drip(self, data: bytes, step: Step) -> None:
        """Send `data`, its last `drip_tail` bytes one at a time, `drip` seconds apart."""
        owner = self.server.owner
        cut = max(len(data) - step.drip_tail, 0)
        self.wfile.write(data[:cut])
        for i in range(cut, len(data)):
            self.wfile.flush()
            if owner._stopping.wait(step.drip):
                return
            self.wfile.write(data[i : i + 1])


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: LoopbackServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


class LoopbackServer:
    """The lifecycle, queue and common faults of a scripted API server; a subclass names its
    `route`, says how its answers and errors look (`_error_body`, `_text_body`, `_wrong_body`,
    `_fill_in`) and which faults it knows (`FAULT_KINDS`, `STATUS_FAULTS`, `SLOW_FAULT`)."""

    FAULT_KINDS: ClassVar[tuple[str, ...]]
    STATUS_FAULTS: ClassVar[tuple[str, ...]]
    """Fault kinds answered with their own status and the API's error body."""
    RETRY_AFTER_FAULTS: ClassVar[tuple[str, ...]] = ("429",)
    """Fault kinds sent with a quick retry-after (0.01 s) unless `retry_after` says otherwise."""
    SLOW_FAULT: ClassVar[str]
    route: ClassVar[str]
    url_suffix: ClassVar[str] = ""
    request_id_header: ClassVar[str]
    thread_name: ClassVar[str]

    def __init__(
        self,
        default_text: str,
        model: str | None,
        responder: Callable[[Any, dict[str, Any]], None] | None,
    ) -> None:
        self.default_text = default_text
        self.model = model
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Step] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.dropped = threading.Event()
        """Set when a client closed its connection before its answer was sent in full."""
        self._ids = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def request_count(self) -> int:
        """How many requests reached the route (retries included)."""
        with self._lock:
            return len(self.requests)

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT of the running server, with the API's `url_suffix`."""
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.url_suffix}"

    def start(self) -> Self:
        """Start serving in a background thread."""
        if self._server is None:
            self._stopping.clear()
            self._server = _Server(self)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.02},
                name=self.thread_name,
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

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def queue_fault(self, kind: str | int, **opts: Any) -> None:
        """Queue a failure; the kinds and their options are in the class docstring."""
        kind = str(kind)
        headers: dict[str, str] = {}
        retry_after = opts.get("retry_after", 0.01 if kind in self.RETRY_AFTER_FAULTS else None)
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        if kind in self.STATUS_FAULTS or kind == "status":
            status = int(kind) if kind != "status" else int(opts["status"])
            message = str(opts.get("message", f"scripted {status}"))
            error_type = opts.get("error_type") if kind == "status" else None
            body = self._error_body(status, message, error_type)
            self._push(Step(status=status, body=body, headers=headers))
        elif kind == self.SLOW_FAULT:
            body = self._text_body(str(opts.get("text", "late")))
            self._push(Step(body=body, delay=float(opts.get("delay", 2.0))))
        elif kind == "drip":
            body = self._text_body(str(opts.get("text", "dripped")))
            interval = float(opts.get("interval", 0.2))
            self._push(Step(body=body, drip=interval, drip_tail=int(opts.get("tail", 20))))
        elif kind == "malformed":
            if opts.get("shape") == "wrong":
                self._push(Step(body=self._wrong_body()))
            else:
                raw = str(opts.get("body", "<html>this is not JSON")).encode("utf-8")
                self._push(Step(raw=raw))
        else:
            known = ", ".join(self.FAULT_KINDS)
            raise ValueError(f"unknown fault kind {kind!r}; known: {known}")

    def _push(self, step: Step) -> None:
        with self._lock:
            self._queue.append(step)

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_fake_{self._ids:04d}"

    def _next_step(self, request_body: Any) -> Step:
        """Record the request and take the next scripted answer (asking `responder` for one
        when none is queued; else the default text), filled in for that request."""
        body_of_request = request_body if isinstance(request_body, dict) else {}
        with self._lock:
            self.requests.append(body_of_request)
            empty = not self._queue
        if empty and self.responder is not None:
            self.responder(self, body_of_request)
        with self._lock:
            step = self._queue.popleft() if self._queue else None
        if step is None:
            step = Step(body=self._text_body(self.default_text))
        return self._fill_in(step, body_of_request)

    def _refuse(self, headers: Message, body: Any) -> Step | None:
        """The answer to a request turned away before the script (None: it is served)."""
        return None

    def _wire_body(self, body: Any, request_id: str) -> Any:
        """The body as sent under `request_id` (the same, unless the API quotes the id)."""
        return body

    def _error_body(self, status: int, message: str, error_type: str | None = None) -> Any:
        raise NotImplementedError

    def _text_body(self, text: str) -> dict[str, Any]:
        """A complete plain-text answer (model and usage filled in when sent)."""
        raise NotImplementedError

    def _wrong_body(self) -> dict[str, Any]:
        """A 200 answer of the right kind but the wrong shape."""
        raise NotImplementedError

    def _fill_in(self, step: Step, request_body: dict[str, Any]) -> Step:
        """`step` as sent for `request_body` (e.g. the model and estimated usage filled in)."""
        return step
