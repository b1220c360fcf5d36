"""How much of a prompt says again what it already said: the share of its repeated lines.

A line is compared by its words: lower case, every run of other characters one space, so
"- [800] Cellar: it is dark (Ep1, T3)" and "[DANGER] Cellar: it is dark" differ only by what
each adds. A line repeats an earlier one when either holds the other's words whole, in order
(a memory's text shown again inside a longer line of another section counts). Lines shorter
than `MIN_CHARS` in that form (a heading, a room name, "Taken.") never count as repeats: short
words recur without saying anything twice. The share is the repeated lines over all the
non-blank lines of the text (issue 38's goal for the adventurer: at most 5%);
`repeated_char_share` weighs each line by its length (a repeated paragraph counts for more
than a repeated short line).
"""

from __future__ import annotations

import re

MIN_CHARS = 24
"""The shortest line (in its compared form) that can count as a repeat."""

GOAL = 0.05
"""Issue 38's goal for the adventurer prompt's share of repeated lines."""

_NOT_WORD = re.compile(r"[^0-9a-z]+")


def _words(line: str) -> str:
    return _NOT_WORD.sub(" ", line.lower()).strip()


def repeated_lines(text: str, min_chars: int = MIN_CHARS) -> list[str]:
    """The lines of `text` that say again what an earlier line said (see the module
    docstring), in order; each repeat once, the first saying of it never."""
    seen: list[str] = []
    repeats: list[str] = []
    for line in text.splitlines():
        words = _words(line)
        if len(words) < min_chars:
            continue
        padded = f" {words} "
        if any(f" {earlier} " in padded or padded in f" {earlier} " for earlier in seen):
            repeats.append(line)
        seen.append(words)
    return repeats


def repeated_line_share(text: str, min_chars: int = MIN_CHARS) -> float:
    """The share of the non-blank lines of `text` that repeat an earlier line (0.0 for a text
    without any line)."""
    lines = sum(1 for line in text.splitlines() if line.strip())
    return len(repeated_lines(text, min_chars)) / lines if lines else 0.0


def repeated_char_share(text: str, min_chars: int = MIN_CHARS) -> float:
    """The share of the characters of the non-blank lines of `text` that lie in lines
    repeating an earlier one (0.0 for a text without any line)."""
    total = sum(len(line.strip()) for line in text.splitlines())
    repeats = sum(len(line.strip()) for line in repeated_lines(text, min_chars))
    return repeats / total if total else 0.0
