"""Offline token estimate used to size prompt sections and budgets."""

from __future__ import annotations

import json
import math
from functools import lru_cache

from cairn.interfaces.llm import LLMRequest


def estimate_tokens(text: str) -> int:
    """Estimate the tokens ``text`` costs in a prompt, offline and deterministically.

    Method: ``max(ceil(chars / 4), ceil(words * 1.3))``. Four characters per token is the usual
    rule of thumb for English with BPE tokenizers; the word-based floor keeps texts made of many
    short words (commands, lists, numbers) from being under-counted. The empty string costs 0.
    It is an estimate for budgeting, not an exact count for any particular model.
    """
    if not text:
        return 0
    return estimate_from_counts(len(text), word_count(text))


@lru_cache(maxsize=1024)
def word_count(text: str) -> int:
    """Whitespace-separated words in `text` (kept: a prompt's sections repeat turn to turn)."""
    return len(text.split())


def estimate_from_counts(chars: int, words: int) -> int:
    """`estimate_tokens` of a text with this many characters and words."""
    if chars <= 0:
        return 0
    return max(math.ceil(chars / 4), math.ceil(words * 13 / 10))


def request_tokens(request: LLMRequest) -> int:
    """`estimate_tokens` of everything a model request sends: the system prompt, the tools
    (their names, descriptions and input schemas, as JSON) and every message (text as it is,
    content blocks as JSON). The figure a turn's context is measured by: the prompt alone
    leaves out the system prompt and the tools, about half of a request."""
    total = estimate_tokens(request.system)
    if request.tools:
        total += estimate_tokens(_json([t.model_dump(mode="json") for t in request.tools]))
    for message in request.messages:
        content = message.content
        total += estimate_tokens(content if isinstance(content, str) else _json(content))
    return total


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
