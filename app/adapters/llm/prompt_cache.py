"""PromptCachePlanner: where a Messages API request marks its cacheable prefix (`cache_control`).

Anthropic caches a prompt's prefix (tools, then system, then messages) up to a block marked
`cache_control: {"type": "ephemeral"}`, at most four marks a request; a later request that
starts with the same blocks up to a mark reads them at a tenth of the input price (writing
costs a quarter more). cairn's prompts repeat turn after turn: the tools, the system prompt and
the sections of the user message that did not change since the last request of the same kind.

The API caches nothing under the model's minimum prefix (`cache_minimums.py`: 1,024 tokens
for Sonnet, 4,096 for Haiku 4.5 and Opus 4.5/4.6, ...), so the planner places a mark only where
the prefix it ends holds at least `MARK_SHARE` of that minimum by its estimate (four
characters of JSON a token, which may undercount by a quarter); a mark on a shorter prefix
would only take one of the four places. The planner turns an `LLMRequest` into the wire's
tools, system and messages:

- a request shorter than that goes as it is;
- otherwise the last tool and the system prompt are marked when the prefix each ends is long
  enough, and the messages are read as blocks, each user text cut into paragraphs (at blank
  lines, never inside one);
- of those blocks, two more may be marked (each only when long enough): the longest prefix
  that an earlier request of the same lineage (role, model, tools, system, tool_choice: the
  API drops the cached messages when tool_choice changes) marked and that this one still has
  (a read), and the longest prefix this request shares with the lineage's previous request
  (a write, which the next request reads when those sections stay the same); when a section
  before the last such prefix changed, the write goes once to the block where that prefix
  ended, so the next request reads it again without waiting a turn for the change to prove
  stable;
- the messages up to the last marked one go cut into those paragraph blocks (they join to the
  same text), always the same way, so a marked prefix is the same blocks in every request
  that has it; the messages after it go as they are.

Nothing of this enters the `LLMRequest`: request hashes, cassettes and exchange logs stay as
they were.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cairn.adapters.llm.cache_minimums import min_cacheable_tokens
from cairn.interfaces.llm import LLMRequest

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
"""The API refuses a request with more `cache_control` marks."""
MARKS_KEPT = 16
"""Marked prefixes remembered per lineage (the API keeps a prefix five minutes after its last
use; a lineage's recent marks are the ones worth reading)."""
LINEAGES_KEPT = 64
CHARS_PER_TOKEN = 4
"""The estimate the planner sizes requests with (the loopback server counts the same way)."""
MARK_SHARE = 0.75
"""A prefix is marked from this share of the model's minimum (by the planner's estimate, which
may undercount the API's tokens by a quarter): a mark the API finds too short costs nothing."""

_PARAGRAPH = re.compile(r"(?<=\n\n)(?=\S)")
"""A cut after a blank line, before the next paragraph's first visible character."""


def split_paragraphs(text: str) -> list[str]:
    """`text` cut after each blank line; the pieces join back to `text`, and each holds some
    visible text (the API refuses a text block of whitespace only)."""
    pieces = _PARAGRAPH.split(text)
    if len(pieces) > 1 and not pieces[0].strip():
        pieces[1] = pieces[0] + pieces[1]
        del pieces[0]
    return [p for p in pieces if p] or [text]


@dataclass
class _Lineage:
    """What the planner remembers of one kind of request: the previous request's prefixes,
    the prefixes marked lately (newest last) and the anchor: the block where the last proven
    stable prefix ended."""

    previous: list[str] = field(default_factory=list)
    anchor: int = -1
    marked: OrderedDict[str, None] = field(default_factory=OrderedDict)


@dataclass
class WireRequest:
    """The tools, system and messages to send, and the breakpoints placed among them."""

    tools: list[dict[str, Any]]
    system: str | list[dict[str, Any]]
    messages: list[dict[str, Any]]
    breakpoints: int = 0


@dataclass
class _Block:
    """One block of the cut messages: its message, its wire form, its prefix's hash and the
    estimated tokens of the whole request up to its end (tools and system included)."""

    message: int
    block: dict[str, Any]
    prefix: str
    tokens: int = 0


class PromptCachePlanner:
    """Places `cache_control` marks on Messages API requests (see the module docstring).

    `min_tokens`: the model's minimum cacheable prefix in tokens, a function of the model
    (`min_cacheable_tokens`, the documented table, by default) or one number for every model
    (0 marks every request and every prefix). Thread-safe: agents and the summarizer may call
    from several threads.
    """

    def __init__(self, min_tokens: int | Callable[[str], int] = min_cacheable_tokens) -> None:
        self.min_tokens = min_tokens
        self._lock = threading.Lock()
        self._lineages: OrderedDict[str, _Lineage] = OrderedDict()

    def floor(self, model: str) -> int:
        """The estimated tokens a prefix of `model` needs before it is marked."""
        minimum = self.min_tokens if isinstance(self.min_tokens, int) else self.min_tokens(model)
        return int(minimum * MARK_SHARE)

    def plan(self, request: LLMRequest, model: str) -> WireRequest:
        """The wire form of `request` for `model`, with its cache breakpoints."""
        tools = [t.model_dump(mode="json") for t in request.tools]
        messages = [m.model_dump(mode="json") for m in request.messages]
        plain = WireRequest(tools=tools, system=request.system, messages=messages)
        floor = self.floor(model)
        size = len(json.dumps([tools, request.system, messages])) // CHARS_PER_TOKEN
        if size < floor:
            return plain
        tools_end = len(json.dumps(tools)) // CHARS_PER_TOKEN if tools else 0
        system_end = tools_end + len(json.dumps(request.system)) // CHARS_PER_TOKEN
        lineage_key = _digest(request.role, model, tools, request.system, request.tool_choice)
        blocks, cut_messages = _cut(messages, lineage_key, system_end)
        prefixes = [b.prefix for b in blocks]
        long_enough = [b.tokens >= floor for b in blocks]
        with self._lock:
            lineage = self._lineage(lineage_key)
            shared = _common_length(lineage.previous, prefixes)
            read = max((i for i, p in enumerate(prefixes) if p in lineage.marked), default=-1)
            write = -1
            if shared - 1 > read:  # proven: two requests in a row had it
                write = lineage.anchor = shared - 1
            elif read < lineage.anchor < len(prefixes):
                # what came before it changed: written again now, once (proven again or not)
                write, lineage.anchor = lineage.anchor, -1
            for index in (read, write):
                if index >= 0:
                    lineage.marked.pop(prefixes[index], None)
                    lineage.marked[prefixes[index]] = None
            while len(lineage.marked) > MARKS_KEPT:
                lineage.marked.popitem(last=False)
            lineage.previous = prefixes
        marks = 0
        if tools and tools_end >= floor:
            tools = [*tools[:-1], {**tools[-1], "cache_control": dict(EPHEMERAL)}]
            marks += 1
        system: str | list[dict[str, Any]] = request.system
        if request.system and system_end >= floor:
            system = [{"type": "text", "text": request.system, "cache_control": dict(EPHEMERAL)}]
            marks += 1
        last_cut = -1
        for index in (read, write):
            if index >= 0 and long_enough[index] and marks < MAX_BREAKPOINTS:
                blocks[index].block["cache_control"] = dict(EPHEMERAL)
                last_cut = max(last_cut, blocks[index].message)
                marks += 1
        wire_messages = cut_messages[: last_cut + 1] + messages[last_cut + 1 :]
        return WireRequest(tools=tools, system=system, messages=wire_messages, breakpoints=marks)

    def _lineage(self, key: str) -> _Lineage:
        lineage = self._lineages.pop(key, None) or _Lineage()
        self._lineages[key] = lineage
        while len(self._lineages) > LINEAGES_KEPT:
            self._lineages.popitem(last=False)
        return lineage


def _cut(
    messages: list[dict[str, Any]], seed: str, before: int = 0
) -> tuple[list[_Block], list[dict[str, Any]]]:
    """The messages with each user text cut into paragraph blocks, and every block with the
    hash of the prefix it ends and the estimated tokens up to its end (`before`: those of the
    tools and system; the blocks of all messages, in order)."""
    blocks: list[_Block] = []
    chars = 0
    wire: list[dict[str, Any]] = []
    running = hashlib.sha256(seed.encode("utf-8"))
    for number, message in enumerate(messages):
        content = message["content"]
        parts: list[dict[str, Any]] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        )
        out: list[dict[str, Any]] = []
        running.update(f"\0{message['role']}\0".encode())
        for part in parts:
            pieces = [part]
            if message["role"] == "user" and set(part) == {"type", "text"}:
                pieces = [{"type": "text", "text": t} for t in split_paragraphs(part["text"])]
            for piece in pieces:
                block = dict(piece)
                wire_text = json.dumps(block, sort_keys=True)
                running.update(wire_text.encode("utf-8"))
                chars += len(wire_text)
                tokens = before + chars // CHARS_PER_TOKEN
                blocks.append(_Block(number, block, running.copy().hexdigest(), tokens))
                out.append(block)
        wire.append({"role": message["role"], "content": out})
    return blocks, wire


def _common_length(before: list[str], now: list[str]) -> int:
    """How many leading prefixes two requests share (equal prefix hashes mean equal blocks)."""
    count = 0
    for a, b in zip(before, now, strict=False):
        if a != b:
            break
        count += 1
    return count


def _digest(*parts: object) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
