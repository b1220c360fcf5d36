"""The Memories.md format: location sections plus NPC and World sections, escaped, lossless.

Layout (sections in this order; locations by id, NPCs by id; a `---` rule closes each location
section)::

    # Location Memories

    ## Location 15: West of House
    **Visits:** 3 | **Episodes:** 1, 2, 3

    ### Memories

    **[SUCCESS] Open and enter window** *(Ep1, T23-24, +0)*
    <!-- cairn {"id": "m-...", "created_at": "2026-11-23T09:31:46Z"} -->
    Window can be opened with effort and used as alternative entrance to house.

    **[NOTE - SUPERSEDED] Troll accepts lunch gift** *(Ep1, T12, +0)*
    <!-- cairn {"id": "m-...", "importance": 300, "created_at": "...", "superseded_by": "m-..."} -->
    [Superseded at T13 by "Troll attacks after accepting gift"]
    Troll accepts lunch offering graciously.

    ---

    # NPC Memories

    ## NPC troll

    **[DANGER] ...**

    # World Memories

    **[NOTE] ...**

The header shows category, status (omitted when ACTIVE), persistence (older tools' three-part
form `[CATEGORY - PERSISTENCE - STATUS]` is read too), title, episode, turns and score; the
section gives the scope, the location id and name and the NPC. The `<!-- cairn {...} -->`
comment (invisible when rendered) holds only what they cannot show: the id, `created_at`, and
the fields that differ from the model's defaults (importance when not 500, tags when any, a
location name other than the section's, `turn_end: null` when the header's `T12` means "no end
turn", ...). The `[Superseded ...]` line is display only; the link is `superseded_by` in the
comment. Blocks written by a person may leave the comment out: such a block gets an id derived
from its section and text (the same on every load until the store writes the file and the
comment with it) and `created_at` from the caller (the store passes the file's modification
time); an older file's `[Superseded ... by "Title"]` links to the one memory with that title, if
exactly one has it.

Timestamps (`created_at`, `since_timestamp`) are written to the second: `2026-11-23T09:31:46Z`
(another UTC offset is written as such). `render_file` returns the entries as written, and the
store keeps those, so a reader sees the same times and the same order before and after a reload:
memories made within one second tie on `created_at`, and a stable sort keeps tied memories in
store order, which is file order (within a section, the order they were added). Older files,
with microseconds, load exactly; their memories are written to the second on the next write.

Rule lines (`---`, `***`, `___`) between blocks are layout: skipped on reading (kept inside a
section kept verbatim), written after each location section. A bare location (never visited,
with no memory and no kept block in its section) is written as its header line alone, as a
person may write it (`## Location 5: Kitchen`): it reads back the same record.

Escaping, so any text round-trips exactly and never creates structure (PITFALLS 4-6):
- titles, names and NPC ids: `\\` for a backslash, `\\*` for `*`, `\\uXXXX` for control and
  line-separator characters;
- text lines: a line with control characters or leading/trailing whitespace is written as
  `\\` + its JSON string; a blank line, or one starting with `#`, `*`, `<`, `[`, `-`, `\\`,
  `=`, `>`, `|`, `+`, a backtick, `~`, `_` or a digit is written with a `\\` prefix. No text
  line can then look like a header, a memory, a comment or a rule.

Blocks that do not parse (an unknown category, a cairn comment that is not closed, not JSON,
nested more than 32 levels deep or not an object, a field that fails validation, a duplicate
id, ...) and sections that are not understood are kept verbatim (re-emitted in their section on
the next write, even at the end of the file) and reported as ParseProblems with their line
numbers; after a rewrite the problems are reported at the lines the kept blocks moved to
(`RenderedFile.problems`). A person's notes are kept verbatim the same way, but are content,
not problems (`ParsedFile.notes`): blocks of prose (no memory header, no cairn comment, nothing
a cut leaves of cairn's lines) and sections of a person's own holding only prose (`## Dungeon
notes`, under a header that is not cairn's).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import json.scanner
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from cairn.adapters.storage.base import gc_paused
from cairn.adapters.storage.ops import MemoryCache
from cairn.models.memory import (
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
    ParseProblem,
    source_of_tags,
    utc_now,
)

LOCATIONS_HEADER = "# Location Memories"
NPCS_HEADER = "# NPC Memories"
WORLD_HEADER = "# World Memories"
RECENT_HEADER = "# Recent Memories"
RECENT_TITLE = f"{RECENT_HEADER} (cairn folds these into the sections above when an episode ends)"
ARCHIVE_HEADER = "# Archived Memories"
WORLD_SECTION = "## World"
UNIT_START = "<!-- cairn unit -->"
UNIT_END = "<!-- cairn unit end -->"
"""Each unit of work appended to a file is written between these lines. A reader takes the
cairn blocks of a unit only once it has read the unit's end: a unit cut short (a crash while
writing, or a copy of the file taken while cairn was appending) is ignored, never read as
memories that lost their end, as memories deleted, or as edits."""
_APPENDED_HEADERS = (RECENT_HEADER, ARCHIVE_HEADER)
MEMORIES_SUBHEADER = "### Memories"

_LOCATION_RE = re.compile(r"^## Location (-?\d+):(?: (.*))?$")
_NPC_RE = re.compile(r"^## NPC (.+)$")
_VISITS_RE = re.compile(r"^\*\*Visits:\*\* (\d+) \| \*\*Episodes:\*\* ?(.*)$")
_HEADER_RE = re.compile(
    r"^\*\*\[(?P<tag>[^\]]*)\] (?P<title>[^\\*]*(?:\\.[^\\*]*)*)\*\*(?: \*\((?P<meta>[^()]*)\)\*)?$"
)
_DISPLAY_RE = re.compile(r'^\[(?:Superseded(?: at T\d+)?(?: by "(?P<title>.*)")?|Invalidated)\]$')
_PERSISTENCE_RE = re.compile(r"^[A-Za-z][A-Za-z_]*$")

# A thematic break (`---`, `***`, `___`, spaced or not): layout between blocks, never text.
_RULE_RE = re.compile(r"^ {0,3}([-*_])[ \t]*(?:\1[ \t]*){2,}$")
_RULE_STARTS = "-*_ "
RULE = "---"
_SPECIAL_STARTS = ("#", "*", "<", "[", "-", "\\", "=", ">", "|", "+", "`", "~", "_")
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


# -- escaping ----------------------------------------------------------------------------------


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


# -- timestamps --------------------------------------------------------------------------------

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


# -- rendering ---------------------------------------------------------------------------------


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


def display_line(entry: MemoryEntry, successor: MemoryEntry | None) -> str | None:
    """The `[Superseded ...]` line shown under a SUPERSEDED memory (display only)."""
    if entry.status is not MemoryStatus.SUPERSEDED:
        return None
    if entry.superseded_by is None:
        return "[Invalidated]"
    if successor is None:
        return "[Superseded]"
    at = f" at T{successor.turn_start}" if successor.turn_start is not None else ""
    return f'[Superseded{at} by "{escape_inline(successor.title)}"]'


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


@dataclass
class RawBlock:
    """Lines of a memory file kept verbatim because they did not parse.

    `problems` holds (line offset within the block, message) for each problem found in it, so
    the problems can be reported at the block's new line numbers after a rewrite.
    """

    section: tuple[str, str]
    lines: list[str]
    problems: list[tuple[int, str]] = field(default_factory=list)
    after: str | None = None
    """Where in its section it stood: after the memory with this id, "" before the section's
    first memory, None at the end (a whole section kept verbatim). A block whose memory is gone
    goes to the end."""


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
            tuple[
                list[MemoryEntry], list[int], str | None, tuple[str | None, ...], str, list[int]
            ],
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
            self.chunks.append(_location_header(record))
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


def _location_header(record: LocationRecord) -> str:
    episodes = ", ".join(map(str, record.episodes)) if record.episodes else "-"
    return f"{_section_line(record)}\n**Visits:** {record.visits} | **Episodes:** {episodes}"


def _section_line(record: LocationRecord) -> str:
    """`## Location 5: Kitchen` (`## Location 5:` with no name)."""
    name = record.name
    if not name:
        return f"## Location {record.id}:"
    return f"## Location {record.id}: {escape_inline(name)}"


def _is_bare(record: LocationRecord) -> bool:
    """A location that holds nothing but its id and name (never visited): when no memory or
    kept block stands in its section, the section is written as its header line alone (a
    person's `## Location 5: Kitchen`, with nothing under it, is written back as it was,
    not grown by a visits line, a `### Memories` line and a rule: it reads back the same)."""
    return not record.visits and not record.episodes


Section = tuple[str, str]


def section_of(entry: MemoryEntry) -> Section:
    """The file section a memory is written in."""
    if entry.scope is MemoryScope.LOCATION:
        return "location", str(entry.location_id or 0)
    if entry.scope is MemoryScope.NPC:
        return "npc", entry.npc_ids[0]
    return "world", ""


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
        self.chunks.append(_location_header(record))
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
                self.chunks.append(_location_header(record))
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


# -- parsing -----------------------------------------------------------------------------------


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
    notes: list[int] = field(default_factory=list)
    """Where a person's notes start (line numbers): blocks of prose, and sections of their
    own holding only prose (`## Dungeon notes`), which README invites. They are content,
    not problems: kept verbatim (in `raw`, with no problems) and written back where they
    stood."""


_MEMORY_MODES = frozenset({"location", "npc", "world"})
_COMMENT_START = "<!-- cairn "
_CAIRN_LINE_STARTS = ("**[", "**Visits:** ", _COMMENT_START, "## Location ", "## NPC ", "## World")
"""How the lines of a block cairn appends begin: a memory's header, a location's visits, the
comment under a header, a section's header."""


