"""PromptCacheSimulator: the loopback Messages API server's stand-in for Anthropic's prompt cache.

A request's prefix up to a block marked `cache_control` is remembered per model; a later
request of that model with the same marked prefix reports its tokens as
`cache_read_input_tokens`, and the tokens from there to its last mark not yet remembered as
`cache_creation_input_tokens` (written now); `input_tokens` is the rest. Tokens are the server's
usual estimate (about four characters of the request's JSON a token), the request counted as if
it were unmarked and unsplit, so caching changes how tokens are billed, never how many there
are. Prefixes shorter than `min_tokens` are not cached (the API's minimum). Nothing expires.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from cairn.adapters.llm.cache_minimums import min_cacheable_tokens

MinTokens = int | Mapping[str, int] | Callable[[str], int]

CHARS_PER_TOKEN = 4


def api_min_cache_tokens(model: str) -> int:
    """The shortest prefix Anthropic's API caches for `model`, as documented (for `min_tokens`):
    the one table, `cairn.adapters.llm.cache_minimums`, that the planner reads too."""
    return min_cacheable_tokens(model)


def unmarked(body: dict[str, Any]) -> dict[str, Any]:
    """`body` as it would be sent without caching: no `cache_control`, a system prompt of one
    text block as a string, a message's adjacent text blocks joined (all text: a string)."""
    out: dict[str, Any] = _strip(body)
    system = out.get("system")
    if isinstance(system, list) and all(_plain_text(b) for b in system):
        out["system"] = "".join(str(b["text"]) for b in system)
    messages = out.get("messages")
    if isinstance(messages, list):
        out["messages"] = [_joined(m) if isinstance(m, dict) else m for m in messages]
    return out


def estimate_tokens(value: Any) -> int:
    """About four characters of JSON a token (at least one)."""
    return max(1, len(json.dumps(value, sort_keys=True)) // CHARS_PER_TOKEN)


class PromptCacheSimulator:
    """Remembers marked prefixes per model and bills a request's input tokens (see the
    module docstring). `min_tokens`: one minimum for every model, a model -> minimum map (0 for
    a model it does not name) or a function of the model (`api_min_cache_tokens`: the API's).
    Thread-safe."""

    def __init__(self, min_tokens: MinTokens = 0) -> None:
        self.min_tokens = min_tokens
        self._lock = threading.Lock()
        self._stored: dict[str, set[str]] = {}

    def usage(self, body: dict[str, Any], input_tokens: int) -> dict[str, int] | None:
        """The input side of `body`'s usage, `input_tokens` (its unmarked estimate) split into
        read, written and plain; None when `body` marks nothing."""
        model = str(body.get("model"))
        units = _units(body)
        total_chars = sum(chars for chars, _, _ in units) or 1
        marks: list[tuple[str, int]] = []
        running = hashlib.sha256(model.encode("utf-8"))
        seen = 0
        for chars, text, marked in units:
            running.update(text.encode("utf-8"))
            seen += chars
            if marked:
                marks.append((running.hexdigest(), input_tokens * seen // total_chars))
        if not marks:
            return None
        floor = self._minimum(model)
        cacheable = [(key, tokens) for key, tokens in marks if tokens >= max(floor, 1)]
        with self._lock:
            stored = self._stored.setdefault(model, set())
            read = max((tokens for key, tokens in cacheable if key in stored), default=0)
            last = max((tokens for _, tokens in cacheable), default=0)
            stored.update(key for key, _ in cacheable)
        written = max(0, last - read)
        return {
            "input_tokens": input_tokens - read - written,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }

    def _minimum(self, model: str) -> int:
        if isinstance(self.min_tokens, int):
            return self.min_tokens
        if isinstance(self.min_tokens, Mapping):
            return self.min_tokens.get(model, 0)
        return self.min_tokens(model)


def _units(body: dict[str, Any]) -> list[tuple[int, str, bool]]:
    """The request in cache order (tools, system, messages), one unit a block: its content's
    length (text alone for text, so cutting a text into blocks changes no count), its
    canonical form without `cache_control` (for the prefix's hash) and whether it is marked."""
    units: list[tuple[int, str, bool]] = []

    def add(block: Any, prefix: str = "") -> None:
        marked = isinstance(block, dict) and "cache_control" in block
        clean = _strip(block)
        text = json.dumps(clean, sort_keys=True)
        size = len(clean["text"]) if _plain_text(clean) else len(text)
        units.append((size, prefix + text, marked))

    for tool in body.get("tools") or []:
        add(tool, "tool:")
    system = body.get("system")
    if isinstance(system, str) and system:
        add({"type": "text", "text": system}, "system:")
    elif isinstance(system, list):
        for block in system:
            add(block, "system:")
    # a change of tool_choice invalidates the cached messages, not the tools and system
    units.append((0, "tool_choice:" + json.dumps(body.get("tool_choice"), sort_keys=True), False))
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for number, block in enumerate(blocks or []):
            add(block, f"{message.get('role')}{'+' if number else ':'}")
    return units


def _strip(value: Any) -> Any:
    """`value` without any `cache_control` key, at any depth."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _plain_text(block: Any) -> bool:
    return isinstance(block, dict) and set(block) == {"type", "text"} and block["type"] == "text"


def _joined(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list):
        return message
    merged: list[Any] = []
    for block in content:
        if merged and _plain_text(block) and _plain_text(merged[-1]):
            merged[-1] = {"type": "text", "text": merged[-1]["text"] + block["text"]}
        else:
            merged.append(block)
    if merged and all(_plain_text(b) for b in merged):
        return {**message, "content": "".join(b["text"] for b in merged)}
    return {**message, "content": merged}
