"""One memory block of a Memories.md, written and read: header, comment, display line, text."""

from __future__ import annotations

import functools
import json
import json.scanner
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from cairn.adapters.storage.markdown_escape import (
    escape_inline,
    escape_text,
    unescape_inline,
    unescape_text_line,
)
from cairn.adapters.storage.markdown_layout import (
    COMMENT_END,
    COMMENT_START,
    bounded_int,
    shown_item,
)
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
    source_of_tags,
)

HEADER_RE = re.compile(
    r"^\*\*\[(?P<tag>[^\]]*)\] (?P<title>[^\\*]*(?:\\.[^\\*]*)*)\*\*(?: \*\((?P<meta>[^()]*)\)\*)?$"
)
DISPLAY_RE = re.compile(
    r'^\[(?:Superseded(?: at (?:Ep\d+ )?T\d+)?(?: by "(?P<title>.*)")?|Invalidated)\]$'
)
_PERSISTENCE_RE = re.compile(r"^[A-Za-z][A-Za-z_]*$")


_HEADER_FIELDS = frozenset(
    {"scope", "category", "status", "title", "text", "episode", "turn_start", "turn_end"}
    | {"score_delta"}
)
_STATUSES = {s.value for s in MemoryStatus}
_COMMENT_EXCLUDED = set(_HEADER_FIELDS | {"id"})
_ALWAYS = object()
"""A default no value equals: the field is always written (a default factory other than
`list`, such as `created_at`'s clock)."""


def _comment_default(info: FieldInfo) -> object:
    if info.default_factory is None:
        return info.default
    return [] if info.default_factory is list else _ALWAYS


_COMMENT_FIELDS = tuple(
    (name, _comment_default(info))
    for name, info in MemoryEntry.model_fields.items()
    if name not in _COMMENT_EXCLUDED
)
"""The fields a block's comment may hold, in the model's order, each with its default: what
`model_dump(exclude_defaults=True)` would give, without a dump per written block (a block is
rendered at every write)."""


_NESTED = ("lesson", "ledger")
"""The fields that hold a model of their own (a lesson's claims, a ledger's commands)."""

_UTC_OFFSET = timedelta(0)


def to_the_second(value: datetime) -> datetime:
    """`value` as the file keeps it: without its fraction of a second."""
    return value.replace(microsecond=0) if value.microsecond else value


def as_written(entry: MemoryEntry) -> MemoryEntry:
    """`entry` as a reload of the file gives it back: timestamps to the second (the entry
    itself when it has no fraction of a second)."""
    since = entry.since_timestamp
    if not entry.created_at.microsecond and (since is None or not since.microsecond):
        return entry
    update: dict[str, Any] = {"created_at": to_the_second(entry.created_at)}
    if since is not None:
        update["since_timestamp"] = to_the_second(since)
    return entry.model_copy(update=update)


def _time_json(value: datetime) -> str:
    """`2026-11-23T09:31:46Z` (another UTC offset as `+02:00`, none when naive)."""
    text = to_the_second(value).isoformat()
    if value.utcoffset() == _UTC_OFFSET:
        return text.removesuffix("+00:00") + "Z"
    return text


def _tag(entry: MemoryEntry) -> str:
    persistence = entry.persistence
    if persistence is not None and _PERSISTENCE_RE.match(persistence):
        return f"{entry.category.value} - {persistence} - {entry.status.value}"
    if entry.status is MemoryStatus.ACTIVE:
        return entry.category.value
    return f"{entry.category.value} - {entry.status.value}"


def _header_meta(entry: MemoryEntry) -> str:
    parts = entry.meta
    return f" *({', '.join(parts)})*" if parts else ""


def comment_fields(entry: MemoryEntry) -> dict[str, Any]:
    """The id, then the fields a comment may hold that differ from their defaults, in the
    model's order (what `model_dump(exclude_defaults=True)` keeps; enums are str, so they
    encode as their values; datetimes as they are)."""
    data: dict[str, Any] = {"id": entry.id}
    values = entry.__dict__
    for name, default in _COMMENT_FIELDS:
        value = values[name]
        if default is _ALWAYS or value != default:
            data[name] = value
    for name in _NESTED:  # models of their own: written as their JSON objects
        if (value := values[name]) is not None:
            data[name] = value.model_dump(mode="json", exclude_defaults=True)
    if ways := values["ways_in"]:
        data["ways_in"] = [w.model_dump(mode="json", exclude_defaults=True) for w in ways]
    return data


def _comment(entry: MemoryEntry, section_name: str | None) -> dict[str, Any]:
    data = comment_fields(entry)
    data["created_at"] = _time_json(entry.created_at)
    if entry.since_timestamp is not None:
        data["since_timestamp"] = _time_json(entry.since_timestamp)
    if entry.turn_end is not None and entry.turn_start is None:
        data["turn_end"] = entry.turn_end
    if entry.persistence is not None and _PERSISTENCE_RE.match(entry.persistence):
        data.pop("persistence", None)
    if entry.turn_start is not None and entry.turn_end is None:
        data["turn_end"] = None
    if entry.scope is MemoryScope.LOCATION:
        data.pop("location_id", None)
        data.pop("location_name", None)
        if entry.location_name != section_name:
            data["location_name"] = entry.location_name
    if entry.scope is MemoryScope.NPC and entry.npc_ids == [section_name]:
        data.pop("npc_ids", None)
    implied = source_of_tags(entry.tags)
    if implied is entry.source:
        data.pop("source", None)  # the tags already say it
    elif implied is not None:
        data["source"] = entry.source.value  # the tags would say otherwise
    return data


