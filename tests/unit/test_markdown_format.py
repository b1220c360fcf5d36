"""The Memories.md format: escaping, the exact layout, rule lines, the minimal cairn comment,
timestamps to the second, older files and header forms, seed 002's example, problems with line
numbers, verbatim blocks, ids of hand-written blocks, and render/parse agreement."""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.adapters.storage.markdown_blocks import as_written, comment_fields
from cairn.adapters.storage.markdown_check import check_memory_file, read_text
from cairn.adapters.storage.markdown_escape import (
    escape_inline,
    escape_text,
    unescape_inline,
    unescape_text_line,
)
from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.markdown_render import EntryRenderCache, ordered, render, render_file
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.models.memory import (
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
    MemoryStatus,
    utc_now,
)

CREATED = datetime(2024, 3, 4, 5, 6, 7, tzinfo=UTC)
HEADER_FIELDS = {"scope", "category", "status", "title", "text", "episode", "turn_start"}
HEADER_FIELDS |= {"turn_end", "score_delta"}
CONTROL_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}
STRUCTURE_STARTS = ("#", "*", "<", "[", "-", "=", ">", "|", "+", "`", "~", "_")


def entry(title: str, **fields: object) -> MemoryEntry:
    fields.setdefault("scope", MemoryScope.LOCATION)
    if fields["scope"] is MemoryScope.LOCATION:
        fields.setdefault("location_id", 15)
        fields.setdefault("location_name", "West of House")
    fields.setdefault("created_at", CREATED)
    return MemoryEntry(title=title, **fields)  # type: ignore[arg-type]


def cache_of(*entries: MemoryEntry, locations: list[LocationRecord] | None = None) -> MemoryCache:
    cache = MemoryCache()
    for record in locations or []:
        cache.locations[record.id] = record
    for item in entries:
        cache.memories[item.id] = item
        if item.scope is MemoryScope.LOCATION and item.location_id is not None:
            cache.ensure_location(item.location_id, item.location_name or "")
    return cache


def line_of(text: str, line: str) -> int:
    return text.split("\n").index(line) + 1


# -- escaping ----------------------------------------------------------------------------------


@given(st.text())
def test_inline_escaping_round_trips_and_stays_one_plain_line(value: str) -> None:
    escaped = escape_inline(value)
    assert unescape_inline(escaped) == value
    assert "\n" not in escaped and "\r" not in escaped
    assert "*" not in escaped.replace("\\\\", "").replace("\\*", "")
    assert not any(unicodedata.category(c) in CONTROL_CATEGORIES for c in escaped)


@given(st.text())
def test_text_escaping_round_trips_and_no_line_looks_like_structure(text: str) -> None:
    lines = escape_text(text)
    assert "\n".join(unescape_text_line(line) for line in lines) == text
    for line in lines:
        assert line.strip() == line and line != ""
        assert not any(unicodedata.category(c) in CONTROL_CATEGORIES for c in line)
        assert not line.startswith(STRUCTURE_STARTS)
        assert not line[0].isdigit()


def test_text_that_looks_like_structure_is_escaped() -> None:
    text = "\n## Location 999: Fake Room\n**[DANGER] Grue here** *(Ep1, T1)*\n---\n  indented"
    assert escape_text(text) == [
        "\\",
        "\\## Location 999: Fake Room",
        "\\**[DANGER] Grue here** *(Ep1, T1)*",
        "\\---",
        '\\"  indented"',
    ]


def test_titles_escape_markup_backslashes_and_controls() -> None:
    assert (
        escape_inline("Sign reads **beware** *(old)*")
        == "Sign reads \\*\\*beware\\*\\* \\*(old)\\*"
    )
    assert escape_inline("a\\b\nc\u2028") == "a\\\\b\\u000ac\\u2028"
    assert unescape_inline("\\u00e9\\U0001f409\\q") == "é🐉q"


# -- the layout --------------------------------------------------------------------------------

EXPECTED_LAYOUT = """\
# Location Memories

## Location 15: West of House
**Visits:** 3 | **Episodes:** 1, 2

### Memories

**[SUCCESS] Open and enter window** *(Ep1, T23-24, +0)*
<!-- cairn {"id": "m-window", "created_at": "2024-03-04T05:06:07Z"} -->
Window can be opened with effort.

**[NOTE - SUPERSEDED] Troll accepts lunch gift** *(Ep1, T12, +0)*
<!-- cairn {"id": "m-gift", "created_at": "2024-03-04T05:06:07Z", "superseded_by": "m-attack", "turn_end": null} -->
[Superseded at T13 by "Troll attacks after accepting gift"]
Troll accepts lunch offering graciously.

**[DANGER - PERMANENT - ACTIVE] Troll attacks after accepting gift** *(Ep1, T13, -10)*
<!-- cairn {"id": "m-attack", "importance": 900, "created_at": "2024-03-04T05:06:07Z", "turn_end": null} -->

---

# NPC Memories

## NPC troll

**[DANGER - TENTATIVE] Troll hates lunch** *(Ep2)*
<!-- cairn {"id": "m-npc", "created_at": "2024-03-04T05:06:07Z"} -->
\\## not a header

# World Memories

**[NOTE] Lamp** *(T5-9)*
<!-- cairn {"id": "m-world", "created_at": "2024-03-04T05:06:07Z"} -->
\\- lasts 300 turns
"""  # noqa: E501


