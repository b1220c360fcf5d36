"""Near-duplicate test for agent notes."""

from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Lower-case and collapse whitespace."""
    return _SPACE.sub(" ", text.lower()).strip()


def is_similar(text1: str, text2: str, ratio: float = 0.8) -> bool:
    """True when the normalized texts are equal, or one contains the other and is >= 80% of it."""
    a, b = normalize(text1), normalize(text2)
    if a == b:
        return True
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return bool(short) and short in long and len(short) / len(long) > ratio


def short_title(text: str, words: int = 8) -> str:
    """A title from the first words of a text."""
    parts = text.split()
    title = " ".join(parts[:words])
    return title + ("..." if len(parts) > words else "")