_COMMENT_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))


def _comment_json(data: dict[str, Any]) -> str:
    text = _COMMENT_ENCODER.encode(data)
    for char in ("\u2028", "\u2029", "\x85"):
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text.replace("-->", "--\\u003e")


def _superseded_at(entry: MemoryEntry, successor: MemoryEntry) -> str:
    """" at T12", or " at Ep2 T3" in a later episode: the turn the successor was written at
    (the last of its turns), which is never before the memory's own. "" when the successor
    tells no turn, or tells one before the memory's (a memory written by hand, or by
    another agent counting its own turns): no turn is better than a wrong one."""
    turn = successor.turn_end if successor.turn_end is not None else successor.turn_start
    if turn is None:
        return ""
    episode = entry.episode
    mine = entry.turn_end if entry.turn_end is not None else entry.turn_start
    if successor.episode is not None and episode is not None and successor.episode != episode:
        return f" at Ep{successor.episode} T{turn}" if successor.episode > episode else ""
    return f" at T{turn}" if mine is None or turn >= mine else ""


def display_line(entry: MemoryEntry, successor: MemoryEntry | None) -> str | None:
    """The `[Superseded ...]` line shown under a SUPERSEDED memory (display only)."""
    if entry.status is not MemoryStatus.SUPERSEDED:
        return None
    if entry.superseded_by is None:
        return "[Invalidated]"
    if successor is None:
        return "[Superseded]"
    return f'[Superseded{_superseded_at(entry, successor)} by "{escape_inline(successor.title)}"]'


def render_entry(entry: MemoryEntry, section_name: str | None, display: str | None) -> str:
    """One memory block (no trailing blank line)."""
    lines = [
        f"**[{_tag(entry)}] {escape_inline(entry.title)}**{_header_meta(entry)}",
        f"<!-- cairn {_comment_json(_comment(entry, section_name))} -->",
    ]
    if display is not None:
        lines.append(display)
    lines.extend(escape_text(entry.text))
    return "\n".join(lines)


# -- reading ---------------------------------------------------------------------------------

# The C scanner behind json.loads, called directly: one JSON value from an index, no wrapping.
_scan_json: Callable[[str, int], tuple[Any, int]]
_scan_json = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_CATEGORIES = frozenset(MemoryCategory.__members__)


NOT_A_HEADER = "not a memory header (**[CATEGORY] Title** *(EpN, Tn, +s)*)"


def read_block(
    lines: list[str], in_section: bool
) -> tuple[str, dict[str, Any], dict[str, Any], int, str | None] | str:
    """A memory block's title (unescaped), header fields and comment, the line its text starts
    on and the title its `[Superseded ... by "Title"]` line names (None when none); or an error
    message (`NOT_A_HEADER` when its first line is no memory header; `in_section`: the block
    stands in a location, NPC or world section)."""
    header = HEADER_RE.match(lines[0])
    if header is None:
        return NOT_A_HEADER
    tag, title, meta = header.groups()
    if not title:
        return NOT_A_HEADER
    if not in_section:
        return "memory outside a location, NPC or world section"
    fields = header_fields(tag, meta or "")
    if isinstance(fields, str):
        return fields
    comment: dict[str, Any] = {}
    start = 1
    count = len(lines)
    if count > 1 and lines[1].startswith(COMMENT_START):
        parsed = comment_object(lines[1])
        if isinstance(parsed, str):
            return parsed
        comment, start = parsed, 2
    display_title: str | None = None
    if count > start and lines[start][0] == "[":
        shown = DISPLAY_RE.match(lines[start])
        if shown is not None:
            display_title = shown.group("title")
            start += 1
    title = unescape_inline(title) if "\\" in title else title
    return title, fields, comment, start, display_title


def link_by_title(memories: dict[str, MemoryEntry], pending: dict[str, str]) -> None:
    """Older files have only `[Superseded ... by "Title"]` (`pending`: the memories' ids and
    those titles): link each when exactly one memory has that title."""
    if not pending:
        return
    by_title: dict[str, list[str]] = {}
    for memory in memories.values():
        by_title.setdefault(memory.title, []).append(memory.id)
    for entry_id, title in pending.items():
        matches = by_title.get(title, [])
        if len(matches) == 1:
            memories[entry_id] = memories[entry_id].model_copy(update={"superseded_by": matches[0]})


def validation_message(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}" for err in error.errors()
    )


