"""Text for a terminal: the control characters a memory may hold, made visible and harmless.

A memory's text is whatever a model or a person wrote; printed as it is, `ESC [2J` clears the
screen, `ESC ] 0 ; ... BEL` retitles the window and `ESC ] 8 ; ; URL ST` hides a link behind
other words. What the memory commands print passes through here: every C0 control but newline
and tab, DEL and every C1 control is written as its escape (`\\x1b`), so the sequence shows as
text and does nothing. Stored text is never changed.
"""

from __future__ import annotations

import re

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_JSON_RAW = re.compile("[\x7f-\x9f]")
"""What JSON writers leave unescaped among the controls (they escape C0 themselves)."""


def printable(text: str) -> str:
    """`text` with each control character but newline and tab as a visible `\\xNN`."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def printable_json(text: str) -> str:
    """JSON text with DEL and the C1 controls written as `\\u00NN` escapes: the same JSON
    value, nothing a terminal acts on (JSON writers escape the C0 controls already)."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