def layout_cache() -> MemoryCache:
    window = entry(
        "Open and enter window",
        id="m-window",
        category=MemoryCategory.SUCCESS,
        episode=1,
        turn_start=23,
        turn_end=24,
        score_delta=0,
        text="Window can be opened with effort.",
    )
    gift = entry(
        "Troll accepts lunch gift",
        id="m-gift",
        status=MemoryStatus.SUPERSEDED,
        superseded_by="m-attack",
        episode=1,
        turn_start=12,
        score_delta=0,
        text="Troll accepts lunch offering graciously.",
    )
    attack = entry(
        "Troll attacks after accepting gift",
        id="m-attack",
        category=MemoryCategory.DANGER,
        persistence="PERMANENT",
        importance=900,
        episode=1,
        turn_start=13,
        score_delta=-10,
    )
    npc = entry(
        "Troll hates lunch",
        id="m-npc",
        scope=MemoryScope.NPC,
        npc_ids=["troll"],
        category=MemoryCategory.DANGER,
        status=MemoryStatus.TENTATIVE,
        episode=2,
        text="## not a header",
    )
    world = entry(
        "Lamp",
        id="m-world",
        scope=MemoryScope.WORLD,
        turn_start=5,
        turn_end=9,
        text="- lasts 300 turns",
    )
    record = LocationRecord(id=15, name="West of House", visits=3, episodes=[1, 2])
    return cache_of(world, npc, window, gift, attack, locations=[record])


def test_render_writes_the_seed_002_layout_with_npc_and_world_sections() -> None:
    assert render(ordered(layout_cache()), []) == EXPECTED_LAYOUT


def test_parse_reads_back_what_render_wrote() -> None:
    cache = ordered(layout_cache())
    parsed = parse(EXPECTED_LAYOUT)
    assert parsed.problems == [] and parsed.raw == []
    assert list(parsed.cache.memories.values()) == list(cache.memories.values())
    assert parsed.cache.locations == cache.locations
    assert render(parsed.cache, parsed.raw) == EXPECTED_LAYOUT


def test_render_file_returns_the_cache_in_file_order() -> None:
    rendered = render_file(layout_cache(), [])
    assert list(rendered.cache.memories) == ["m-window", "m-gift", "m-attack", "m-npc", "m-world"]
    assert list(ordered(layout_cache()).memories) == list(rendered.cache.memories)
    assert rendered.text == EXPECTED_LAYOUT


def test_a_crlf_file_parses_like_an_lf_file() -> None:
    crlf = parse(EXPECTED_LAYOUT.replace("\n", "\r\n"))
    assert crlf.problems == []
    assert crlf.cache.memories == parse(EXPECTED_LAYOUT).cache.memories


# -- older forms and hand-written blocks -------------------------------------------------------

SEED_001 = """\
# Location Memories

## Location 10: Troll Room
**Visits:** 2 | **Episodes:** Ep1, Ep2

### Memories

**[DANGER - PERMANENT - ACTIVE] Troll guards the passage** *(Ep1, T5, -10)*
The troll swings his axe.

**[NOTE - SUPERSEDED] Troll accepts lunch gift** *(Ep01, T12, +0)*
[Superseded at T13 by "Troll attacks after accepting gift"]
Troll accepts lunch offering graciously.

**[DANGER - PERMANENT] Troll attacks after accepting gift** *(Ep1, T13)*
Never give the troll lunch.
"""


def test_older_header_forms_and_the_superseded_line_parse() -> None:
    parsed = parse(SEED_001, created_at=CREATED)
    assert parsed.problems == []
    guard, gift, attack = parsed.cache.memories.values()
    assert (guard.category, guard.persistence, guard.status) == (
        MemoryCategory.DANGER,
        "PERMANENT",
        MemoryStatus.ACTIVE,
    )
    assert (guard.episode, guard.turn_start, guard.turn_end, guard.score_delta) == (1, 5, 5, -10)
    assert (gift.status, gift.superseded_by, gift.episode, gift.score_delta) == (
        MemoryStatus.SUPERSEDED,
        attack.id,
        1,
        0,
    )
    assert gift.text == "Troll accepts lunch offering graciously."
    assert (attack.persistence, attack.status) == ("PERMANENT", MemoryStatus.ACTIVE)
    assert parsed.cache.locations[10] == LocationRecord(
        id=10, name="Troll Room", visits=2, episodes=[1, 2]
    )
    assert all(m.created_at == CREATED for m in (guard, gift, attack))


@pytest.mark.parametrize("copies", [0, 2])
def test_the_superseded_line_links_only_a_unique_title(copies: int) -> None:
    successor = "**[DANGER] Troll attacks after accepting gift** *(Ep1, T13)*\nText."
    text = SEED_001.split("**[DANGER - PERMANENT] Troll attacks")[0]
    text += "\n\n".join([successor] * copies) + "\n" if copies else ""
    parsed = parse(text)
    gift = next(m for m in parsed.cache.memories.values() if m.title.endswith("lunch gift"))
    assert (gift.status, gift.superseded_by) == (MemoryStatus.SUPERSEDED, None)
    assert len(parsed.cache.memories) == 2 + copies


