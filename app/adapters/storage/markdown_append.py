"""AppendedPart: the text of the units of work appended to a Memories.md or its archive."""

from __future__ import annotations

from dataclasses import dataclass, field

from cairn.adapters.storage.markdown_blocks import display_line, render_entry
from cairn.adapters.storage.markdown_escape import escape_inline
from cairn.adapters.storage.markdown_layout import (
    UNIT_END,
    UNIT_START,
    WORLD_SECTION,
    Section,
    section_of,
)
from cairn.adapters.storage.markdown_render import location_header
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.models.memory import LocationRecord, MemoryEntry, MemoryStatus


@dataclass
class AppendedPart:
    """Text to append to a memory file: blocks under section headers, in an appended part
    (`# Recent Memories`, or `# Archived Memories` in the archive). A reader takes each block as
    the memory's newest version and each visits line as the location's newest record."""

    header: str
    section: Section | None = None
    """The section the text appended so far ends in (None: the part's header is not written)."""
    chunks: list[str] = field(default_factory=list)
    section_name: str | None = None
    """The name the header of `section` shows (what a reader takes as the section's name)."""
    blocks: list[tuple[str, int, str | None]] = field(default_factory=list)
    """The memory blocks not taken yet: (id, chunk index, the section's name as read)."""
    records: list[LocationRecord] = field(default_factory=list)
    """The location records whose header (and visits line) was added and not taken yet."""
    taken: list[tuple[str, int, int, str | None]] = field(default_factory=list)
    """The memory blocks of the last `take`: id, start and end (characters in its text) and the
    section's name as read."""
    taken_records: list[LocationRecord] = field(default_factory=list)
    """The location records the last `take` wrote, in order (a reader takes the last)."""

    def add_location(self, record: LocationRecord) -> None:
        """A location's record (its header and visits line), which also opens its section."""
        self._open()
        self.chunks.append(location_header(record))
        self.records.append(record)
        self.section = ("location", str(record.id))
        self.section_name = record.name

    def add_memory(self, cache: MemoryCache, entry: MemoryEntry) -> None:
        """A memory's block, under its section's header when the text is not in it already."""
        self._open()
        section = section_of(entry)
        loc_id = entry.location_id or 0
        record = cache.locations.get(loc_id) or LocationRecord(id=loc_id)
        name = {"location": record.name, "npc": section[1]}.get(section[0])
        if section != self.section:
            if section[0] == "location":
                self.chunks.append(location_header(record))
                self.records.append(record)
            elif section[0] == "npc":
                self.chunks.append(f"## NPC {escape_inline(section[1])}")
            else:
                self.chunks.append(WORLD_SECTION)
            self.section = section
            self.section_name = name
        display = (
            display_line(entry, cache.get(entry.superseded_by or ""))
            if entry.status is MemoryStatus.SUPERSEDED
            else None
        )
        self.blocks.append((entry.id, len(self.chunks), self.section_name))
        self.chunks.append(render_entry(entry, name, display))

    def _open(self) -> None:
        if self.section is None and not self.chunks:
            self.chunks.append(self.header)
            self.section = ("preamble", "")

    def take(self) -> str:
        """The text to append (after a file that ends with a line end): the part's header
        when it starts, then the unit of work between its markers; and start afresh."""
        self.taken, self.taken_records = [], self.records
        self.records = []
        if not self.chunks:
            self.blocks = []
            return ""
        head = [self.chunks[0]] if self.chunks[0] == self.header else []
        body = self.chunks[len(head) :]
        parts = [*head, UNIT_START, *body, UNIT_END]
        text = "\n" + "\n\n".join(parts) + "\n"
        if self.blocks:  # where each block landed: its chunk's place in `parts`
            starts, at = [], 1
            for chunk in parts:
                starts.append(at)
                at += len(chunk) + 2
            # UNIT_START stands before the body: chunk n is part n + 1
            self.taken = [
                (entry_id, starts[n + 1], starts[n + 1] + len(self.chunks[n]), name)
                for entry_id, n, name in self.blocks
            ]
        self.chunks, self.blocks = [], []
        return text
