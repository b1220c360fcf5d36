"""Reasoning capture: `<thinking>`, `<think>` and `<reflection>` blocks of an answer."""

from __future__ import annotations

import re

_TAGGED = re.compile(r"<(thinking|think|reflection)>(.*?)</\1>", re.DOTALL | re.IGNORECASE)


def extract_reasoning(text: str) -> tuple[str, str]:
    """Split an answer into (reasoning, rest): tagged blocks joined, and the text around them.

    An unclosed tag takes the rest of the text as reasoning.
    """
    parts = [m.group(2).strip() for m in _TAGGED.finditer(text)]
    rest = _TAGGED.sub("", text)
    unclosed = re.search(r"<(thinking|think|reflection)>", rest, re.IGNORECASE)
    if unclosed:
        parts.append(rest[unclosed.end() :].strip())
        rest = rest[: unclosed.start()]
    return "\n".join(p for p in parts if p), rest.strip()
