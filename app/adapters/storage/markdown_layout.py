"""The Memories.md layout: its parts, section headers and markers (the format, described here).

Layout (sections in this order; locations by id, NPCs by id; a `---` rule closes each location
section)::

    # Location Memories

    ## Location 15: Old Mill
    **Visits:** 3 | **Episodes:** 1, 2, 3

    ### Memories

    **[SUCCESS] Open and enter window** *(Ep1, T23-24, +0)*
    <!-- cairn {"id": "m-...", "created_at": "2026-11-23T09:31:46Z"} -->
    Window can be opened with effort and used as alternative entrance to house.

    **[NOTE - SUPERSEDED] Miller accepts bread gift** *(Ep1, T12, +0)*
    <!-- cairn {"id": "m-...", "importance": 300, "created_at": "...", "superseded_by": "m-..."} -->
    [Superseded at T13 by "Miller turns hostile after the gift"]
    The miller accepts the bread graciously.

    ---

    # NPC Memories

    ## NPC miller

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
person may write it (`## Location 5: Hall`): it reads back the same record.

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

import re
from dataclasses import dataclass, field

from cairn.models.memory import MemoryEntry, MemoryScope

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
APPENDED_HEADERS = (RECENT_HEADER, ARCHIVE_HEADER)
MEMORIES_SUBHEADER = "### Memories"
COMMENT_START = "<!-- cairn "
COMMENT_END = " -->"
RULE = "---"
LOCATION_RE = re.compile(r"^## Location (-?\d+):(?: (.*))?$")
NPC_RE = re.compile(r"^## NPC (.+)$")
VISITS_RE = re.compile(r"^\*\*Visits:\*\* (\d+) \| \*\*Episodes:\*\* ?(.*)$")
# A thematic break (`---`, `***`, `___`, spaced or not): layout between blocks, never text.
RULE_RE = re.compile(r"^ {0,3}([-*_])[ \t]*(?:\1[ \t]*){2,}$")
RULE_STARTS = "-*_ "


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


Section = tuple[str, str]


def section_of(entry: MemoryEntry) -> Section:
    """The file section a memory is written in."""
    if entry.scope is MemoryScope.LOCATION:
        return "location", str(entry.location_id or 0)
    if entry.scope is MemoryScope.NPC:
        return "npc", entry.npc_ids[0]
    return "world", ""


ID_LIMIT = 2**63
"""Location ids are 64-bit signed integers (what SQLite and PostgreSQL keep)."""


def location_id_of(digits: str) -> int | None:
    """The location id a header's digits give, None when out of range (or too long to be
    a number Python converts)."""
    if len(digits) > 20:
        return None
    value = int(digits)
    return value if -ID_LIMIT <= value < ID_LIMIT else None


def bounded_int(digits: str) -> int | None:
    """The integer of decimal `digits` (a sign allowed), None when it is out of the 64-bit range
    the stores keep: never Python's error for a string of more than 4,300 digits."""
    sign = "-" if digits.startswith("-") else ""
    significant = digits.lstrip("+-").lstrip("0") or "0"
    if len(significant) > 19:
        return None
    value = int(sign + significant)
    return value if -ID_LIMIT <= value < ID_LIMIT else None


def shown_item(item: str, limit: int = 30) -> str:
    """An item of a line for a message: quoted, cut to `limit` characters (a number of 5,000
    digits is named, not printed)."""
    return repr(item if len(item) <= limit else item[:limit] + "...")


def is_location_line(line: str) -> bool:
    """Whether a line is a location section's `### Memories` subheader or its visits line."""
    if line == MEMORIES_SUBHEADER:
        return True
    return line.startswith("**Visits:") and VISITS_RE.match(line) is not None


def read_visits(line: str) -> tuple[int | None, list[int], list[str]]:
    """A visits line's visits (None when out of range), its episodes (sorted, each once; `Ep2`
    reads as 2) and the items that are not episode numbers in range (`**Visits:** 3 |
    **Episodes:** 1, 2`)."""
    match = VISITS_RE.match(line)
    assert match is not None
    episodes: list[int] = []
    ignored: list[str] = []
    for item in match.group(2).split(","):
        item = item.strip()
        if item in ("", "-"):
            continue
        digits = item.removeprefix("Ep")
        episode = bounded_int(digits) if digits.isdigit() else None
        if episode is not None:
            episodes.append(episode)
        else:
            ignored.append(item)
    return bounded_int(match.group(1)), sorted(set(episodes)), ignored
