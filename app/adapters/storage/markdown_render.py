"""Rendering a whole Memories.md from a cache, re-rendering only the blocks that changed."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field

from cairn.adapters.storage.markdown_blocks import as_written, display_line, render_entry
from cairn.adapters.storage.markdown_escape import escape_inline
from cairn.adapters.storage.markdown_layout import (
    LOCATIONS_HEADER,
    MEMORIES_SUBHEADER,
    NPCS_HEADER,
    RULE,
    WORLD_HEADER,
    RawBlock,
)
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.models.memory import LocationRecord, MemoryEntry, MemoryScope, MemoryStatus, ParseProblem


class EntryRenderCache:
    """Rendered blocks by memory id, reused while the entry object and its context are unchanged,
    and rendered sections (their blocks joined), reused while the section's entry objects, its
    name and its `[Superseded ...]` lines are unchanged: a write re-renders what changed only.

    Sections keep their entries as written (`as_written`); a store that keeps those objects
    (`RenderedFile.cache`) hits the cache on its next write."""

    def __init__(self) -> None:
        self._blocks: dict[str, tuple[MemoryEntry, str | None, str | None, str]] = {}
        # key -> (entries (kept alive so their ids stay theirs), their ids, name, displays, text)
        self._sections: dict[
            tuple[str, str],
            tuple[list[MemoryEntry], list[int], str | None, tuple[str | None, ...], str, list[int]],
        ] = {}

    def block(self, entry: MemoryEntry, section_name: str | None, display: str | None) -> str:
        hit = self._blocks.get(entry.id)
        if hit is not None and hit[0] is entry and hit[1] == section_name and hit[2] == display:
            return hit[3]
        text = render_entry(entry, section_name, display)
        self._blocks[entry.id] = (entry, section_name, display, text)
        return text

    def seed(self, entry: MemoryEntry, section_name: str | None, text: str) -> None:
        """Keep `text` as the block of `entry` (no display line) in a section of that name: the
        block as a file holds it, read into this very entry object (see `BlockSource.seen`)."""
        self._blocks[entry.id] = (entry, section_name, None, text)

    def section(
        self,
        key: tuple[str, str],
        entries: list[MemoryEntry],
        section_name: str | None,
        displays: list[str | None],
    ) -> tuple[str, list[MemoryEntry], list[int]]:
        """The blocks of one section's entries (with their display lines), joined, the
        entries as written, and each block's length."""
        shown, idents = tuple(displays), list(map(id, entries))
        hit = self._sections.get(key)
        # The same entry objects (by identity, as for blocks: equal is not enough, an equal
        # datetime may be written with another UTC offset), name and display lines.
        if hit is not None and hit[2] == section_name and hit[3] == shown and hit[1] == idents:
            return hit[4], hit[0], hit[5]
        kept = 0  # the usual fold: the section as cached, with memories added at its end
        if hit is not None and hit[2] == section_name and 0 < len(hit[1]) < len(idents):
            kept = len(hit[1])
            if hit[1] != idents[:kept] or hit[3] != shown[:kept]:
                kept = 0
        written = [as_written(entry) for entry in entries[kept:]]
        blocks = [
            self.block(entry, section_name, display)
            for entry, display in zip(written, displays[kept:], strict=True)
        ]
        text = "\n\n".join(blocks)
        lengths = list(map(len, blocks))
        if kept:
            assert hit is not None
            text, written, lengths = f"{hit[4]}\n\n{text}", hit[0] + written, hit[5] + lengths
        self._sections[key] = (written, list(map(id, written)), section_name, shown, text, lengths)
        return text, written, lengths

    def forget_missing(
        self, ids: Collection[str], sections: Collection[tuple[str, str]] = ()
    ) -> None:
        """Drop the blocks of memories no longer in `ids` (cheap when none were removed) and the
        sections not in `sections`."""
        for key in [k for k in self._sections if k not in sections]:
            del self._sections[key]
        if len(self._blocks) <= len(ids):
            return
        for stale in [k for k in self._blocks if k not in ids]:
            del self._blocks[stale]


def ordered(cache: MemoryCache) -> MemoryCache:
    """The cache with memories in file order (the order a reload gives), records unchanged."""
    return _Sections.of(cache).ordered_cache(cache)