def _cut_opening(line: str, appended: bool) -> bool:
    """Whether `line` can be what a cut left of the line that opens an appended part (its
    header, written after the file's folded part) or, in one, a unit of work."""
    openings = (RECENT_HEADER, ARCHIVE_HEADER, UNIT_START) if appended else _APPENDED_HEADERS
    return any(o.startswith(line) and o != line for o in openings)


_CAIRN_HEADERS: tuple[str, ...] = ("# Location", "# NPC", "# World", "# Recent", "# Archived")
_CAIRN_HEADERS += ("## Location", "## NPC", "## World")
"""How the headers of cairn's parts and sections begin: a section under a header that begins
so is never a person's note (it is cairn's, misplaced or mistyped)."""
_CAIRN_PREFIXES = (*_CAIRN_LINE_STARTS, *_CAIRN_HEADERS, RECENT_HEADER, ARCHIVE_HEADER, UNIT_START)
_LONGEST_PREFIX = max(map(len, _CAIRN_PREFIXES))


def _prose_line(line: str) -> bool:
    """Whether `line` can be a line of a person's note: not a memory's header, visits line or
    cairn comment, nor what a cut leaves of one of cairn's lines or headers (a line that
    stops before one is complete, such as `<!-- cai` or `## Loc`). A blank line is."""
    if line.startswith(_CAIRN_LINE_STARTS) or _COMMENT_START in line:
        return False
    if not line or len(line) >= _LONGEST_PREFIX:
        return True
    return not any(p.startswith(line) for p in _CAIRN_PREFIXES)