def block_text(lines: list[str], start: int, count: int) -> str:
    """The memory text of a block: its lines from `start` of `count`, unescaped (lines of a
    block are never empty)."""
    if start == count - 1:
        line = lines[start]
        return unescape_text_line(line) if line[0] == "\\" else line
    return "\n".join(
        unescape_text_line(line) if line[0] == "\\" else line for line in lines[start:]
    )


def comment_object(line: str) -> dict[str, Any] | str:
    """The fields of a `<!-- cairn {...} -->` line, or an error message."""
    if not line.endswith(COMMENT_END):
        return f"the cairn comment does not end with {COMMENT_END.strip()!r}"
    body = line[len(COMMENT_START) : -len(COMMENT_END)]
    if _nesting(body) > _MAX_NESTING:
        return f"the cairn comment nests more than {_MAX_NESTING} levels deep"
    try:
        value, end = _scan_json(body, 0)
        if end != len(body):
            raise ValueError(body)
    except (ValueError, StopIteration, RecursionError):  # json.loads explains what is wrong
        try:
            value = json.loads(body)
        except ValueError as e:
            return f"the cairn comment is not valid JSON ({e})"
        except RecursionError:  # (only with the interpreter's stack nearly used up)
            return "the cairn comment nests too deeply to read"
    if not isinstance(value, dict):
        return "the cairn comment is not a JSON object"
    return value


_MAX_NESTING = 32
"""How deep the JSON of a cairn comment may nest (cairn writes two levels: an object of lists).
A deeper one is a problem on its line, not a RecursionError from the JSON reader."""
_JSON_MARKS = re.compile(r'\\.|["\[\]{}]')


def _nesting(body: str) -> int:
    """How deep the JSON text `body` nests its arrays and objects (brackets inside strings do
    not count); measured only when it has more opening brackets than `_MAX_NESTING`."""
    if body.count("[") + body.count("{") <= _MAX_NESTING:
        return 0
    depth = deepest = 0
    in_string = False
    for mark in _JSON_MARKS.finditer(body):
        char = mark.group()
        if char == '"':
            in_string = not in_string
        elif in_string or len(char) == 2:
            continue  # (an escape: `\"` does not end a string)
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


@functools.lru_cache(maxsize=4096)
def header_fields(tag: str, meta: str) -> dict[str, Any] | str:
    """The fields of a header's tag and metadata, or an error message (cached: read-only)."""
    tag_items = _tag_items(tag)
    if isinstance(tag_items, str):
        return tag_items
    meta_items = _meta_items(meta)
    if isinstance(meta_items, str):
        return meta_items
    return dict(tag_items + meta_items)


def _tag_items(tag: str) -> tuple[tuple[str, Any], ...] | str:
    """The fields of a header tag `CATEGORY[ - PERSISTENCE][ - STATUS]`, or an error message."""
    if tag in _CATEGORIES:
        return (("category", tag),)
    parts = [p.strip() for p in tag.split(" - ")]
    if parts[0] not in _CATEGORIES:
        return f"category: {parts[0]!r} is not one of {', '.join(MemoryCategory.__members__)}"
    items: list[tuple[str, Any]] = [("category", parts[0])]
    if len(parts) == 2:
        items.append(("status" if parts[1] in _STATUSES else "persistence", parts[1]))
    elif len(parts) == 3:
        items += [("persistence", parts[1]), ("status", parts[2])]
    elif len(parts) > 3:
        return f"tag [{tag}] has more than three parts"
    status = dict(items).get("status", "ACTIVE")
    if status not in _STATUSES:
        return f"status: {status!r} is not one of {', '.join(sorted(_STATUSES))}"
    return tuple(items)


def _meta_items(meta: str) -> tuple[tuple[str, Any], ...] | str:
    """The fields of header metadata `EpN, Tn[-m], +s` (any subset, any order), or an error.

    Digits are decimal digits in any script (what a regex `\\d` matches), as before.
    """
    items: list[tuple[str, Any]] = []
    for item in (p.strip() for p in meta.split(",")):
        first = item[:1]
        numbers: tuple[int | None, ...]
        if first == "E" and item.startswith("Ep") and item[2:].isdecimal():
            numbers = (bounded_int(item[2:]),)
            items.append(("episode", numbers[0]))
        elif first == "T" and (turns := _turns(item[1:])) is not None:
            numbers = turns
            items += [("turn_start", turns[0]), ("turn_end", turns[1])]
        elif first in ("+", "-") and item[1:].isdecimal():
            numbers = (bounded_int(item),)
            items.append(("score_delta", numbers[0]))
        elif item:
            return f"metadata item {shown_item(item)} is not EpN, Tn[-m] or a score change"
        else:
            continue
        if None in numbers:
            return f"metadata item {shown_item(item)}: the number is out of range (64-bit)"
    return tuple(items)


def _turns(value: str) -> tuple[int | None, int | None] | None:
    """`n` or `n-m` as (start, end), else None; a number out of range is None."""
    start, dash, end = value.partition("-")
    if not start.isdecimal() or (dash and not end.isdecimal()):
        return None
    return bounded_int(start), bounded_int(end or start)
