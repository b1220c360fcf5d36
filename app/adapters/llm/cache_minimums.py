"""The shortest prompt prefix Anthropic's API caches, per model: the one table of them.

The API caches a request's prefix up to a `cache_control` mark only when that prefix holds at
least the model's minimum number of tokens; a shorter marked prefix is processed as if it were
unmarked (nothing written, nothing read, no charge). Anthropic's prompt-caching documentation
gives these minimums (as quoted in anthropics/anthropic-sdk-python#1194, and in issue 38; the
API's own count of tokens, not cairn's estimate of four characters a token):

| models                                                     | minimum |
|------------------------------------------------------------|---------|
| Claude Sonnet 4.6, Sonnet 4.5, Sonnet 4, Sonnet 3.7        | 1,024   |
| Claude Opus 4.1, Opus 4                                    | 1,024   |
| Claude Opus 4.6, Opus 4.5, Haiku 4.5                       | 4,096   |
| Claude Haiku 3.5, Haiku 3                                  | 2,048   |

A dated snapshot (`claude-sonnet-4-5-20250929`) has its model's minimum. A model the table does
not name gets `DEFAULT_MINIMUM`, the lowest documented one: a mark placed too early costs
nothing (the API ignores it), a mark withheld from a model that would have cached loses the
cache, so the guess errs towards marking. The same report (#1194) saw Sonnet 4.6 cache only
from about 2,048 tokens in practice: the documented figure is kept, and a prefix between the
two may go uncached by the real API. Both the planner (`prompt_cache.py`, which places
marks) and the loopback server's simulator (`cairn.testing.cache_sim`) read this table.
"""

from __future__ import annotations

import re

DEFAULT_MINIMUM = 1024
"""The minimum of a model the table does not name (see the module docstring)."""

CACHE_MINIMUMS: dict[str, int] = {
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-sonnet-4-0": 1024,
    "claude-sonnet-4": 1024,
    "claude-3-7-sonnet": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4-0": 1024,
    "claude-opus-4": 1024,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
"""Tokens a marked prefix needs before the API caches it, by model id (see the docstring)."""

_SNAPSHOT = re.compile(r"-(?:\d{8}|latest)$")


def min_cacheable_tokens(model: str) -> int:
    """The shortest prefix (tokens) the API caches for `model`: its entry, else the entry of
    the model it is a dated snapshot of, else `DEFAULT_MINIMUM`."""
    name = model.strip().lower()
    found = CACHE_MINIMUMS.get(name)
    if found is None:
        found = CACHE_MINIMUMS.get(_SNAPSHOT.sub("", name))
    return DEFAULT_MINIMUM if found is None else found
