"""Reading a Memories.md into a cache, its kept blocks, a person's notes and the problems."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from cairn.adapters.storage.cut_units import (
    CAIRN_HEADERS,
    Unit,
    cut_opening,
    drop_opening,
    drop_read_last,
    prose_line,
)
from cairn.adapters.storage.markdown_blocks import (
    NOT_A_HEADER,
    block_text,
    link_by_title,
    read_block,
    to_the_second,
    validation_message,
)
from cairn.adapters.storage.markdown_escape import unescape_inline
from cairn.adapters.storage.markdown_layout import (
    APPENDED_HEADERS,
    COMMENT_START,
    LOCATION_RE,
    LOCATIONS_HEADER,
    NPC_RE,
    NPCS_HEADER,
    RULE_RE,
    RULE_STARTS,
    UNIT_END,
    UNIT_START,
    WORLD_HEADER,
    WORLD_SECTION,
    RawBlock,
    is_location_line,
    location_id_of,
    read_visits,
    shown_item,
)
from cairn.adapters.storage.markdown_render import ordered
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.models.memory import (
    LocationRecord,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
    ParseProblem,
    utc_now,
)


@dataclass
class ParsedFile:
    """The result of reading a memory file: a cache, the verbatim blocks and the problems."""

    cache: MemoryCache = field(default_factory=MemoryCache)
    raw: list[RawBlock] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)
    cut_short: int = 0
    """Cairn blocks of appended units of work that never ended (ignored; see `UNIT_START`)."""
    unpinned: list[str] = field(default_factory=list)
    """Memories read without a `created_at` in cairn's comment (written by a person): they
    take the time given to `parse` (the file's modification time) at every read, until a
    write gives them a comment."""
    ends_mid_line: bool = False
    """The text does not end with a line end: a save cut short (or still being written), or
    an editor that writes no final line end."""
    last_block: str = ""
    """The id of the memory whose block the file read last: where a cut would fall."""
    torn_tail: tuple[RawBlock, ParseProblem, int] | None = None
    """The file's last block, when it is a cairn block that did not parse (with its problem):
    where a save cut short stopped, inside a block."""
    start_of_known: bool = False
    """Set by a store: the save as read was cut short (`LiveFile.took`: its bytes end
    mid-line, or are the start of the file the store last saw)."""
    notes: list[int] = field(default_factory=list)
    """Where a person's notes start (line numbers): blocks of prose, and sections of their
    own holding only prose (`## Dungeon notes`), which README invites. They are content,
    not problems: kept verbatim (in `raw`, with no problems) and written back where they
    stood."""


    def drop_torn_tail(self, held: MemoryCache) -> None:
        """A save cut short inside a block (the file's last, which did not parse): the fragment
        is not kept when it is the one line the cut fell in, or a cairn block of a memory in
        `held` (what a store holds, which keeps it whole) or whose id the cut took; a cairn
        block of a memory the store does not hold stays verbatim, as any block that fails."""
        if self.torn_tail is None:
            return
        block, problem, _ = self.torn_tail
        found = _COMMENT_ID.search("\n".join(block.lines))
        theirs = found is not None and found.group(1) not in held
        cairns = any(COMMENT_START in line for line in block.lines)
        if len(block.lines) > 1 and (theirs or not cairns):
            return
        self.raw = [b for b in self.raw if b is not block]
        self.problems = [p for p in self.problems if p is not problem]
        self.torn_tail = None


_COMMENT_ID = re.compile(r'<!-- cairn \{"id": "([^"]+)"')  # (only a whole id: its closing quote)
"""The id a cairn comment starts with (as cairn writes it), in a block cut short."""

_MEMORY_MODES = frozenset({"location", "npc", "world"})


class _Parser:
    """Reads a memory file line by line; a block is the lines between blank lines or headers.

    Runs once per load over files of thousands of memories, so the per-line loop is kept lean;
    every memory is still validated in full by the MemoryEntry model's validator.
    """

    def __init__(self, path: str, created_at: datetime) -> None:
        self.path = path
        self.created_at = created_at
        self.out = ParsedFile()
        self.mode = "preamble"  # preamble | location_top | location | npc_top | npc | world | bad
        self.section: tuple[str, str] = ("preamble", "")
        self.section_name: str | None = None
        self.bad: RawBlock | None = None  # the section being kept verbatim
        self.bad_gap = False  # whether blank lines came since its last line
        self.bad_start = 0  # the line its header is on
        self.bad_problem: ParseProblem | None = None  # and the problem reported there
        self.after_bad = "bad"  # the mode a section header after it is read in
        self.pending_successor_titles: dict[str, str] = {}
        self.derived_ids: dict[str, int] = {}
        self.memories = self.out.cache.memories
        self.last_id = ""  # the last memory read in the current section
        self.in_memory_section = False
        self.scope_defaults: dict[str, Any] = {}
        self.scope_fixed: dict[str, Any] = {}
        self.appended = False
        """In an appended part (`# Recent Memories`): blocks are newer versions of memories
        read before, location headers and visits lines newer records."""
        self.unit: Unit | None = None
        """The appended unit of work being read (between its markers)."""
        self.cut_short = 0
        """Cairn blocks of units that never ended (ignored)."""
        self.lines: list[str] = []
        self.unpinned: set[str] = set()
        """The memories whose last version read had no `created_at` in a comment."""
        self.opening: tuple[RawBlock, ParseProblem, int] | None = None
        """A one-line block (and the line it is on) that can be what a cut left of the line
        that opens an appended part or a unit of work (`cut_opening`): dropped when only
        blank lines stand between it and that line, or the file's end."""

    def problem(self, line: int, message: str) -> None:
        self.out.problems.append(ParseProblem(path=self.path, line=line, message=message))

    # The structure: `# ...` top headers, `## ...` section headers, the visits line, the
    # `### Memories` subheader, blank lines and rule lines between blocks, memory headers
    # starting blocks.
    # The loop keeps its state in locals: it runs for every line of files of thousands of
    # memories, and attribute look-ups there cost a noticeable part of the load time.
    def parse(self, text: str) -> ParsedFile:
        lines = text.split("\n")
        if "\r" in text:
            lines = [line.rstrip("\r") for line in lines]
        self.lines = lines
        flush = self.flush
        chunk: list[str] | None = None  # the lines of the block being read
        start = 0  # its first line number
        mode = self.mode
        for number, line in enumerate(lines, start=1):
            if not line or line.isspace():
                if chunk is not None:
                    flush(start, chunk)
                    chunk = None
                elif mode == "bad":
                    self.bad_gap = True
                continue
            first = line[0]
            if first == "#" and line.startswith(("# ", "## ")):
                if chunk is not None:
                    flush(start, chunk)
                    chunk = None
                if line[1] == " ":
                    self.top_header(number, line)
                else:
                    self.section_header(number, line)
                mode = self.mode
            elif mode == "bad":
                self.bad_line(line)
            elif mode == "location" and first in "#*" and is_location_line(line):
                if chunk is not None:
                    flush(start, chunk)
                    chunk = None
                if first == "*":
                    self.visits(number, line)
            elif chunk is None:  # a rule line starts a block too: `flush` drops it
                start, chunk = number, [line]
            elif first in RULE_STARTS:  # a memory header or a rule: never a line of text
                if first == "*" and line.startswith("**["):
                    flush(start, chunk)
                    start, chunk = number, [line]
                elif RULE_RE.match(line):
                    flush(start, chunk)
                    chunk = None
                else:
                    chunk.append(line)
            else:
                chunk.append(line)
        if chunk is not None:
            flush(start, chunk)
        self.end_bad()
        self.undo_unit()
        self.drop_opening(len(lines) + 1)
        self.out.cut_short = self.cut_short
        self.out.ends_mid_line = bool(text) and not text.endswith("\n")
        torn = self.out.torn_tail
        if torn is not None and any(line.strip() for line in lines[torn[2] :]):
            self.out.torn_tail = None  # something follows it: not the file's end
        self.out.unpinned = [i for i in self.memories if i in self.unpinned]
        link_by_title(self.out.cache.memories, self.pending_successor_titles)
        if self.appended:  # new memories of an appended part belong in their sections
            self.out.cache = ordered(self.out.cache)
        return self.out

    def top_header(self, number: int, line: str) -> None:
        self.end_bad()
        self.undo_unit()
        if line == LOCATIONS_HEADER:
            self.enter("location_top", ("preamble", ""), None)
        elif line == NPCS_HEADER:
            self.enter("npc_top", ("preamble", ""), None)
        elif line == WORLD_HEADER:
            self.enter("world", ("world", ""), None)
        elif line.startswith(APPENDED_HEADERS):
            self.drop_opening(number)
            self.appended = True
            self.enter("appended_top", ("preamble", ""), None)
        else:
            self.start_bad(number, line, f"unknown top-level header {line!r}", top=True)
            if self.bad is not None and cut_opening(line, self.appended):
                self.opening = (self.bad, self.out.problems[-1], number)

    def section_header(self, number: int, line: str) -> None:
        if self.bad is not None:
            self.end_bad()
        appended = self.appended and self.mode != "bad"
        if self.unit is not None:
            self.unit.read_past()
        location = LOCATION_RE.match(line) if line.startswith("## L") else None
        npc = NPC_RE.match(line) if location is None else None
        if location and (appended or self.mode in ("location_top", "location")):
            loc_id = location_id_of(location.group(1))
            if loc_id is None:
                digits = location.group(1)[:30]
                self.start_bad(number, line, f"location id {digits!r} is out of range")
                return
            name = location.group(2) or ""
            if "\\" in name:
                name = unescape_inline(name)
            locations = self.out.cache.locations
            record = locations.get(loc_id)
            if self.unit is not None:
                self.keep_record(loc_id)
            if record is None:
                record = locations[loc_id] = _new_record({"id": loc_id, "name": name})
            elif appended:
                record.name = name  # the newest record
            else:
                self.problem(number, f"location {loc_id} appears twice; its sections are merged")
            self.enter("location", ("location", str(loc_id)), record.name, loc_id)
        elif npc and (appended or self.mode in ("npc_top", "npc")):
            npc_id = unescape_inline(npc.group(1))
            self.enter("npc", ("npc", npc_id), npc_id)
        elif appended and line == WORLD_SECTION:
            self.enter("world", ("world", ""), None)
        else:
            self.start_bad(number, line, f"section header {line!r} not understood here")

    def start_bad(self, number: int, line: str, message: str, *, top: bool = False) -> None:
        """Keep the section from `line` on verbatim, up to the next header. After a `## ...`
        section a section header is read as before it (a location after `## Dungeon notes`
        is a location); after an unknown `# ...` part, only a known `# ...` header ends it."""
        message = f"{message}; the section is kept verbatim"
        self.problem(number, message)
        self.bad = RawBlock(self.section, [line], [(0, message)])
        self.bad_start, self.bad_problem = number, self.out.problems[-1]
        self.after_bad = "bad" if top else self.mode
        self.mode = "bad"
        self.bad_gap = False
        if self.unit is not None:  # where a cut inside a section's header line may fall
            self.unit.read_past()
            self.unit.tail = (self.bad, self.out.problems[-1])

    def bad_line(self, line: str) -> None:
        assert self.bad is not None
        if self.unit is not None:
            self.unit.read_past()
        if self.bad_gap:  # blank lines (one or several) came before this one
            self.bad.lines.append("")
            self.bad_gap = False
        self.bad.lines.append(line)

    def end_bad(self) -> None:
        """Keep the section read verbatim, less the rule lines (and blank lines) that end it:
        those separate it from the next section, and the renderer writes its own."""
        if self.bad is not None:
            lines = self.bad.lines
            while len(lines) > 1 and (not lines[-1] or RULE_RE.match(lines[-1])):
                lines.pop()
            if not lines[0].startswith(CAIRN_HEADERS) and all(map(prose_line, lines)):
                # a section of a person's own (`## Dungeon notes`, prose only): a note
                drop_read_last(self.out.problems, [self.bad_problem])
                self.bad.problems = []
                if self.unit is not None and self.unit.tail and self.unit.tail[0] is self.bad:
                    self.unit.tail = None
                self.out.notes.append(self.bad_start)
            self.out.raw.append(self.bad)
            self.bad = None
            self.mode = self.after_bad

    def visits(self, number: int, line: str) -> None:
        if self.unit is not None:
            self.unit.read_past()
        self.keep_record(int(self.section[1]))
        record = self.out.cache.locations[int(self.section[1])]
        visits, record.episodes, ignored = read_visits(line)
        if visits is None:
            self.problem(number, "visits: the number is out of range (64-bit); ignored")
        else:
            record.visits = visits
        for item in ignored:
            shown, digits = shown_item(item), item.removeprefix("Ep").isdigit()
            wrong = "is out of range (64-bit)" if digits else "is not an episode number"
            self.problem(number, f"episodes: {shown} {wrong}; ignored")

    def flush(self, start: int, chunk: list[str]) -> None:
        """Read a finished block: a memory, or a raw block kept verbatim with its problem. A
        rule line that starts a block is layout: dropped, and the rest read as a block. In an
        appended part, a unit's markers start and end it."""
        if self.appended and len(chunk) == 1 and chunk[0] in (UNIT_START, UNIT_END):
            if chunk[0] == UNIT_START:
                self.drop_opening(start)
            if chunk[0] == UNIT_START or (self.unit is not None and not self.unit.started):
                self.undo_unit()  # one that starts before the last one ended: that one is cut
            self.unit = Unit() if chunk[0] == UNIT_START else None  # ended: it stands
            return
        if self.appended and self.unit is None and COMMENT_START in "".join(chunk[1:2]):
            self.unit = Unit(started=False)  # cairn's blocks come in units: a cut one
        error = self.memory(chunk)
        if error is not None:
            if error == NOT_A_HEADER and RULE_RE.match(chunk[0]):
                if len(chunk) > 1:
                    self.flush(start + 1, chunk[1:])
                return
            if error == NOT_A_HEADER and self.unit is None and all(map(prose_line, chunk)):
                self.note(start, RawBlock(self.section, chunk, [], self.last_id))
                return
            message = f"{error}; the block is kept verbatim"
            self.problem(start, message)
            block = RawBlock(self.section, chunk, [(0, message)], self.last_id)
            self.out.raw.append(block)
            # (the file's end, if nothing follows: where a save cut short stopped)
            self.out.torn_tail = (block, self.out.problems[-1], start + len(chunk) - 1)
            if len(chunk) == 1 and self.unit is None and cut_opening(chunk[0], self.appended):
                self.opening = (block, self.out.problems[-1], start)
            if self.unit is not None:
                if any(COMMENT_START in line for line in chunk):
                    self.unit.raw.append((block, self.out.problems[-1]))  # a cairn block cut off
                else:
                    self.unit.read_past()
                    self.unit.tail = (block, self.out.problems[-1])
        elif self.unit is not None:
            self.unit.read_past()
            if len(chunk) == 1 or (len(chunk) == 2 and COMMENT_START.startswith(chunk[1])):
                self.unit.cut_memory = self.last_id  # a header alone, or with its comment cut

    def note(self, start: int, block: RawBlock) -> None:
        """Keep a person's note (a block of prose, at line `start`) verbatim: content, not a
        problem. It is no memory, and nothing a cut leaves of cairn's lines (see
        `prose_line`)."""
        self.out.raw.append(block)
        self.out.notes.append(start)
        if self.unit is not None:
            self.unit.read_past()

    def keep_record(self, loc_id: int) -> None:
        """Remember a location record as it was before the open unit changes it."""
        if self.unit is not None and loc_id not in self.unit.records:
            record = self.out.cache.locations.get(loc_id)
            self.unit.records[loc_id] = record.model_copy(deep=True) if record else None

    def drop_opening(self, number: int) -> None:
        """Drop the one-line block a cut left of an opening line (`opening`) when the line
        `number` (the opening line itself, or the file's end) follows it past blank lines
        alone."""
        opening, self.opening = self.opening, None
        if opening is not None and drop_opening(
            opening, number, self.lines, self.out.raw, self.out.problems
        ):
            self.cut_short += 1

    def undo_unit(self) -> None:
        """Undo what an appended unit of work that never ended did (see `UNIT_START`)."""
        unit, self.unit = self.unit, None
        if unit is not None:
            out = self.out
            self.cut_short += unit.undo(out.cache, out.raw, out.problems, self.unpinned)

    def memory(self, lines: list[str]) -> str | None:
        """Parse one memory block into the cache; return an error message when it does not."""
        block = read_block(lines, self.in_memory_section)
        if isinstance(block, str):
            return block
        title, fields, comment, start, display_title = block
        # Later entries win: the comment overrides header fields and section defaults; the
        # section decides the scope (and the location id).
        data = {
            **self.scope_defaults,
            **fields,
            "title": title,
            **comment,
            "text": block_text(lines, start, len(lines)),
            **self.scope_fixed,
        }
        if "id" not in data:  # written by a person: the same id on every load of this block
            data["id"] = self.derived_id(lines)
        if self.mode == "npc" and "npc_ids" not in data:
            data["npc_ids"] = [self.section[1]]
        try:
            entry: MemoryEntry = MemoryEntry.__pydantic_validator__.validate_python(data)
        except ValidationError as e:
            return f"invalid memory ({validation_message(e)})"
        memories, entry_id = self.memories, entry.id
        if entry_id in memories and not self.appended:
            return f"duplicate memory id {entry_id!r}"
        if self.unit is not None and comment and entry_id not in self.unit.memories:
            self.unit.memories[entry_id] = memories.get(entry_id)  # a cairn block of the unit
            if entry_id in self.unpinned:
                self.unit.unpinned.add(entry_id)
        memories[entry_id] = entry
        self.last_id = self.out.last_block = entry_id
        if "created_at" not in comment:
            self.unpinned.add(entry_id)
        elif self.unpinned:
            self.unpinned.discard(entry_id)  # a newer version, with cairn's comment
        if display_title and entry.status is MemoryStatus.SUPERSEDED and not entry.superseded_by:
            self.pending_successor_titles[entry.id] = unescape_inline(display_title)
        return None

    def enter(
        self,
        mode: str,
        section: tuple[str, str],
        section_name: str | None,
        location_id: int | None = None,
    ) -> None:
        """Start a section: what its memories get by default and what they always get (a
        location's section: `location_id` is its id)."""
        self.mode, self.section, self.section_name = mode, section, section_name
        self.last_id = ""
        self.in_memory_section = mode in _MEMORY_MODES
        if mode == "location":
            self.scope_defaults = {"created_at": self.created_at, "location_name": section_name}
            self.scope_fixed = {"scope": _LOCATION_SCOPE, "location_id": location_id}
        else:
            self.scope_defaults = {"created_at": self.created_at}
            self.scope_fixed = {"scope": _NPC_SCOPE if mode == "npc" else _WORLD_SCOPE}

    def derived_id(self, lines: list[str]) -> str:
        """An id from the block's section and text (numbered when the same block repeats)."""
        key = "\n".join((*self.section, *lines)).encode("utf-8", "surrogateescape")
        base = "m-" + hashlib.sha256(key).hexdigest()[:12]
        seen = self.derived_ids[base] = self.derived_ids.get(base, 0) + 1
        return base if seen == 1 else f"{base}-{seen}"


_LOCATION_SCOPE, _NPC_SCOPE, _WORLD_SCOPE = (
    MemoryScope.LOCATION.value,
    MemoryScope.NPC.value,
    MemoryScope.WORLD.value,
)
_new_record = LocationRecord.__pydantic_validator__.validate_python
"""A location record from a section header's id (in range) and name: always valid."""


def parse(
    text: str, path: str = "Memories.md", *, created_at: datetime | None = None
) -> ParsedFile:
    """Read a memory file's text. Never raises for content: problems are reported instead.

    `created_at` (to the second, as it will be written) is given to memories that have no cairn
    comment (written by a person); the store passes the file's modification time. Such memories
    get an id derived from their block, so every load of an unchanged file gives the same ids.
    Timestamps in comments are taken as written (older files have microseconds).
    """
    return _Parser(path, to_the_second(created_at or utc_now())).parse(text)