@dataclass
class _Sections:
    """The memories of a cache grouped by the file section they are written in."""

    by_location: defaultdict[int, list[MemoryEntry]] = field(
        default_factory=lambda: defaultdict(list)
    )
    by_npc: defaultdict[str, list[MemoryEntry]] = field(default_factory=lambda: defaultdict(list))
    world: list[MemoryEntry] = field(default_factory=list)

    @classmethod
    def of(cls, cache: MemoryCache) -> _Sections:
        if cache.indexed:  # the index's sections: no pass over every memory
            return cls._of_index(cache)
        sections = cls()
        by_location, by_npc, world = sections.by_location, sections.by_npc, sections.world
        location, npc = MemoryScope.LOCATION, MemoryScope.NPC
        for entry in cache.in_order():
            scope = entry.scope
            if scope is location:
                by_location[entry.location_id or 0].append(entry)
            elif scope is npc:
                by_npc[entry.npc_ids[0]].append(entry)
            else:
                world.append(entry)
        return sections

    @classmethod
    def _of_index(cls, cache: MemoryCache) -> _Sections:
        sections = cls()
        memories = cache.memories  # (a lazy cache reads what it has not read yet)
        for (rank, key), ids in cache.index.by_section.items():
            if not ids:
                continue
            group = [memories[i] for i in ids]
            if rank == 0:
                sections.by_location[int(key)] = group
            elif rank == 1:
                sections.by_npc[str(key)] = group
            else:
                sections.world.extend(group)
        return sections

    def ordered_cache(self, cache: MemoryCache) -> MemoryCache:
        out = MemoryCache()
        out.locations = cache.locations
        groups = [self.by_location[k] for k in sorted(self.by_location)]
        groups += [self.by_npc[k] for k in sorted(self.by_npc)]
        for group in (*groups, self.world):
            for entry in group:
                out.memories[entry.id] = entry
        return out


Span = tuple[int, int, str, str, str]
"""Where a memory's block lies in a rendered file: start and end (characters), the section's
kind (`location`, `npc`, `world`), key (the room's id or the NPC's) and name."""


@dataclass
class RenderedFile:
    """A rendered memory file: its text, the cache in file order, and where each raw block went."""

    text: str
    cache: MemoryCache
    raw_lines: list[tuple[int, RawBlock]]
    spans: dict[str, Span] = field(default_factory=dict)
    """Where each memory's block lies in `text` (see `Span`)."""

    def problems(self, path: str) -> list[ParseProblem]:
        """The problems of the kept raw blocks, at their line numbers in `text`."""
        return [
            ParseProblem(path=path, line=line + offset, message=message)
            for line, block in self.raw_lines
            for offset, message in block.problems
        ]


