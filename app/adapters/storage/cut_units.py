"""Cut-unit recovery: what an appended unit of work cut short leaves in a Memories.md, undone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cairn.adapters.storage.markdown_layout import (
    APPENDED_HEADERS,
    ARCHIVE_HEADER,
    COMMENT_START,
    RECENT_HEADER,
    UNIT_START,
    RawBlock,
)
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.models.memory import LocationRecord, MemoryEntry, ParseProblem

_CAIRN_LINE_STARTS = ("**[", "**Visits:** ", COMMENT_START, "## Location ", "## NPC ", "## World")
"""How the lines of a block cairn appends begin: a memory's header, a location's visits, the
comment under a header, a section's header."""


def cut_opening(line: str, appended: bool) -> bool:
    """Whether `line` can be what a cut left of the line that opens an appended part (its
    header, written after the file's folded part) or, in one, a unit of work."""
    openings = (RECENT_HEADER, ARCHIVE_HEADER, UNIT_START) if appended else APPENDED_HEADERS
    return any(o.startswith(line) and o != line for o in openings)


CAIRN_HEADERS: tuple[str, ...] = ("# Location", "# NPC", "# World", "# Recent", "# Archived")
CAIRN_HEADERS += ("## Location", "## NPC", "## World")
"""How the headers of cairn's parts and sections begin: a section under a header that begins
so is never a person's note (it is cairn's, misplaced or mistyped)."""
_CAIRN_PREFIXES = (*_CAIRN_LINE_STARTS, *CAIRN_HEADERS, RECENT_HEADER, ARCHIVE_HEADER, UNIT_START)
_LONGEST_PREFIX = max(map(len, _CAIRN_PREFIXES))


def prose_line(line: str) -> bool:
    """Whether `line` can be a line of a person's note: not a memory's header, visits line or
    cairn comment, nor what a cut leaves of one of cairn's lines or headers (a line that
    stops before one is complete, such as `<!-- cai` or `## Loc`). A blank line is."""
    if line.startswith(_CAIRN_LINE_STARTS) or COMMENT_START in line:
        return False
    if not line or len(line) >= _LONGEST_PREFIX:
        return True
    return not any(p.startswith(line) for p in _CAIRN_PREFIXES)


def _cut_cairn_line(line: str) -> bool:
    """Whether `line` can be what a cut left of one of cairn's block lines (it starts as one
    does, or stops before its start is complete)."""
    return any(line.startswith(p) or p.startswith(line) for p in _CAIRN_LINE_STARTS)


@dataclass
class Unit:
    """An appended unit of work being read: what its cairn blocks and records replaced (None:
    new), and the raw blocks cut-off cairn blocks left, so it can be undone if it never ends."""

    memories: dict[str, MemoryEntry | None] = field(default_factory=dict)
    records: dict[int, LocationRecord | None] = field(default_factory=dict)
    unpinned: set[str] = field(default_factory=set)
    """The memories it replaced whose version before had no time from cairn's comment."""
    raw: list[tuple[RawBlock, ParseProblem]] = field(default_factory=list)
    tail: tuple[RawBlock, ParseProblem] | None = None
    """The raw block read last in the unit, when nothing was read after it: where a cut fell
    (`undo` drops it when it is what a cut leaves of a line cairn writes)."""
    cut_memory: str | None = None
    """The memory read last in the unit from a header line alone (no comment, no text), when
    nothing was read after it: what a cut right after a header's line leaves of cairn's block
    (`undo` forgets it)."""
    started: bool = True
    """False: cairn blocks found outside any unit (the tail of a unit an editor's save wrote
    over): undone even when an end marker follows."""

    def read_past(self) -> None:
        """Something was read after the last block: that block is no cut."""
        self.tail = None
        self.cut_memory = None

    def undo(
        self,
        cache: MemoryCache,
        raw: list[RawBlock],
        problems: list[ParseProblem],
        unpinned: set[str],
    ) -> int:
        """Undo what this unit did to what was read (it never ended: see `UNIT_START`): its
        memories and records as they were before it, its cut-off blocks dropped. Returns how
        many of its blocks were cut short."""
        memories, locations = cache.memories, cache.locations
        for entry_id, before in self.memories.items():
            if before is None:
                memories.pop(entry_id, None)
            else:
                memories[entry_id] = before
        unpinned.update(self.unpinned)
        for loc_id, record in self.records.items():
            if record is None:
                locations.pop(loc_id, None)
            else:
                locations[loc_id] = record
        cut = list(self.raw)
        if self.tail is not None and all(map(_cut_cairn_line, self.tail[0].lines)):
            cut.append(self.tail)  # the cut fell inside a block's first line or its comment's
        if cut:
            drop_read_last(raw, [block for block, _ in cut])
            drop_read_last(problems, [problem for _, problem in cut])
        cut_short = 0
        if self.cut_memory is not None:  # the cut fell right after a header's line
            memories.pop(self.cut_memory, None)
            cut_short += 1
        return cut_short + len(self.memories) + len(cut)


Opening = tuple[RawBlock, ParseProblem, int]
"""A one-line block, its problem and its line: what a cut may have left of the line that opens
an appended part or a unit of work (`cut_opening`)."""


def drop_opening(
    opening: Opening,
    number: int,
    lines: list[str],
    raw: list[RawBlock],
    problems: list[ParseProblem],
) -> bool:
    """Drop the one-line block a cut left of an opening line when the line `number` (the
    opening line itself, or the file's end) follows it past blank lines alone; whether it was
    dropped."""
    block, problem, at = opening
    if len(block.lines) != 1 or any(line.strip() for line in lines[at : number - 1]):
        return False  # more was read after it: a block of its own
    drop_read_last(raw, [block])
    drop_read_last(problems, [problem])
    return True


def drop_read_last(items: list[Any], drop: list[Any]) -> None:
    """Remove these very objects from `items`, where they were read last (what a cut left of
    a unit, or of an opening line): looked for from the end, so undoing a unit costs what it
    added, not the file read so far (`list.remove` looks from the start, comparing with each
    problem's `__eq__`: quadratic in a file of many cut units)."""
    gone = set(map(id, drop))
    left, at = len(gone), len(items)
    while left and at:
        at -= 1
        if id(items[at]) in gone:
            left -= 1
    items[at:] = [item for item in items[at:] if id(item) not in gone]
