"""FakeChatServer: a scripted loopback Chat Completions API (OpenAI-compatible) for tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from email.message import Message
from typing import Any

from cairn.testing.cache_sim import estimate_tokens
from cairn.testing.loopback import LoopbackServer, Step

FAULT_KINDS = ("429", "500", "503", "timeout", "drip", "malformed", "status")
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


def _error_body(status: int, message: str, error_type: str | None = None) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": error_type or _ERROR_TYPES.get(status, "server_error"),
            "param": None,
            "code": _ERROR_CODES.get(status),
        }
    }


class FakeChatServer(LoopbackServer):
    """A ThreadingHTTPServer on 127.0.0.1 (port 0) answering POST /v1/chat/completions.

    Queue answers with `queue_text`, `queue_tool_call(s)`, `queue_body` and `queue_fault`; each
    request takes the next one. An empty queue asks `responder` (when set) to queue the answer
    for that request, e.g. the forced tool's input in a long scripted play; otherwise it
    answers `default_text`. With `api_key` set, a request without that bearer key is answered
    401 (as `vllm serve --api-key` does); without it any key, or none, is accepted. Every
    request body is kept in `requests` (headers are not: they hold the key). Use as a context
    manager; point a client at `base_url` (it ends in /v1, as OPENAI_BASE_URL does).

    `queue_fault` kinds and options:

    - "429": rate limited; "500": server error; "503": overloaded; each with `retry-after`
      (`retry_after` seconds, default 0.01, so the SDK's retry is quick) and `message`;
    - "timeout": waits `delay` seconds (default 2.0) then answers `text` (default "late");
    - "drip": answers `text` (default "dripped"), the body's last `tail` bytes (default 20)
      sent one at a time, `interval` seconds apart (default 0.2): no single read waits long,
      the whole answer does; `dropped` is set when the client closes the connection first;
    - "malformed": 200 with `body` (default not JSON) or, with `shape="wrong"`, JSON that
      is not a completion;
    - "status": any `status` with `message` and optional `error_type`.
    """

    FAULT_KINDS = FAULT_KINDS
    STATUS_FAULTS = ("429", "500", "503")
    RETRY_AFTER_FAULTS = ("429", "500", "503")
    SLOW_FAULT = "timeout"
    route = ROUTE
    url_suffix = "/v1"
    request_id_header = "x-request-id"
    thread_name = "fake-chat-server"

    def __init__(
        self,
        default_text: str = "OK",
        model: str | None = None,
        responder: Responder | None = None,
        api_key: str | None = None,
    ) -> None:
        super().__init__(default_text, model, responder)
        self.api_key = api_key

    def queue_text(
        self,
        text: str,
        usage: tuple[int, ...] | dict[str, Any] | None = None,
        finish_reason: str = "stop",
    ) -> None:
        """Queue a plain text answer; `usage` is (prompt, completion[, cached]) tokens or the
        usage object as sent (None: estimated from the request)."""
        message = {"role": "assistant", "content": text}
        self._push(Step(body=self._completion(message, finish_reason, usage)))

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
        self._push(Step(body=self._completion(message, "tool_calls", usage)))

    def queue_body(self, body: Any, status: int = 200) -> None:
        """Queue any JSON body as it is (a completion without usage, a 200 with an error...)."""
        self._push(Step(status=status, raw=json.dumps(body).encode("utf-8")))

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

    def _text_body(self, text: str) -> dict[str, Any]:
        return self._completion({"role": "assistant", "content": text}, "stop", None)

    def _wrong_body(self) -> dict[str, Any]:
        wrong = {"id": self._new_id("chatcmpl"), "object": "chat.completion"}
        return {**wrong, "choices": "not a list"}

    def _error_body(self, status: int, message: str, error_type: str | None = None) -> Any:
        return _error_body(status, message, error_type)

    def _refuse(self, headers: Message, body: Any) -> Step | None:
        """401 to a request without the bearer `api_key` (when one is set); it still counts."""
        wanted = self.api_key
        if wanted is None or headers.get("authorization") == f"Bearer {wanted}":
            return None
        with self._lock:
            self.requests.append(body if isinstance(body, dict) else {})
        return Step(status=401, body=_error_body(401, "Incorrect API key provided."))

    def _fill_in(self, step: Step, request_body: dict[str, Any]) -> Step:
        """The request's model (else "fake-model") and estimated usage where they are None."""
        body = step.body
        if isinstance(body, dict) and body.get("object") == "chat.completion":
            body = dict(body)
            if body.get("model") is None:
                body["model"] = request_body.get("model") or "fake-model"
            if "usage" in body and body["usage"] is None:
                body["usage"] = _estimate_usage(request_body, body.get("choices"))
            step = replace(step, body=body)
        return step


def _estimate_usage(request_body: Any, choices: Any) -> dict[str, int]:
    """A deterministic stand-in for token counts: about four characters a token."""
    prompt = estimate_tokens(request_body)
    completion = estimate_tokens(choices)
    total = prompt + completion
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}
