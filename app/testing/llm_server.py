"""FakeMessagesServer: a scripted loopback Anthropic Messages API for tests (no network)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from cairn.testing.cache_sim import MinTokens, PromptCacheSimulator, estimate_tokens, unmarked
from cairn.testing.loopback import LoopbackServer, Step

FAULT_KINDS = ("429", "529", "500", "slow", "drip", "malformed", "status")

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


def _error_body(status: int, message: str, error_type: str | None = None) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error_type or _ERROR_TYPES.get(status, "api_error"), "message": message},
        "request_id": None,
    }


class FakeMessagesServer(LoopbackServer):
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

    `queue_fault` kinds and options:

    - "429": rate_limit_error with `retry-after` (`retry_after` seconds, default 0.01);
    - "529": overloaded_error; "500": api_error (`retry_after` optional for both);
    - "slow": waits `delay` seconds (default 2.0) then answers `text` (default "late");
    - "drip": answers `text` (default "dripped"), the body's last `tail` bytes (default 20)
      sent one at a time, `interval` seconds apart (default 0.2): no single read waits long,
      the whole answer does; `dropped` is set when the client closes the connection first;
    - "malformed": 200 with `body` (default not JSON) or, with `shape="wrong"`, JSON that is
      not a message;
    - "status": any `status` with `message` and optional `error_type`.
    """

    FAULT_KINDS = FAULT_KINDS
    STATUS_FAULTS = ("429", "529", "500")
    SLOW_FAULT = "slow"
    route = "/v1/messages"
    request_id_header = "request-id"
    thread_name = "fake-messages-server"

    def __init__(
        self,
        default_text: str = "OK",
        model: str | None = None,
        responder: Responder | None = None,
        cache_min_tokens: MinTokens = 0,
    ) -> None:
        super().__init__(default_text, model, responder)
        self.cache = PromptCacheSimulator(cache_min_tokens)

    def queue_text(
        self,
        text: str,
        usage: tuple[int, int] | dict[str, int] | None = None,
        stop_reason: str = "end_turn",
    ) -> None:
        """Queue a plain text answer; `usage` is (input_tokens, output_tokens) or a dict."""
        self._push(Step(body=self._message([{"type": "text", "text": text}], stop_reason, usage)))

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
        self._push(Step(body=self._message(blocks, "tool_use", usage)))

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

    def _text_body(self, text: str) -> dict[str, Any]:
        return self._message([{"type": "text", "text": text}], "end_turn", None)

    def _wrong_body(self) -> dict[str, Any]:
        return {"type": "message", "id": self._new_id("msg"), "content": "not a list"}

    def _error_body(self, status: int, message: str, error_type: str | None = None) -> Any:
        return _error_body(status, message, error_type)

    def _wire_body(self, body: Any, request_id: str) -> Any:
        """An error body quotes its request id, as the API's do."""
        if isinstance(body, dict) and body.get("type") == "error":
            return {**body, "request_id": request_id}
        return body

    def _fill_in(self, step: Step, request_body: dict[str, Any]) -> Step:
        """The request's model (else "fake-model") and estimated usage where they are None."""
        body = step.body
        if isinstance(body, dict) and body.get("type") == "message":
            body = dict(body)
            if body.get("model") is None:
                body["model"] = request_body.get("model") or "fake-model"
            if "usage" in body and body["usage"] is None:
                body["usage"] = self._estimate_usage(request_body, body.get("content"))
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