def _cut_cairn_line(line: str) -> bool:
    """Whether `line` can be what a cut left of one of cairn's block lines (it starts as one
    does, or stops before its start is complete)."""
    return any(line.startswith(p) or p.startswith(line) for p in _CAIRN_LINE_STARTS)


_COMMENT_END = " -->"
# The C scanner behind json.loads, called directly: one JSON value from an index, no wrapping.
_scan_json: Callable[[str, int], tuple[Any, int]]
_scan_json = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_CATEGORIES = frozenset(MemoryCategory.__members__)
_NOT_A_HEADER = "not a memory header (**[CATEGORY] Title** *(EpN, Tn, +s)*)"


@dataclass
class _Unit:
    """An appended unit of work being read: what its cairn blocks and records replaced (None:
    new), and the raw blocks cut-off cairn blocks left, so it can be undone if it never ends."""

    memories: dict[str, MemoryEntry | None] = field(default_factory=dict)
    records: dict[int, LocationRecord | None] = field(default_factory=dict)
    unpinned: set[str] = field(default_factory=set)
    """The memories it replaced whose version before had no time from cairn's comment."""
    raw: list[tuple[RawBlock, ParseProblem]] = field(default_factory=list)
    tail: tuple[RawBlock, ParseProblem] | None = None
    """The raw block read last in the unit, when nothing was read after it: where a cut fell
    (`undo_unit` drops it when it is what a cut leaves of a line cairn writes)."""
    cut_memory: str | None = None
    """The memory read last in the unit from a header line alone (no comment, no text), when
    nothing was read after it: what a cut right after a header's line leaves of cairn's block
    (`undo_unit` forgets it)."""
    started: bool = True
    """False: cairn blocks found outside any unit (the tail of a unit an editor's save wrote
    over): undone even when an end marker follows."""

    def read_past(self) -> None:
        """Something was read after the last block: that block is no cut."""
        self.tail = None
        self.cut_memory = None


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
        self.unit: _Unit | None = None
        """The appended unit of work being read (between its markers)."""
        self.cut_short = 0
        """Cairn blocks of units that never ended (ignored)."""
        self.lines: list[str] = []
        self.unpinned: set[str] = set()
        """The memories whose last version read had no `created_at` in a comment."""
        self.opening: tuple[RawBlock, ParseProblem, int] | None = None
        """A one-line block (and the line it is on) that can be what a cut left of the line
        that opens an appended part or a unit of work (`_cut_opening`): dropped when only
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
            elif mode == "location" and first in "#*" and _is_location_line(line):
                if chunk is not None:
                    flush(start, chunk)
                    chunk = None
                if first == "*":
                    self.visits(number, line)
            elif chunk is None:  # a rule line starts a block too: `flush` drops it
                start, chunk = number, [line]
            elif first in _RULE_STARTS:  # a memory header or a rule: never a line of text
                if first == "*" and line.startswith("**["):
                    flush(start, chunk)
                    start, chunk = number, [line]
                elif _RULE_RE.match(line):
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
        self.out.unpinned = [i for i in self.memories if i in self.unpinned]
        self.resolve_display_links()
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
        elif line.startswith(_APPENDED_HEADERS):
            self.drop_opening(number)
            self.appended = True
            self.enter("appended_top", ("preamble", ""), None)
        else:
            self.start_bad(number, line, f"unknown top-level header {line!r}", top=True)
            if self.bad is not None and _cut_opening(line, self.appended):
                self.opening = (self.bad, self.out.problems[-1], number)

    def section_header(self, number: int, line: str) -> None:
        if self.bad is not None:
            self.end_bad()
        appended = self.appended and self.mode != "bad"
        if self.unit is not None:
            self.unit.read_past()
        location = _LOCATION_RE.match(line) if line.startswith("## L") else None
        npc = _NPC_RE.match(line) if location is None else None
        if location and (appended or self.mode in ("location_top", "location")):
            loc_id = _location_id(location.group(1))
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
            while len(lines) > 1 and (not lines[-1] or _RULE_RE.match(lines[-1])):
                lines.pop()
            if not lines[0].startswith(_CAIRN_HEADERS) and all(map(_prose_line, lines)):
                # a section of a person's own (`## Dungeon notes`, prose only): a note
                _drop_read_last(self.out.problems, [self.bad_problem])
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
        match = _VISITS_RE.match(line)
        assert match is not None
        self.keep_record(int(self.section[1]))
        record = self.out.cache.locations[int(self.section[1])]
        record.visits = int(match.group(1))
        episodes: list[int] = []
        for item in match.group(2).split(","):
            item = item.strip()
            if item in ("", "-"):
                continue
            digits = item.removeprefix("Ep")
            if digits.isdigit():
                episodes.append(int(digits))
            else:
                self.problem(number, f"episodes: {item!r} is not an episode number; ignored")
        record.episodes = sorted(set(episodes))

    def flush(self, start: int, chunk: list[str]) -> None:
        """Read a finished block: a memory, or a raw block kept verbatim with its problem. A
        rule line that starts a block is layout: dropped, and the rest read as a block. In an
        appended part, a unit's markers start and end it."""
        if self.appended and len(chunk) == 1 and chunk[0] in (UNIT_START, UNIT_END):
            if chunk[0] == UNIT_START:
                self.drop_opening(start)
            if chunk[0] == UNIT_START or (self.unit is not None and not self.unit.started):
                self.undo_unit()  # one that starts before the last one ended: that one is cut
            self.unit = _Unit() if chunk[0] == UNIT_START else None  # ended: it stands
            return
        if self.appended and self.unit is None and _COMMENT_START in "".join(chunk[1:2]):
            self.unit = _Unit(started=False)  # cairn's blocks come in units: a cut one
        error = self.memory(chunk)
        if error is not None:
            if error == _NOT_A_HEADER and _RULE_RE.match(chunk[0]):
                if len(chunk) > 1:
                    self.flush(start + 1, chunk[1:])
                return
            if error == _NOT_A_HEADER and all(map(_prose_line, chunk)):
                self.note(start, RawBlock(self.section, chunk, [], self.last_id))
                return
            message = f"{error}; the block is kept verbatim"
            self.problem(start, message)
            block = RawBlock(self.section, chunk, [(0, message)], self.last_id)
            self.out.raw.append(block)
            if len(chunk) == 1 and self.unit is None and _cut_opening(chunk[0], self.appended):
                self.opening = (block, self.out.problems[-1], start)
            if self.unit is not None:
                if any(_COMMENT_START in line for line in chunk):
                    self.unit.raw.append((block, self.out.problems[-1]))  # a cairn block cut off
                else:
                    self.unit.read_past()
                    self.unit.tail = (block, self.out.problems[-1])
        elif self.unit is not None:
            self.unit.read_past()
            if len(chunk) == 1 or (len(chunk) == 2 and _COMMENT_START.startswith(chunk[1])):
                self.unit.cut_memory = self.last_id  # a header alone, or with its comment cut

    def note(self, start: int, block: RawBlock) -> None:
        """Keep a person's note (a block of prose, at line `start`) verbatim: content, not a
        problem. It is no memory, and nothing a cut leaves of cairn's lines (see
        `_prose_line`)."""
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
        if opening is None:
            return
        block, problem, at = opening
        if len(block.lines) != 1 or any(line.strip() for line in self.lines[at : number - 1]):
            return  # more was read after it: a block of its own
        _drop_read_last(self.out.raw, [block])
        _drop_read_last(self.out.problems, [problem])
        self.cut_short += 1

    def undo_unit(self) -> None:
        """Undo what an appended unit of work that never ended did (see `UNIT_START`)."""
        unit, self.unit = self.unit, None
        if unit is None:
            return
        memories, locations = self.out.cache.memories, self.out.cache.locations
        for entry_id, before in unit.memories.items():
            if before is None:
                memories.pop(entry_id, None)
            else:
                memories[entry_id] = before
        self.unpinned |= unit.unpinned
        for loc_id, record in unit.records.items():
            if record is None:
                locations.pop(loc_id, None)
            else:
                locations[loc_id] = record
        cut = list(unit.raw)
        if unit.tail is not None and all(map(_cut_cairn_line, unit.tail[0].lines)):
            cut.append(unit.tail)  # the cut fell inside a block's first line or its comment's
        if cut:
            _drop_read_last(self.out.raw, [block for block, _ in cut])
            _drop_read_last(self.out.problems, [problem for _, problem in cut])
        if unit.cut_memory is not None:  # the cut fell right after a header's line
            memories.pop(unit.cut_memory, None)
            self.cut_short += 1
        self.cut_short += len(unit.memories) + len(cut)

    def memory(self, lines: list[str]) -> str | None:
        """Parse one memory block into the cache; return an error message when it does not."""
        header = _HEADER_RE.match(lines[0])
        if header is None:
            return _NOT_A_HEADER
        tag, title, meta = header.groups()
        if not title:
            return _NOT_A_HEADER
        if not self.in_memory_section:
            return "memory outside a location, NPC or world section"
        fields = _header_fields(tag, meta or "")
        if isinstance(fields, str):
            return fields
        comment: dict[str, Any] = {}
        start = 1
        count = len(lines)
        if count > 1 and lines[1].startswith(_COMMENT_START):
            parsed = _comment_object(lines[1])
            if isinstance(parsed, str):
                return parsed
            comment, start = parsed, 2
        display_title: str | None = None
        if count > start and lines[start][0] == "[":
            shown = _DISPLAY_RE.match(lines[start])
            if shown is not None:
                display_title = shown.group("title")
                start += 1
        # Later entries win: the comment overrides header fields and section defaults; the
        # section decides the scope (and the location id).
        data = {
            **self.scope_defaults,
            **fields,
            "title": unescape_inline(title) if "\\" in title else title,
            **comment,
            "text": _text(lines, start, count),
            **self.scope_fixed,
        }
        if "id" not in data:  # written by a person: the same id on every load of this block
            data["id"] = self.derived_id(lines)
        if self.mode == "npc" and "npc_ids" not in data:
            data["npc_ids"] = [self.section[1]]
        try:
            entry: MemoryEntry = MemoryEntry.__pydantic_validator__.validate_python(data)
        except ValidationError as e:
            return f"invalid memory ({_validation_message(e)})"
        memories, entry_id = self.memories, entry.id
        if entry_id in memories and not self.appended:
            return f"duplicate memory id {entry_id!r}"
        if self.unit is not None and comment and entry_id not in self.unit.memories:
            self.unit.memories[entry_id] = memories.get(entry_id)  # a cairn block of the unit
            if entry_id in self.unpinned:
                self.unit.unpinned.add(entry_id)
        memories[entry_id] = entry
        self.last_id = entry_id
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

    def resolve_display_links(self) -> None:
        """Older files have only `[Superseded ... by "Title"]`: link when exactly one matches."""
        if not self.pending_successor_titles:
            return
        memories = self.out.cache.memories
        by_title: dict[str, list[str]] = {}
        for memory in memories.values():
            by_title.setdefault(memory.title, []).append(memory.id)
        for entry_id, title in self.pending_successor_titles.items():
            matches = by_title.get(title, [])
            if len(matches) == 1:
                memories[entry_id] = memories[entry_id].model_copy(
                    update={"superseded_by": matches[0]}
                )


