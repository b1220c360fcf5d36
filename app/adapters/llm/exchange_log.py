"""ExchangeLog: one redacted JSON line per LLM call in the run's llm.jsonl, and the request hash.

The log stays proportional to what is new: a message already written to the file is logged
again by reference (`{"ref": hash}`), not whole (a conversation is resent with every request),
and a text longer than LOG_TEXT_LIMIT is cut in the log, saying so."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cairn.interfaces.llm import LLMRequest, LLMResponse

REDACTED = "[REDACTED]"
LOG_TEXT_LIMIT = 64 * 1024
"""The most characters of one text (an answer, a message's content) a log line holds."""


def clip(value: Any, limit: int = LOG_TEXT_LIMIT) -> Any:
    """`value` (JSON) with every string over `limit` characters cut to `limit`, and a note of
    how much was cut."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return value[:limit] + f" [... {len(value) - limit:,} characters cut from the log]"
    if isinstance(value, list):
        return [clip(item, limit) for item in value]
    if isinstance(value, dict):
        return {key: clip(item, limit) for key, item in value.items()}
    return value


def message_ref(message: dict[str, Any]) -> str:
    """The short content hash a logged message is referred to by."""
    return hashlib.sha256(canonical_json(message).encode("utf-8")).hexdigest()[:24]


def request_payload(request: LLMRequest, model: str) -> dict[str, Any]:
    """The part of a request that decides the answer: model, prompt, tools and sampling."""
    return {
        "model": model,
        "system": request.system,
        "messages": [m.model_dump(mode="json") for m in request.messages],
        "tools": [t.model_dump(mode="json") for t in request.tools],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "tool_choice": request.tool_choice,
    }


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_hash(request: LLMRequest, model: str) -> str:
    """sha256 (hex) of the canonical JSON of `request_payload(request, model)`."""
    text = canonical_json(request_payload(request, model))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Redactor:
    """Replaces configured secret strings (raw and JSON-escaped forms) with [REDACTED]."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._forms: set[str] = set()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str) -> None:
        """Redact `secret` from now on; empty strings are ignored."""
        if not secret:
            return
        with self._lock:
            self._forms.add(secret)
            self._forms.add(json.dumps(secret, ensure_ascii=False)[1:-1])
            self._forms.add(json.dumps(secret)[1:-1])

    def __call__(self, text: str) -> str:
        """`text` with every secret replaced; longest secrets first."""
        with self._lock:
            forms = sorted(self._forms, key=len, reverse=True)
        for form in forms:
            text = text.replace(form, REDACTED)
        return text


def append_line(path: Path, line: str, lock: threading.Lock) -> None:
    """Append one line to `path` (creating its folder) and flush it."""
    with lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()


class ExchangeLog:
    """Appends one JSON line per LLM call, failures included, to a run's llm.jsonl.

    Fields: role, model, request_hash, request, response (or null), usage (or null),
    latency_ms, error (or null). In `request.messages`, a message this log wrote before is
    `{"ref": hash}`; a new one carries its `hash` (`read` puts them back whole). Texts over
    LOG_TEXT_LIMIT are cut (`clip`); `request_hash` is the whole request's. Every configured
    secret is removed from each line before it is written; each append is flushed.
    """

    def __init__(self, path: str | Path, secrets: Iterable[str] = ()) -> None:
        self.path = Path(path)
        self._redact = Redactor(secrets)
        self._lock = threading.Lock()
        self._written: set[str] = set()
        """The hashes of the messages this log has written whole."""

    def add_secret(self, secret: str) -> None:
        """Redact `secret` from every line written from now on (the API key, for one)."""
        self._redact.add(secret)

    def record(
        self,
        *,
        request: LLMRequest,
        model: str,
        response: LLMResponse | None,
        latency_ms: float,
        error: BaseException | None,
    ) -> None:
        """Append the line for one call: its answer, or the error it raised."""
        payload = request_payload(request, model)
        payload["messages"] = self._new_messages(payload["messages"])
        entry = {
            "role": request.role,
            "model": model,
            "request_hash": request_hash(request, model),
            "request": clip(payload),
            "response": clip(response.model_dump(mode="json")) if response is not None else None,
            "usage": response.usage.model_dump(mode="json") if response is not None else None,
            "latency_ms": round(latency_ms, 3),
            "error": (
                {"type": type(error).__name__, "message": str(error)} if error is not None else None
            ),
        }
        append_line(self.path, self._redact(canonical_json(entry)), self._lock)

    def _new_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`messages` as logged: each one written before as a reference, a new one whole with
        its hash."""
        logged: list[dict[str, Any]] = []
        with self._lock:
            for message in messages:
                ref = message_ref(message)
                if ref in self._written:
                    logged.append({"ref": ref})
                else:
                    self._written.add(ref)
                    logged.append({**message, "hash": ref})
        return logged

    def read(self) -> list[dict[str, Any]]:
        """Every entry written so far, oldest first (an empty list when there is no file), its
        messages whole again (a reference to a message the file does not hold stays one)."""
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        entries = [json.loads(line) for line in lines if line.strip()]
        seen: dict[str, dict[str, Any]] = {}
        for entry in entries:
            messages = entry.get("request", {}).get("messages", [])
            for i, message in enumerate(messages):
                if set(message) == {"ref"} and message["ref"] in seen:
                    messages[i] = seen[message["ref"]]
                elif "hash" in message:
                    ref = message.pop("hash")
                    seen[ref] = message
        return entries
