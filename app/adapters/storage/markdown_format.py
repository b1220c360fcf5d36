"""The Memories.md format: seed 002's layout plus NPC and World sections, escaped, lossless.

Layout (sections in this order; locations by id, NPCs by id)::

    # Location Memories

    ## Location 15: West of House
    **Visits:** 3 | **Episodes:** 1, 2, 3

    ### Memories

    **[SUCCESS] Open and enter window** *(Ep1, T23-24, +0)*
    <!-- cairn {"id": "m-...", "importance": 500, "created_at": "..."} -->
    Window can be opened with effort and used as alternative entrance to house.

    **[NOTE - SUPERSEDED] Troll accepts lunch gift** *(Ep1, T12, +0)*
    <!-- cairn {"id": "m-...", "superseded_by": "m-..."} -->
    [Superseded at T13 by "Troll attacks after accepting gift"]
    Troll accepts lunch offering graciously.

    # NPC Memories

    ## NPC troll

    **[DANGER] ...**

    # World Memories

    **[NOTE] ...**

The header shows category, status (omitted when ACTIVE), persistence (older tools' three-part
form `[CATEGORY - PERSISTENCE - STATUS]` is read too), title, episode, turns and score; the
`<!-- cairn {...} -->` comment (invisible when rendered) keeps the other fields. The
`[Superseded ...]` line is display only; the link is `superseded_by` in the comment.

Escaping, so any text round-trips exactly and never creates structure (PITFALLS 4-6):
- titles, names and NPC ids: `\\` for a backslash, `\\*` for `*`, `\\uXXXX` for control and
  line-separator characters;
- text lines: a line with control characters or leading/trailing whitespace is written as
  `\\` + its JSON string; a blank line, or one starting with `#`, `*`, `<`, `[`, `-`, `\\`,
  `=`, `>`, `|` or a digit is written with a `\\` prefix. No text line can then look like a
  header, a memory, a comment or a rule.

Blocks that do not parse are kept verbatim (re-emitted in their section on the next write) and
reported as ParseProblems with their line numbers.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.adapters.storage.ops import MemoryCache
from app.models.memory import (
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
    ParseProblem,
)

LOCATIONS_HEADER = "# Location Memories"
NPCS_HEADER = "# NPC Memories"
WORLD_HEADER = "# World Memories"
MEMORIES_SUBHEADER = "### Memories"

_LOCATION_RE = re.compile(r"^## Location (-?\d+):(?: (.*))?$")
_NPC_RE = re.compile(r"^## NPC (.+)$")
_VISITS_RE = re.compile(r"^\*\*Visits:\*\* (\d+) \| \*\*Episodes:\*\* ?(.*)$")
_HEADER_RE = re.compile(
    r"^\*\*\[(?P<tag>[^\]]*)\] (?P<title>(?:[^\\*]|\\.)+)\*\*(?: \*\((?P<meta>[^()]*)\)\*)?$"
)
_META_RE = re.compile(r"^<!-- cairn (\{.*\}) -->$")
_EP_RE = re.compile(r"^Ep(\d+)$")
_TURN_RE = re.compile(r"^T(\d+)(?:-(\d+))?$")
_SCORE_RE = re.compile(r"^[+-]\d+$")
_DISPLAY_RE = re.compile(r'^\[(?:Superseded(?: at T\d+)?(?: by "(?P<title>.*)")?|Invalidated)\]$')
_PERSISTENCE_RE = re.compile(r"^[A-Za-z][A-Za-z_]*$")

_SPECIAL_STARTS = ("#", "*", "<", "[", "-", "\\", "=", ">", "|", "+", "`", "~", "_")
_HEADER_FIELDS = frozenset(
    {"scope", "category", "status", "title", "text", "episode", "turn_start", "turn_end"}
    | {"score_delta"}
)
_STATUSES = {s.value for s in MemoryStatus}


# -- escaping ----------------------------------------------------------------------------------


def _is_control(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


def escape_inline(value: str) -> str:
    """Escape a title, name or id so that it is one line with no markup."""
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
    return line != line.strip() or any(_is_control(c) for c in line)


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


# -- rendering ---------------------------------------------------------------------------------


def _tag(entry: MemoryEntry) -> str:
    persistence = entry.persistence
    if persistence is not None and _PERSISTENCE_RE.match(persistence):
        return f"{entry.category.value} - {persistence} - {entry.status.value}"
    if entry.status is MemoryStatus.ACTIVE:
        return entry.category.value
    return f"{entry.category.value} - {entry.status.value}"


def _header_meta(entry: MemoryEntry) -> str:
    parts: list[str] = []
    if entry.episode is not None:
        parts.append(f"Ep{entry.episode}")
    if entry.turn_start is not None:
        end = entry.turn_end
        parts.append(
            f"T{entry.turn_start}"
            if end in (None, entry.turn_start)
            else f"T{entry.turn_start}-{end}"
        )
    if entry.score_delta is not None:
        parts.append(f"{entry.score_delta:+d}")
    return f" *({', '.join(parts)})*" if parts else ""


def _comment(entry: MemoryEntry, section_name: str | None) -> dict[str, Any]:
    data = entry.model_dump(mode="json", exclude=set(_HEADER_FIELDS), exclude_defaults=True)
    data = {"id": entry.id, **{k: v for k, v in data.items() if k != "id"}}
    data["created_at"] = entry.created_at.isoformat()
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
    return data


def _comment_json(data: dict[str, Any]) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(", ", ": "))
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
    """Lines of a memory file kept verbatim because they did not parse."""

    section: tuple[str, str]
    lines: list[str]


class EntryRenderCache:
    """Rendered blocks by memory id, reused while the entry object and its context are unchanged."""

    def __init__(self) -> None:
        self._blocks: dict[str, tuple[MemoryEntry, str | None, str | None, str]] = {}

    def block(self, entry: MemoryEntry, section_name: str | None, display: str | None) -> str:
        hit = self._blocks.get(entry.id)
        if hit is not None and hit[0] is entry and hit[1] == section_name and hit[2] == display:
            return hit[3]
        text = render_entry(entry, section_name, display)
        self._blocks[entry.id] = (entry, section_name, display, text)
        return text

    def forget_missing(self, ids: Iterable[str]) -> None:
        keep = set(ids)
        for stale in [k for k in self._blocks if k not in keep]:
            del self._blocks[stale]


def ordered(cache: MemoryCache) -> MemoryCache:
    """The cache with memories in file order (the order a reload gives), records unchanged."""
    groups: dict[tuple[int, str], list[MemoryEntry]] = {}
    for entry in cache.memories.values():
        groups.setdefault(_section_key(entry), []).append(entry)
    out = MemoryCache()
    out.locations = cache.locations
    for key in sorted(groups, key=_sort_key):
        for entry in groups[key]:
            out.memories[entry.id] = entry
    return out


def _section_key(entry: MemoryEntry) -> tuple[int, str]:
    if entry.scope is MemoryScope.LOCATION:
        return (0, str(entry.location_id))
    if entry.scope is MemoryScope.NPC:
        return (1, entry.npc_ids[0])
    return (2, "")


def _sort_key(key: tuple[int, str]) -> tuple[int, int, str]:
    kind, name = key
    return (kind, int(name) if kind == 0 else 0, name if kind != 0 else "")


def render(cache: MemoryCache, raw: list[RawBlock], blocks: EntryRenderCache | None = None) -> str:
    """The whole file for `cache` (already in file order) and the kept raw blocks."""
    blocks = blocks or EntryRenderCache()
    raw_by_section: dict[tuple[str, str], list[RawBlock]] = {}
    for block in raw:
        raw_by_section.setdefault(block.section, []).append(block)
    by_location: dict[int, list[MemoryEntry]] = {}
    by_npc: dict[str, list[MemoryEntry]] = {}
    world: list[MemoryEntry] = []
    for entry in cache.memories.values():
        if entry.scope is MemoryScope.LOCATION:
            by_location.setdefault(entry.location_id or 0, []).append(entry)
        elif entry.scope is MemoryScope.NPC:
            by_npc.setdefault(entry.npc_ids[0], []).append(entry)
        else:
            world.append(entry)

    chunks: list[str] = ["\n".join(b.lines) for b in raw_by_section.pop(("preamble", ""), [])]

    def emit(entries: list[MemoryEntry], section_name: str | None) -> None:
        for entry in entries:
            successor = cache.memories.get(entry.superseded_by or "")
            chunks.append(blocks.block(entry, section_name, display_line(entry, successor)))

    chunks.append(LOCATIONS_HEADER)
    location_ids = sorted(
        set(cache.locations)
        | set(by_location)
        | {int(k) for kind, k in raw_by_section if kind == "location"}
    )
    for loc_id in location_ids:
        record = cache.locations.get(loc_id) or LocationRecord(id=loc_id)
        name = escape_inline(record.name)
        episodes = ", ".join(str(e) for e in record.episodes) or "-"
        chunks.append(
            f"## Location {loc_id}:{' ' + name if name else ''}\n"
            f"**Visits:** {record.visits} | **Episodes:** {episodes}"
        )
        chunks.append(MEMORIES_SUBHEADER)
        emit(by_location.get(loc_id, []), record.name)
        chunks.extend("\n".join(b.lines) for b in raw_by_section.pop(("location", str(loc_id)), []))

    chunks.append(NPCS_HEADER)
    npc_ids = sorted(set(by_npc) | {k for kind, k in raw_by_section if kind == "npc"})
    for npc_id in npc_ids:
        chunks.append(f"## NPC {escape_inline(npc_id)}")
        emit(by_npc.get(npc_id, []), npc_id)
        chunks.extend("\n".join(b.lines) for b in raw_by_section.pop(("npc", npc_id), []))

    chunks.append(WORLD_HEADER)
    emit(world, None)
    for rest in raw_by_section.values():  # world raw blocks and any others, verbatim
        chunks.extend("\n".join(b.lines) for b in rest)
    blocks.forget_missing(cache.memories)
    return "\n\n".join(chunks) + "\n"


# -- parsing -----------------------------------------------------------------------------------


@dataclass
class ParsedFile:
    """The result of reading a memory file: a cache, the verbatim blocks and the problems."""

    cache: MemoryCache = field(default_factory=MemoryCache)
    raw: list[RawBlock] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)


@dataclass
class _Chunk:
    start: int  # 1-based line number of the first line
    lines: list[str]


class _Parser:
    def __init__(self, path: str) -> None:
        self.path = path
        self.out = ParsedFile()
        self.mode = "preamble"  # preamble | location | npc | world | bad
        self.section: tuple[str, str] = ("preamble", "")
        self.section_name: str | None = None
        self.chunk: _Chunk | None = None
        self.bad: RawBlock | None = None
        self.pending_successor_titles: dict[str, str] = {}

    def problem(self, line: int, message: str) -> None:
        self.out.problems.append(ParseProblem(path=self.path, line=line, message=message))

    def parse(self, text: str) -> ParsedFile:
        for number, line in enumerate(text.split("\n"), start=1):
            self.feed(number, line.rstrip("\r") if line.endswith("\r") else line)
        self.flush()
        self.resolve_display_links()
        return self.out

    # The structure: `# ...` top headers, `## ...` section headers, the visits line, the
    # `### Memories` subheader, blank lines between blocks, memory headers starting blocks.
    def feed(self, number: int, line: str) -> None:
        if line.strip() == "":
            self.flush()
            return
        if line.startswith("# "):
            self.flush()
            self.top_header(number, line)
            return
        if line.startswith("## "):
            self.flush()
            self.section_header(number, line)
            return
        if self.mode == "bad":
            assert self.bad is not None
            if self.chunk is None:
                self.bad.lines.append("")
                self.chunk = _Chunk(number, [])
            self.bad.lines.append(line)
            return
        if line == MEMORIES_SUBHEADER and self.mode == "location":
            self.flush()
            return
        visits = _VISITS_RE.match(line)
        if visits and self.mode == "location":
            self.flush()
            self.visits(number, visits)
            return
        if line.startswith("**[") and self.chunk is not None:
            self.flush()
        if self.chunk is None:
            self.chunk = _Chunk(number, [line])
        else:
            self.chunk.lines.append(line)

    def top_header(self, number: int, line: str) -> None:
        self.end_bad()
        if line == LOCATIONS_HEADER:
            self.mode, self.section, self.section_name = "location_top", ("preamble", ""), None
        elif line == NPCS_HEADER:
            self.mode, self.section, self.section_name = "npc_top", ("preamble", ""), None
        elif line == WORLD_HEADER:
            self.mode, self.section, self.section_name = "world", ("world", ""), None
        else:
            self.start_bad(number, line, f"unknown top-level header {line!r}")

    def section_header(self, number: int, line: str) -> None:
        self.end_bad()
        location = _LOCATION_RE.match(line)
        npc = _NPC_RE.match(line)
        if location and self.mode in ("location_top", "location"):
            loc_id = int(location.group(1))
            name = unescape_inline(location.group(2) or "")
            if loc_id in self.out.cache.locations:
                self.problem(number, f"location {loc_id} appears twice; its sections are merged")
            else:
                self.out.cache.locations[loc_id] = LocationRecord(id=loc_id, name=name)
            self.mode, self.section = "location", ("location", str(loc_id))
            self.section_name = self.out.cache.locations[loc_id].name
        elif npc and self.mode in ("npc_top", "npc"):
            npc_id = unescape_inline(npc.group(1))
            self.mode, self.section, self.section_name = "npc", ("npc", npc_id), npc_id
        else:
            self.start_bad(number, line, f"section header {line!r} not understood here")

    def start_bad(self, number: int, line: str, message: str) -> None:
        self.problem(number, f"{message}; the section is kept verbatim")
        self.bad = RawBlock(self.section, [line])
        self.mode = "bad"
        self.chunk = _Chunk(number, [])

    def end_bad(self) -> None:
        if self.bad is not None:
            self.out.raw.append(self.bad)
            self.bad = None

    def visits(self, number: int, match: re.Match[str]) -> None:
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

    def flush(self) -> None:
        chunk, self.chunk = self.chunk, None
        if chunk is None or self.mode == "bad":
            return
        error = self.memory(chunk)
        if error is not None:
            self.problem(chunk.start, f"{error}; the block is kept verbatim")
            self.out.raw.append(RawBlock(self.section, chunk.lines))

    def memory(self, chunk: _Chunk) -> str | None:
        """Parse one memory block into the cache; return an error message when it does not."""
        header = _HEADER_RE.match(chunk.lines[0])
        if header is None:
            return "not a memory header (**[CATEGORY] Title** *(EpN, Tn, +s)*)"
        if self.mode not in ("location", "npc", "world"):
            return "memory outside a location, NPC or world section"
        data: dict[str, Any] = {"title": unescape_inline(header.group("title"))}
        error = _tag_fields(header.group("tag"), data) or _meta_fields(header.group("meta"), data)
        if error:
            return error
        rest = chunk.lines[1:]
        if rest and _META_RE.match(rest[0]):
            try:
                comment = json.loads(_META_RE.match(rest[0]).group(1))  # type: ignore[union-attr]
            except ValueError as e:
                return f"the cairn comment is not valid JSON ({e})"
            if not isinstance(comment, dict):
                return "the cairn comment is not a JSON object"
            data.update(comment)
            rest = rest[1:]
        display_title: str | None = None
        if rest and rest[0].startswith("[") and (shown := _DISPLAY_RE.match(rest[0])):
            display_title = shown.group("title")
            rest = rest[1:]
        data["text"] = "\n".join(unescape_text_line(line) for line in rest)
        self.scope_fields(data)
        try:
            entry = MemoryEntry.model_validate(data)
        except ValidationError as e:
            fields = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}"
                for err in e.errors()
            )
            return f"invalid memory ({fields})"
        if entry.id in self.out.cache.memories:
            return f"duplicate memory id {entry.id!r}"
        self.out.cache.memories[entry.id] = entry
        if display_title and entry.status is MemoryStatus.SUPERSEDED and not entry.superseded_by:
            self.pending_successor_titles[entry.id] = unescape_inline(display_title)
        return None

    def scope_fields(self, data: dict[str, Any]) -> None:
        if self.mode == "location":
            data["scope"] = MemoryScope.LOCATION.value
            data["location_id"] = int(self.section[1])
            data.setdefault("location_name", self.section_name)
        elif self.mode == "npc":
            data["scope"] = MemoryScope.NPC.value
            data.setdefault("npc_ids", [self.section[1]])
        else:
            data["scope"] = MemoryScope.WORLD.value

    def resolve_display_links(self) -> None:
        """Older files have only `[Superseded ... by "Title"]`: link when exactly one matches."""
        for entry_id, title in self.pending_successor_titles.items():
            matches = [m for m in self.out.cache.memories.values() if m.title == title]
            if len(matches) == 1:
                entry = self.out.cache.memories[entry_id]
                self.out.cache.memories[entry_id] = entry.model_copy(
                    update={"superseded_by": matches[0].id}
                )


def _tag_fields(tag: str, data: dict[str, Any]) -> str | None:
    parts = [p.strip() for p in tag.split(" - ")]
    if parts[0] not in MemoryCategory.__members__:
        return f"category: {parts[0]!r} is not one of {', '.join(MemoryCategory.__members__)}"
    data["category"] = parts[0]
    if len(parts) == 2:
        data["status" if parts[1] in _STATUSES else "persistence"] = parts[1]
    elif len(parts) == 3:
        data["persistence"], data["status"] = parts[1], parts[2]
    elif len(parts) > 3:
        return f"tag [{tag}] has more than three parts"
    if data.get("status", "ACTIVE") not in _STATUSES:
        return f"status: {data['status']!r} is not one of {', '.join(sorted(_STATUSES))}"
    return None


def _meta_fields(meta: str | None, data: dict[str, Any]) -> str | None:
    if not meta:
        return None
    for item in (p.strip() for p in meta.split(",")):
        if (episode := _EP_RE.match(item)) is not None:
            data["episode"] = int(episode.group(1))
        elif (turns := _TURN_RE.match(item)) is not None:
            data["turn_start"] = int(turns.group(1))
            data["turn_end"] = int(turns.group(2) or turns.group(1))
        elif _SCORE_RE.match(item):
            data["score_delta"] = int(item)
        elif item:
            return f"metadata item {item!r} is not EpN, Tn[-m] or a score change"
    return None


def parse(text: str, path: str = "Memories.md") -> ParsedFile:
    """Read a memory file's text. Never raises for content: problems are reported instead."""
    return _Parser(path).parse(text)


def read_text(path: Path) -> str:
    """The file's text; undecodable bytes are kept (surrogateescape) so a rewrite preserves them."""
    return path.read_bytes().decode("utf-8", errors="surrogateescape")


def check_memory_file(path: Path) -> list[ParseProblem]:
    """Every problem in a memory file, with line numbers (empty when the file is valid)."""
    text = read_text(path)
    problems = parse(text, str(path)).problems
    for number, line in enumerate(text.split("\n"), start=1):
        if any(0xDC80 <= ord(c) <= 0xDCFF for c in line):
            problems.append(
                ParseProblem(path=str(path), line=number, message="bytes that are not UTF-8")
            )
    return sorted(problems, key=lambda p: p.line)