_LOCATION_SCOPE, _NPC_SCOPE, _WORLD_SCOPE = (
    MemoryScope.LOCATION.value,
    MemoryScope.NPC.value,
    MemoryScope.WORLD.value,
)
_new_record = LocationRecord.__pydantic_validator__.validate_python
"""A location record from a section header's id (in range) and name: always valid."""
_ID_LIMIT = 2**63
"""Location ids are 64-bit signed integers (what SQLite and PostgreSQL keep)."""


def _location_id(digits: str) -> int | None:
    """The location id a header's digits give, None when out of range (or too long to be
    a number Python converts)."""
    if len(digits) > 20:
        return None
    value = int(digits)
    return value if -_ID_LIMIT <= value < _ID_LIMIT else None


def _drop_read_last(items: list[Any], drop: list[Any]) -> None:
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


def _is_location_line(line: str) -> bool:
    """Whether a line is a location section's `### Memories` subheader or its visits line."""
    if line == MEMORIES_SUBHEADER:
        return True
    return line.startswith("**Visits:") and _VISITS_RE.match(line) is not None


def _validation_message(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}" for err in error.errors()
    )


def _text(lines: list[str], start: int, count: int) -> str:
    """The memory text of a block: its lines from `start` of `count`, unescaped (lines of a
    block are never empty)."""
    if start == count - 1:
        line = lines[start]
        return unescape_text_line(line) if line[0] == "\\" else line
    return "\n".join(
        unescape_text_line(line) if line[0] == "\\" else line for line in lines[start:]
    )