class _Renderer:
    def __init__(self, cache: MemoryCache, raw: list[RawBlock], blocks: EntryRenderCache) -> None:
        self.cache = cache
        self.blocks = blocks
        self.chunks: list[str] = []
        self.raw_at: list[tuple[int, RawBlock]] = []  # (chunk index, block)
        self.sections: list[tuple[str, str]] = []  # those with memories, as emitted
        self.out = MemoryCache()
        self.out.locations = cache.locations
        self.raw: dict[tuple[str, str], list[RawBlock]] = {}
        self.runs: list[tuple[int, list[str], tuple[str, str], str | None, list[int]]] = []
        """(chunk index, memory ids, section, section name, block lengths) of each run of
        blocks emitted."""
        for block in raw:
            self.raw.setdefault(block.section, []).append(block)

    def emit_raw(self, section: tuple[str, str]) -> None:
        self.emit_blocks(self.raw.pop(section, []))

    def emit(
        self, key: tuple[str, str], entries: list[MemoryEntry], section_name: str | None
    ) -> None:
        """A section's memories, with the raw blocks that stood between them put back there."""
        if not entries:
            return
        anchored: dict[str, list[RawBlock]] = {}
        kept = self.raw.get(key, [])
        ids = {entry.id for entry in entries} | {""} if kept else set()
        for block in kept:
            if block.after is not None and block.after in ids:
                anchored.setdefault(block.after, []).append(block)
        if not anchored:
            self.emit_run(key, entries, section_name)
            return
        self.raw[key] = [block for block in kept if block.after not in anchored]
        self.emit_blocks(anchored.get("", []))
        run: list[MemoryEntry] = []
        for entry in entries:
            run.append(entry)
            if entry.id in anchored:
                part = (key[0], f"{key[1]}\0{len(self.sections)}")
                self.emit_run(part, run, section_name, key)
                self.emit_blocks(anchored[entry.id])
                run = []
        if run:
            self.emit_run((key[0], f"{key[1]}\0{len(self.sections)}"), run, section_name, key)

    def emit_blocks(self, blocks: list[RawBlock]) -> None:
        for block in blocks:
            self.raw_at.append((len(self.chunks), block))
            self.chunks.append("\n".join(block.lines))

    def emit_run(
        self,
        key: tuple[str, str],
        entries: list[MemoryEntry],
        section_name: str | None,
        section: tuple[str, str] | None = None,
    ) -> None:
        memories, superseded = self.cache.memories, MemoryStatus.SUPERSEDED
        displays = [
            display_line(entry, memories.get(entry.superseded_by or ""))
            if entry.status is superseded
            else None
            for entry in entries
        ]
        text, written, lengths = self.blocks.section(key, entries, section_name, displays)
        ids = [e.id for e in written]
        self.runs.append((len(self.chunks), ids, section or key, section_name, lengths))
        self.chunks.append(text)
        self.sections.append(key)
        self.out.memories.update({entry.id: entry for entry in written})

    def render(self) -> RenderedFile:
        """The file: the cache's memories as written (`as_written`), in file order."""
        sections = _Sections.of(self.cache)
        self.emit_raw(("preamble", ""))
        self.chunks.append(LOCATIONS_HEADER)
        records, by_location = self.cache.locations, sections.by_location
        raw_locations = {int(name) for kind, name in self.raw if kind == "location"}
        bare: list[str] = []  # the headers of a run of bare sections (see `_is_bare`)
        for loc_id in sorted(set(records) | set(by_location) | raw_locations):
            record = records.get(loc_id) or LocationRecord(id=loc_id)
            if _is_bare(record) and loc_id not in by_location and loc_id not in raw_locations:
                bare.append(_section_line(record))
                continue
            if bare:
                self.chunks.append("\n\n".join(bare))
                bare = []
            key = ("location", str(loc_id))
            self.chunks.append(location_header(record))
            self.chunks.append(MEMORIES_SUBHEADER)
            self.emit(key, by_location.get(loc_id, []), record.name)
            self.emit_raw(key)
            self.chunks.append(RULE)
        if bare:
            self.chunks.append("\n\n".join(bare))
        self.chunks.append(NPCS_HEADER)
        raw_npcs = {name for kind, name in self.raw if kind == "npc"}
        for npc_id in sorted(set(sections.by_npc) | raw_npcs):
            self.chunks.append(f"## NPC {escape_inline(npc_id)}")
            self.emit(("npc", npc_id), sections.by_npc.get(npc_id, []), npc_id)
            self.emit_raw(("npc", npc_id))
        self.chunks.append(WORLD_HEADER)
        self.emit(("world", ""), sections.world, None)
        for section in list(self.raw):  # world raw blocks and any others, verbatim
            self.emit_raw(section)
        self.blocks.forget_missing(self.cache.memories.keys(), set(self.sections))
        text = "\n\n".join(self.chunks) + "\n"
        return RenderedFile(text, self.out, self.raw_lines(), self.spans())

    def spans(self) -> dict[str, Span]:
        """Where each memory's block lies in the text (characters), with its section."""
        # chunk n starts after the n chunks before it and their separators ("\n\n")
        before = list(itertools.accumulate(map(len, self.chunks), initial=0))
        found: dict[str, Span] = {}
        for index, ids, (kind, key), name, lengths in self.runs:
            at = before[index] + 2 * index
            for entry_id, length in zip(ids, lengths, strict=True):
                found[entry_id] = (at, at + length, kind, key, name or "")
                at += length + 2
        return found

    def raw_lines(self) -> list[tuple[int, RawBlock]]:
        """The 1-based first line of each raw block in the joined text."""
        found: list[tuple[int, RawBlock]] = []
        line, done = 1, 0
        for index, block in self.raw_at:
            for chunk in self.chunks[done:index]:
                line += chunk.count("\n") + 2
            done = index
            found.append((line, block))
        return found


def render_file(
    cache: MemoryCache, raw: list[RawBlock], blocks: EntryRenderCache | None = None
) -> RenderedFile:
    """The whole file for `cache` and the kept raw blocks, with the cache in file order and its
    entries as written (what a reload gives)."""
    return _Renderer(cache, raw, blocks or EntryRenderCache()).render()


def render(cache: MemoryCache, raw: list[RawBlock], blocks: EntryRenderCache | None = None) -> str:
    """The whole file for `cache` and the kept raw blocks."""
    return render_file(cache, raw, blocks).text


def location_header(record: LocationRecord) -> str:
    episodes = ", ".join(map(str, record.episodes)) if record.episodes else "-"
    return f"{_section_line(record)}\n**Visits:** {record.visits} | **Episodes:** {episodes}"


def _section_line(record: LocationRecord) -> str:
    """`## Location 5: Hall` (`## Location 5:` with no name)."""
    name = record.name
    if not name:
        return f"## Location {record.id}:"
    return f"## Location {record.id}: {escape_inline(name)}"


def _is_bare(record: LocationRecord) -> bool:
    """A location that holds nothing but its id and name (never visited): when no memory or
    kept block stands in its section, the section is written as its header line alone (a
    person's `## Location 5: Hall`, with nothing under it, is written back as it was,
    not grown by a visits line, a `### Memories` line and a rule: it reads back the same)."""
    return not record.visits and not record.episodes
