"""Escaping for Memories.md: titles, names and text lines that never read as structure."""

from __future__ import annotations

import json
import json.scanner
import unicodedata

_SPECIAL_STARTS = ("#", "*", "<", "[", "-", "\\", "=", ">", "|", "+", "`", "~", "_")


def _is_control(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


def escape_inline(value: str) -> str:
    """Escape a title, name or id so that it is one line with no markup."""
    if value.isprintable() and "\\" not in value and "*" not in value:
        return value  # printable: no control or separator characters (the common case)
    out: list[str] = []
    for char in value:
        if char == "\\":
            out.append("\\\\")
        elif char == "*":
            out.append("\\*")
        elif _is_control(char):
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return "".join(out)


def unescape_inline(value: str) -> str:
    """Undo `escape_inline` (unknown escapes keep the escaped character)."""
    if "\\" not in value:
        return value
    out: list[str] = []
    i = 0
    while i < len(value):
        char = value[i]
        if char != "\\" or i + 1 >= len(value):
            out.append(char)
            i += 1
            continue
        nxt = value[i + 1]
        width = 4 if nxt == "u" else 8 if nxt == "U" else 0
        digits = value[i + 2 : i + 2 + width]
        if width and len(digits) == width and all(c in "0123456789abcdefABCDEF" for c in digits):
            out.append(chr(int(digits, 16)))
            i += 2 + width
        else:
            out.append(nxt)
            i += 2
    return "".join(out)


def _needs_json(line: str) -> bool:
    if line != line.strip():
        return True
    return not line.isprintable() and any(_is_control(c) for c in line)


def escape_text(text: str) -> list[str]:
    """Render memory text as lines that can never be read as structure."""
    if text == "":
        return []
    lines: list[str] = []
    for line in text.split("\n"):
        if _needs_json(line):
            lines.append("\\" + json.dumps(line, ensure_ascii=True))
        elif line == "" or line.startswith(_SPECIAL_STARTS) or line[0].isdigit():
            lines.append("\\" + line)
        else:
            lines.append(line)
    return lines


def unescape_text_line(line: str) -> str:
    """Undo `escape_text` for one line (a line with no escape is taken as written)."""
    if not line.startswith("\\"):
        return line
    if line.startswith('\\"'):
        try:
            value = json.loads(line[1:])
        except ValueError:
            return line[1:]
        return value if isinstance(value, str) else line[1:]
    return line[1:]