def _comment_object(line: str) -> dict[str, Any] | str:
    """The fields of a `<!-- cairn {...} -->` line, or an error message."""
    if not line.endswith(_COMMENT_END):
        return f"the cairn comment does not end with {_COMMENT_END.strip()!r}"
    body = line[len(_COMMENT_START) : -len(_COMMENT_END)]
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
def _header_fields(tag: str, meta: str) -> dict[str, Any] | str:
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
        if first == "E" and item.startswith("Ep") and item[2:].isdecimal():
            items.append(("episode", int(item[2:])))
        elif first == "T" and (turns := _turns(item[1:])) is not None:
            items += [("turn_start", turns[0]), ("turn_end", turns[1])]
        elif first in ("+", "-") and item[1:].isdecimal():
            items.append(("score_delta", int(item)))
        elif item:
            return f"metadata item {item!r} is not EpN, Tn[-m] or a score change"
    return tuple(items)


def _turns(value: str) -> tuple[int, int] | None:
    """`n` or `n-m` as (start, end), else None."""
    start, dash, end = value.partition("-")
    if not start.isdecimal() or (dash and not end.isdecimal()):
        return None
    return int(start), int(end or start)


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


def read_text(path: Path) -> str:
    """The file's text; undecodable bytes are kept (surrogateescape) so a rewrite preserves them."""
    return path.read_bytes().decode("utf-8", errors="surrogateescape")