def test_the_comment_link_wins_over_the_superseded_line() -> None:
    text = SEED_001.replace(
        "*(Ep01, T12, +0)*\n", '*(Ep01, T12, +0)*\n<!-- cairn {"superseded_by": "m-other"} -->\n'
    )
    gift = next(m for m in parse(text).cache.memories.values() if m.title.endswith("gift"))
    assert gift.superseded_by == "m-other"


def test_hand_written_blocks_get_the_same_ids_on_every_load() -> None:
    twice = SEED_001 + "\n**[NOTE] Same** *(Ep1)*\nx\n\n**[NOTE] Same** *(Ep1)*\nx\n"
    first, second = parse(twice), parse(twice)
    assert list(first.cache.memories) == list(second.cache.memories)
    assert len(first.cache.memories) == 5 and first.problems == []
    edited = list(parse(twice.replace("swings his axe.", "sleeps.")).cache.memories)
    assert edited[1:] == list(first.cache.memories)[1:]
    assert edited[0] not in first.cache.memories


# -- seed 002's example, rule lines ------------------------------------------------------------

# Copied from seed 002 ("File Structure", the example file), rule lines and all.
SEED_002_EXAMPLE = """\
# Location Memories

## Location 15: West of House
**Visits:** 3 | **Episodes:** 1, 2, 3

### Memories

**[SUCCESS] Open and enter window** *(Ep1, T23-24, +0)*
Window can be opened with effort and used as alternative entrance to house. Must squeeze through opening.

**[FAILURE] Take or break window** *(Ep1, T25-26)*
Window is part of house structure - cannot be taken, moved, or broken. Violence not effective.

**[DISCOVERY] Mailbox location** *(Ep1, T20, +0)*
Small mailbox located here contains advertising leaflet. Likely tutorial document.

---

## Location 23: Living Room
**Visits:** 5 | **Episodes:** 1, 2, 3, 4

### Memories

**[SUCCESS] Acquire brass lantern** *(Ep1, T45, +5)*
Brass lantern is takeable and provides light source. CRITICAL item for dark areas - always take before exploring.

**[SUCCESS] Light lantern** *(Ep1, T46, +0)*
Lantern can be lit with simple command. Enables safe navigation of dark rooms.

**[FAILURE] Take sword** *(Ep1, T47)*
Ornamental sword is securely mounted and cannot be taken directly. Likely requires puzzle solution.

**[NOTE] Navigation options** *(Ep1, T50, +0)*
West exit leads to Kitchen. Room serves as central hub with multiple exits.

---
"""  # noqa: E501