@dataclass
class FileCheck:
    """What `cairn memories check` finds in a memory file."""

    problems: list[ParseProblem]
    """What cairn cannot read or would lose, by line."""
    notes: list[int]
    """Where a person's notes start (kept verbatim: content, not problems)."""
    memories: int
    """The memories read."""


_UNDECODABLE = re.compile("[\udc80-\udcff]")
"""The characters `read_text` keeps bytes that are not UTF-8 as."""


def check_file(path: Path) -> FileCheck:
    """Every problem in a memory file, with line numbers, its notes and its memories (one
    parse, in time linear in the file's size)."""
    text = read_text(path).removeprefix("\ufeff").replace("\r\n", "\n")
    with gc_paused():  # (as a store's load: the objects made all stay alive until the end)
        parsed = parse(text, str(path))
    problems = parsed.problems
    line, at = 1, 0
    for match in _UNDECODABLE.finditer(text):
        start = match.start()
        line += text.count("\n", at, start)
        at = start
        if not problems or problems[-1].line != line or problems[-1].message != _NOT_UTF8:
            problems.append(ParseProblem(path=str(path), line=line, message=_NOT_UTF8))
    problems.sort(key=lambda p: p.line)
    return FileCheck(problems, parsed.notes, len(parsed.cache.memories))


_NOT_UTF8 = "bytes that are not UTF-8"


def check_memory_file(path: Path) -> list[ParseProblem]:
    """Every problem in a memory file, with line numbers (empty when the file is valid)."""
    return check_file(path).problems