def test_seed_002_example_loads_with_no_problems(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    path.write_text(SEED_002_EXAMPLE, encoding="utf-8")
    assert check_memory_file(path) == []
    parsed = parse(SEED_002_EXAMPLE, created_at=CREATED)
    assert parsed.problems == [] and parsed.raw == []
    memories = list(parsed.cache.memories.values())
    assert [(m.location_id, m.category.value, m.title) for m in memories] == [
        (15, "SUCCESS", "Open and enter window"),
        (15, "FAILURE", "Take or break window"),
        (15, "DISCOVERY", "Mailbox location"),
        (23, "SUCCESS", "Acquire brass lantern"),
        (23, "SUCCESS", "Light lantern"),
        (23, "FAILURE", "Take sword"),
        (23, "NOTE", "Navigation options"),
    ]
    assert (memories[0].turn_start, memories[0].turn_end, memories[0].score_delta) == (23, 24, 0)
    assert memories[3].score_delta == 5 and memories[5].score_delta is None
    assert memories[6].text.endswith("central hub with multiple exits.")  # no rule in any text
    assert parsed.cache.locations == {
        15: LocationRecord(id=15, name="West of House", visits=3, episodes=[1, 2, 3]),
        23: LocationRecord(id=23, name="Living Room", visits=5, episodes=[1, 2, 3, 4]),
    }


def test_the_seed_002_example_written_back_reads_like_it() -> None:
    parsed = parse(SEED_002_EXAMPLE, created_at=CREATED)
    text = render(parsed.cache, parsed.raw)
    without_comments = "\n".join(line for line in text.split("\n") if "<!-- cairn " not in line)
    assert without_comments.startswith(SEED_002_EXAMPLE)  # then the NPC and World headers
    again = parse(text)
    assert again.problems == []
    assert list(again.cache.memories.values()) == list(parsed.cache.memories.values())
    assert render(again.cache, again.raw) == text


RULE_FORMS = ["---", "***", "___", "- - -", "-----", " ---", "---  ", "* * *", "_ _ _"]


@pytest.mark.parametrize("rule", RULE_FORMS)
def test_rule_lines_anywhere_between_blocks_are_layout(rule: str) -> None:
    text = (
        f"{rule}\n# Location Memories\n{rule}\n## Location 1: Hall\n{rule}\n### Memories\n"
        f'**[NOTE] One** *(Ep1)*\n<!-- cairn {{"id": "m-1"}} -->\nfirst text\n{rule}\n'
        f'**[NOTE] Two**\n<!-- cairn {{"id": "m-2"}} -->\n{rule}\n\n{rule}\n'
        f'# NPC Memories\n\n## NPC troll\n{rule}\n**[NOTE] Three**\n<!-- cairn {{"id": "m-3"}} -->'
        f"\n\n{rule}\n# World Memories\n{rule}\n"
    )
    parsed = parse(text)
    assert parsed.problems == [] and parsed.raw == []
    assert [(m.id, m.text) for m in parsed.cache.memories.values()] == [
        ("m-1", "first text"),
        ("m-2", ""),
        ("m-3", ""),
    ]


def test_a_block_after_a_rule_with_no_blank_line_is_read_at_its_own_line() -> None:
    text = (
        "# World Memories\n\n---\nA paragraph someone typed.\n---\n"
        '**[NOTE] After** *(Ep1)*\n<!-- cairn {"id": "m-after"} -->\ntext\n'
    )
    parsed = parse(text)
    assert parsed.problems == [] and parsed.notes == [4]  # a person's note: kept, no problem
    assert [raw.lines for raw in parsed.raw] == [["A paragraph someone typed."]]
    assert [(m.id, m.text) for m in parsed.cache.memories.values()] == [("m-after", "text")]


def test_a_rule_in_memory_text_stays_text_and_is_written_escaped() -> None:
    ruled = entry("Ruled", id="m-ruled", text="above\n---\n***\n___\n- - -\nbelow")
    later = entry("Later", id="m-later", text="---")
    text = render(cache_of(ruled, later), [])
    assert "\n\\---\n\\***\n\\___\n\\- - -\n" in text and "\n\\---\n\n" in text
    parsed = parse(text)
    assert parsed.problems == []
    assert list(parsed.cache.memories.values()) == [ruled, later]


def test_a_rule_inside_a_kept_section_is_kept_and_its_closing_rule_is_not_doubled() -> None:
    text = (
        "# Location Memories\n\n## Location 1: Hall\n\n### Memories\n\n"
        '**[NOTE] A** *(Ep1)*\n<!-- cairn {"id": "m-a"} -->\n\n---\n\n'
        "## Dungeon notes\nwritten by hand\n\n---\n\nmore notes\n\n---\n\n"
        "## Location 2: Cellar\n\n### Memories\n\n---\n"
    )
    parsed = parse(text)
    assert parsed.problems == [] and parsed.notes == [line_of(text, "## Dungeon notes")]
    [raw] = parsed.raw
    assert raw.lines == ["## Dungeon notes", "written by hand", "", "---", "", "more notes"]
    rewritten = render(parsed.cache, parsed.raw)
    assert "more notes\n\n---\n\n## Location 2: Cellar" in rewritten
    again = parse(rewritten)
    assert again.problems == [] and again.notes == [line_of(rewritten, "## Dungeon notes")]
    assert render(again.cache, again.raw) == rewritten


def test_a_rule_closes_every_location_section_and_nothing_else() -> None:
    text = render(ordered(layout_cache()), [])
    lines = text.split("\n")
    rules = [n for n, line in enumerate(lines) if line == "---"]
    assert [lines[n + 2] for n in rules] == ["# NPC Memories"]
    two = cache_of(entry("A", location_id=1, location_name="Hall"), entry("B", location_id=2))
    lines = render(two, []).split("\n")
    assert [lines[n + 2] for n, line in enumerate(lines) if line == "---"] == [
        "## Location 2: West of House",
        "# NPC Memories",
    ]


# -- the cairn comment: only what the header and section cannot show ---------------------------


def comment_of(text: str, entry_id: str) -> dict[str, object]:
    [line] = [line for line in text.split("\n") if f'{{"id": "{entry_id}"' in line]
    value = json.loads(line.removeprefix("<!-- cairn ").removesuffix(" -->"))
    assert isinstance(value, dict)
    return value


def test_the_comment_of_a_plain_memory_is_its_id_and_time() -> None:
    plain = entry(
        "Plain",
        id="m-plain",
        category=MemoryCategory.DANGER,
        status=MemoryStatus.TENTATIVE,
        persistence="PERMANENT",
        episode=3,
        turn_start=4,
        turn_end=6,
        score_delta=-5,
        text="Header fields stay in the header.",
    )
    npc = entry("Npc", id="m-npc", scope=MemoryScope.NPC, npc_ids=["troll"])
    world = entry("World", id="m-world", scope=MemoryScope.WORLD)
    text = render(cache_of(plain, npc, world), [])
    for entry_id in ("m-plain", "m-npc", "m-world"):
        assert comment_of(text, entry_id) == {"id": entry_id, "created_at": "2024-03-04T05:06:07Z"}
    assert list(parse(text).cache.memories.values()) == [plain, npc, world]


def test_the_comment_holds_fields_that_differ_from_their_defaults_or_the_section() -> None:
    since = datetime(2024, 3, 4, 5, 6, 1, tzinfo=UTC)
    odd = entry(
        "Odd",
        id="m-odd",
        importance=300,
        tags=["note"],
        location_name="Old name of the hall",
        npc_ids=["troll"],
        since_message_index=7,
        since_timestamp=since,
        turn_start=4,
    )
    shared = entry("Shared", id="m-shared", scope=MemoryScope.NPC, npc_ids=["troll", "thief"])
    hall = LocationRecord(id=15, name="West of House")
    text = render(cache_of(odd, shared, locations=[hall]), [])
    assert comment_of(text, "m-odd") == {
        "id": "m-odd",
        "importance": 300,
        "tags": ["note"],
        "location_name": "Old name of the hall",
        "npc_ids": ["troll"],
        "since_message_index": 7,
        "since_timestamp": "2024-03-04T05:06:01Z",
        "created_at": "2024-03-04T05:06:07Z",
        "turn_end": None,  # the header's T4 alone would read as T4-4
    }
    assert comment_of(text, "m-shared")["npc_ids"] == ["troll", "thief"]
    assert list(parse(text).cache.memories.values()) == [odd, shared]


_COMMENT_OPTIONAL = {
    "persistence": st.sampled_from([None, "PERMANENT", "until troll dies"]),
    "importance": st.sampled_from([1, 499, 500, 501, 1000]),
    "tags": st.lists(st.sampled_from(["note", "visit", "move", "x"]), max_size=2),
    "location_id": st.sampled_from([None, 0, 15]),
    "location_name": st.sampled_from([None, "", "Hall"]),
    "npc_ids": st.lists(st.sampled_from(["troll", "thief"]), max_size=2),
    "quest_id": st.sampled_from([None, "q-1"]),
    "encounter_id": st.sampled_from([None, "e-1"]),
    "since_message_index": st.sampled_from([None, 0, 7]),
    "since_timestamp": st.sampled_from([None, CREATED]),
    "superseded_by": st.sampled_from([None, "m-next"]),
    "source": st.sampled_from(list(MemorySource)),
    "via": st.sampled_from([None, "north"]),
    "leads_to": st.sampled_from([None, 0, 7]),
}


@given(st.fixed_dictionaries({}, optional=_COMMENT_OPTIONAL))
def test_the_comment_fields_are_what_a_dump_without_defaults_keeps(
    fields: dict[str, object],
) -> None:
    """The comment's fields are taken without a model dump per block (`comment_fields`): the
    same fields, values and order as `model_dump(exclude_defaults=True)` gives, with every
    field left at its default, set to it, or set to another value."""
    made = MemoryEntry(title="T", scope=MemoryScope.WORLD, created_at=CREATED, **fields)  # type: ignore[arg-type]
    dumped = made.model_dump(mode="json", exclude={"id", *HEADER_FIELDS}, exclude_defaults=True)
    taken = comment_fields(made)
    assert list(taken) == ["id", *dumped]
    # (a time equal to what the clock reads now is still written, in its place: a dump would
    # leave it out, as equal to its default factory's value)
    assert "created_at" in comment_fields(made.model_copy(update={"created_at": utc_now()}))
    assert taken.pop("id") == made.id
    for name, value in taken.items():
        expected = dumped[name]
        if isinstance(value, datetime):
            assert value == datetime.fromisoformat(expected)
        else:
            assert json.loads(json.dumps(value)) == expected


# -- timestamps: to the second; older files load exactly ---------------------------------------

PRECISE = datetime(2026, 11, 23, 9, 31, 46, 6256, tzinfo=UTC)


def test_timestamps_are_written_to_the_second_and_the_cache_holds_them_so() -> None:
    precise = entry(
        "Precise",
        id="m-precise",
        created_at=PRECISE,
        since_timestamp=PRECISE - timedelta(seconds=1),
    )
    east = entry("East", id="m-east", created_at=PRECISE.astimezone(timezone(timedelta(hours=2))))
    rendered = render_file(cache_of(precise, east), [])
    assert comment_of(rendered.text, "m-precise")["created_at"] == "2026-11-23T09:31:46Z"
    assert comment_of(rendered.text, "m-precise")["since_timestamp"] == "2026-11-23T09:31:45Z"
    assert comment_of(rendered.text, "m-east")["created_at"] == "2026-11-23T11:31:46+02:00"
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", rendered.text)
    written = rendered.cache.memories["m-precise"]
    assert written.created_at == PRECISE.replace(microsecond=0)
    assert written.since_timestamp == PRECISE.replace(microsecond=0) - timedelta(seconds=1)
    assert written == as_written(precise) and written.text == precise.text
    assert list(parse(rendered.text).cache.memories.values()) == list(
        rendered.cache.memories.values()
    )  # what a reload gives is what the store already holds


def test_memories_made_within_one_second_keep_their_order() -> None:
    made = [
        entry(f"Memory {n}", id=f"m-{n}", created_at=PRECISE + timedelta(microseconds=n * 1000))
        for n in range(5)
    ]
    rendered = render_file(cache_of(*made), [])
    reloaded = list(parse(rendered.text).cache.memories.values())
    assert [m.id for m in reloaded] == [m.id for m in made]
    assert len({m.created_at for m in reloaded}) == 1
    oldest_first = sorted(reloaded, key=lambda m: (m.importance, m.created_at))
    assert [m.id for m in oldest_first] == [m.id for m in made]  # a stable sort: file order
    assert [m.id for m in sorted(rendered.cache.memories.values(), key=lambda m: m.created_at)] == [
        m.id for m in reloaded
    ]  # the same order before a reload


def test_a_hand_written_block_gets_the_given_time_to_the_second() -> None:
    parsed = parse(SEED_001, created_at=PRECISE)
    assert {m.created_at for m in parsed.cache.memories.values()} == {
        PRECISE.replace(microsecond=0)
    }


# An older file: the full cairn comment, microsecond timestamps, `+00:00`, fields that the header
# shows repeated in the comment, no rule lines.
OLDER_FILE = """\
# Location Memories

## Location 44: Entrance Hall
**Visits:** 7 | **Episodes:** 1, 2, 3

### Memories

**[NOTE] 'open crown' does not work here.** *(Ep1, T2)*
<!-- cairn {"id": "m-3d76a2479aaf", "importance": 300, "tags": ["note"], "created_at": "2026-11-23T09:32:29.997347+00:00"} -->
'open crown' does not work here.

**[NOTE] Visit to Entrance Hall** *(Ep1, T0-15)*
<!-- cairn {"id": "m-3cf7d396fd01", "scope": "location", "category": "NOTE", "status": "ACTIVE", "title": "Visit to Entrance Hall", "importance": 500, "tags": ["session", "location:44"], "episode": 1, "turn_start": 0, "turn_end": 15, "location_id": 44, "location_name": "Entrance Hall", "since_message_index": 29, "since_timestamp": "2026-11-23T09:32:29.993869Z", "created_at": "2026-11-23T09:32:30.031257+00:00"} -->
\\-= Entrance Hall =- A draughty hall. > north 2 messages here.

## Location 50: Library
**Visits:** 1 | **Episodes:** 1

### Memories

**[NOTE] 'open back' does not work here.** *(Ep1, T17)*
<!-- cairn {"id": "m-a1", "importance": 300, "tags": ["note"], "created_at": "2026-11-23T09:32:30.040000+00:00"} -->
'open back' does not work here.

# NPC Memories

# World Memories
"""  # noqa: E501


def test_an_older_file_loads_exactly() -> None:
    parsed = parse(OLDER_FILE)
    assert parsed.problems == [] and parsed.raw == []
    crown, visit, back = parsed.cache.memories.values()
    assert crown.created_at == datetime(2026, 11, 23, 9, 32, 29, 997347, tzinfo=UTC)
    assert (crown.importance, crown.tags, crown.turn_start, crown.turn_end) == (300, ["note"], 2, 2)
    assert visit.created_at == datetime(2026, 11, 23, 9, 32, 30, 31257, tzinfo=UTC)
    assert visit.since_timestamp == datetime(2026, 11, 23, 9, 32, 29, 993869, tzinfo=UTC)
    assert (visit.since_message_index, visit.location_name, visit.location_id) == (
        29,
        "Entrance Hall",
        44,
    )
    assert visit.text == "-= Entrance Hall =- A draughty hall. > north 2 messages here."
    assert back.created_at == datetime(2026, 11, 23, 9, 32, 30, 40000, tzinfo=UTC)


def test_an_older_file_is_written_back_in_the_new_form() -> None:
    parsed = parse(OLDER_FILE)
    rendered = render_file(parsed.cache, parsed.raw)
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", rendered.text)
    assert comment_of(rendered.text, "m-3cf7d396fd01") == {
        "id": "m-3cf7d396fd01",
        "tags": ["session", "location:44"],
        "since_message_index": 29,
        "since_timestamp": "2026-11-23T09:32:29Z",
        "created_at": "2026-11-23T09:32:30Z",
    }
    assert "\n---\n\n## Location 50: Library" in rendered.text
    assert list(rendered.cache.memories.values()) == [
        as_written(m) for m in parsed.cache.memories.values()
    ]
    assert list(parse(rendered.text).cache.memories.values()) == list(
        rendered.cache.memories.values()
    )


# -- problems, line numbers, verbatim blocks -----------------------------------------------------

BAD_BLOCKS = {
    "bogus category": ("**[BOGUS] Strange** *(Ep1)*\ntext", "category: 'BOGUS'"),
    "broken JSON": ('**[NOTE] A** *(Ep1)*\n<!-- cairn {"id": "m-x", -->', "not valid JSON"),
    "unclosed comment": ('**[NOTE] A** *(Ep1)*\n<!-- cairn {"id": "m-x"}', "does not end"),
    "comment not an object": ("**[NOTE] A** *(Ep1)*\n<!-- cairn [1, 2] -->", "not a JSON object"),
    "bad metadata": ("**[NOTE] A** *(Ep1, T5x)*\ntext", "metadata item 'T5x'"),
    "bad status": ("**[NOTE - ASLEEP - DORMANT] A**\ntext", "status: 'DORMANT'"),
    "four-part tag": ("**[NOTE - A - B - C] A**\ntext", "more than three parts"),
    "invalid field": (
        '**[NOTE] A**\n<!-- cairn {"id": "m-i", "importance": 5000} -->',
        "invalid memory (importance",
    ),
    "turns backwards": (
        '**[NOTE] A**\n<!-- cairn {"turn_start": 5, "turn_end": 2} -->',
        "turn_end",
    ),
    "not a header": ('<!-- cairn {"id": "m-x"} -->\ntext', "not a memory header"),
    "empty title": ("**[NOTE] ** *(Ep1)*", "not a memory header"),
}


@pytest.mark.parametrize("block, message", BAD_BLOCKS.values(), ids=BAD_BLOCKS.keys())
def test_a_bad_block_is_reported_at_its_line_and_kept_verbatim(block: str, message: str) -> None:
    good = '**[NOTE] Good {0}** *(Ep1)*\n<!-- cairn {{"id": "m-good{0}"}} -->\nfine'
    text = "# Location Memories\n\n## Location 1: Hall\n\n"
    text += f"{good.format(1)}\n\n{block}\n\n{good.format(2)}\n"
    parsed = parse(text, "M.md")
    [problem] = parsed.problems
    assert problem.line == line_of(text, block.split("\n")[0])
    assert message in problem.message and "kept verbatim" in problem.message
    assert problem.path == "M.md"
    assert list(parsed.cache.memories) == ["m-good1", "m-good2"]
    [raw] = parsed.raw
    assert raw.lines == block.split("\n")
    rewritten = render(parsed.cache, parsed.raw)
    assert block in rewritten
    assert [p.message for p in parse(rewritten).problems] == [problem.message]


def test_structure_problems_are_reported_with_their_lines(tmp_path: Path) -> None:
    text = (
        "**[NOTE] Before any section**\n"  # 1
        "\n"
        "# Location Memories\n"  # 3
        "\n"
        "## Location 1: Hall\n"  # 5
        "**Visits:** 2 | **Episodes:** 1, two\n"  # 6
        "\n"
        "## Location 1: Hall again\n"  # 8
        "\n"
        "# Odd Memories\n"  # 10
        "kept\n"
        "\n"
        "# NPC Memories\n"  # 13
        "\n"
        "## Location 2: In the NPC part\n"  # 15
        '**[NOTE] Swallowed** *(Ep1)*\n<!-- cairn {"id": "m-s"} -->\n'
        "\n"
        "# World Memories\n"
        '**[NOTE] Dup** *(Ep1)*\n<!-- cairn {"id": "m-d"} -->\n'
        "\n"
        '**[NOTE] Dup** *(Ep1)*\n<!-- cairn {"id": "m-d"} -->\n'  # 23
    )
    path = tmp_path / "Memories.md"
    path.write_text(text, encoding="utf-8")
    problems = parse(text, str(path)).problems
    assert parse(text).notes == [10]  # `# Odd Memories` and prose: a person's note
    assert [(p.line, p.message.split(";")[0]) for p in problems] == [
        (1, "memory outside a location, NPC or world section"),
        (6, "episodes: 'two' is not an episode number"),
        (8, "location 1 appears twice"),
        (15, "section header '## Location 2: In the NPC part' not understood here"),
        (23, "duplicate memory id 'm-d'"),
    ]
    assert check_memory_file(path) == problems


def test_rendered_problems_match_a_reparse_of_the_rendered_file() -> None:
    text = (
        "# Location Memories\n\n## Location 3: Cellar\n\n**[BOGUS] One**\nx\n\n"
        "# NPC Memories\n\n## NPC troll\n\n**[NOTE] T** *(Ep1, Tx)*\n\n"
        "# World Memories\n\n## Notes\nby hand\n\nmore\n"
    )
    parsed = parse(text, "M.md")
    extra = entry("New", location_id=3, location_name="Cellar")
    parsed.cache.memories[extra.id] = extra
    rendered = render_file(parsed.cache, parsed.raw)
    assert len(rendered.problems("M.md")) == 2  # (`## Notes` and prose: a note)
    assert rendered.problems("M.md") == parse(rendered.text, "M.md").problems
    assert "## Notes\nby hand\n\nmore\n" in rendered.text


def test_a_bad_section_at_the_end_of_the_file_is_kept() -> None:
    text = "# World Memories\n\n## Notes\nwritten by hand\n"
    parsed = parse(text)
    assert parsed.problems == [] and parsed.notes == [3]  # a person's note
    assert "## Notes\nwritten by hand" in render(parsed.cache, parsed.raw)


def test_check_memory_file_reports_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    path.write_bytes(b"# World Memories\n\n**[NOTE] ok**\n\n\xff\xfe broken\n")
    problems = check_memory_file(path)
    assert [(p.line, p.message) for p in problems if "UTF-8" in p.message] == [
        (5, "bytes that are not UTF-8")
    ]
    assert all(p.path == str(path) for p in problems)


def test_undecodable_bytes_in_a_kept_block_are_written_back_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    path.write_bytes(b"# World Memories\n\nodd \xff\xfe bytes\n")
    parsed = parse(read_text(path))
    data = render(parsed.cache, parsed.raw).encode("utf-8", errors="surrogateescape")
    assert b"odd \xff\xfe bytes" in data


# -- the render cache ----------------------------------------------------------------------------


def test_the_render_cache_reuses_blocks_only_for_the_same_entry_and_context() -> None:
    blocks = EntryRenderCache()
    first = entry("Cached", text="one")
    text = blocks.block(first, "West of House", None)
    assert blocks.block(first, "West of House", None) is text
    changed = first.model_copy(update={"text": "two"})
    assert blocks.block(changed, "West of House", None).endswith("\ntwo")
    assert "location_name" in blocks.block(changed, "Renamed", None)
    assert "[Invalidated]" in blocks.block(changed, "Renamed", "[Invalidated]")
    again = blocks.block(changed, "Renamed", "[Invalidated]")
    assert blocks.block(changed, "Renamed", "[Invalidated]") is again
    blocks.forget_missing(set())
    assert blocks.block(changed, "Renamed", "[Invalidated]") is not again


def test_the_section_cache_reuses_a_section_only_for_the_same_entry_objects() -> None:
    blocks = EntryRenderCache()
    key, name = ("location", "15"), "West of House"
    first, second = entry("First"), entry("Second")
    text, written, lengths = blocks.section(key, [first, second], name, [None, None])
    assert written == [first, second] and written[0] is first  # nothing to change: the same
    assert lengths == [len(blocks.block(first, name, None)), len(blocks.block(second, name, None))]
    assert text == blocks.block(first, name, None) + "\n\n" + blocks.block(second, name, None)
    assert blocks.section(key, [first, second], name, [None, None])[0] is text
    # Equal but not the same object: the offset of an equal datetime is written as it is.
    shifted = first.model_copy(
        update={"created_at": CREATED.astimezone(timezone(timedelta(hours=2)))}
    )
    assert shifted == first
    again, _, _ = blocks.section(key, [shifted, second], name, [None, None])
    assert "2024-03-04T07:06:07+02:00" in again
    assert blocks.section(key, [shifted, second], name, [None, "[Invalidated]"])[0] != again
    assert blocks.section(key, [shifted, second], "Renamed", [None, None])[0] != again


def test_a_section_that_grew_at_its_end_renders_only_its_new_blocks() -> None:
    blocks = EntryRenderCache()
    key, name = ("location", "15"), "West of House"
    first, second, third = entry("First"), entry("Second"), entry("Third")
    text, written, _ = blocks.section(key, [first, second], name, [None, None])
    rendered: list[str] = []
    plain = blocks.block

    def counted(entry: MemoryEntry, section_name: str | None, display: str | None) -> str:
        rendered.append(entry.title)
        return plain(entry, section_name, display)

    blocks.block = counted  # type: ignore[method-assign]
    grown, kept, lengths = blocks.section(key, [*written, third], name, [None, None, None])
    assert rendered == ["Third"], "the cached blocks are reused as one text"
    assert grown == text + "\n\n" + plain(third, name, None)
    assert kept[:2] == written and kept[0] is written[0]
    assert lengths == [len(plain(e, name, None)) for e in (first, second, third)]
    # a display line that changed above the new block: the section is rendered again
    rendered.clear()
    again, _, _ = blocks.section(key, [*kept, entry("Fourth")], name, [None, "[X]", None, None])
    assert rendered == ["First", "Second", "Third", "Fourth"] and "[X]" in again


# -- the demo's file ---------------------------------------------------------------------------

# What the header shows; never in a comment of a memory cairn wrote today (nor the location id
# of a location memory: its section shows it).
SHOWN_ELSEWHERE = {"scope", "category", "status", "title", "text", "episode", "turn_start"}
SHOWN_ELSEWHERE |= {"score_delta"}


def test_the_demo_file_has_no_microseconds_and_minimal_comments(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from cairn.cli import main

    args = ["play", "--workdir", str(tmp_path), "--episodes", "3", "--fresh"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    path = tmp_path / "Memories.md"
    text = path.read_text(encoding="utf-8")
    assert check_memory_file(path) == []
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", text)  # no fraction of a second anywhere
    parsed = parse(text)
    memories, locations = parsed.cache.memories, parsed.cache.locations
    comments = [
        json.loads(line.removeprefix("<!-- cairn ").removesuffix(" -->"))
        for line in text.split("\n")
        if line.startswith("<!-- cairn ")
    ]
    assert len(comments) == len(memories) > 10
    fields = MemoryEntry.model_fields
    for comment in comments:
        memory = memories[comment["id"]]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", comment["created_at"])
        assert not SHOWN_ELSEWHERE & comment.keys(), comment
        if memory.scope is MemoryScope.LOCATION:
            assert "location_id" not in comment, comment
        for name, value in comment.items():
            if name in ("id", "created_at"):
                continue
            if name == "turn_end":  # only `null` after a header's `Tn`, or with no `Tn` at all
                assert value is None or memory.turn_start is None, comment
                continue
            default = fields[name].get_default(call_default_factory=True)
            assert getattr(memory, name) != default, (name, comment)
            if name == "location_name" and memory.scope is MemoryScope.LOCATION:
                assert value != locations[memory.location_id or 0].name, comment
    rules = [line for line in text.split("\n") if line == "---"]
    assert len(rules) == len(locations) > 1  # one closing each location section


def test_memories_read_without_cairns_time_are_named_until_a_newer_version_has_it() -> None:
    """`ParsedFile.unpinned`: the memories whose last version read had no `created_at` in
    cairn's comment (a person's block), which the store pins with its next write."""
    from cairn.adapters.storage.markdown_layout import RECENT_TITLE, UNIT_END, UNIT_START

    hand = "# World Memories\n\n**[NOTE] By hand**\nUnder the rug.\n"
    parsed = parse(hand)
    (entry_id,) = parsed.cache.memories
    assert parsed.unpinned == [entry_id]
    pinned = (
        f'\n{RECENT_TITLE}\n\n{UNIT_START}\n\n## World\n\n**[NOTE] By hand**\n<!-- cairn {{"id":'
        f' "{entry_id}", "created_at": "2026-01-02T03:04:05Z"}} -->\nUnder the rug.\n\n'
        f"{UNIT_END}\n"
    )
    assert parse(hand + pinned).unpinned == []
    assert parse(hand + pinned.replace(UNIT_END, "")).unpinned == [entry_id]  # a cut unit
