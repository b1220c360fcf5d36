"""The Memories.md format: escaping, the exact layout, older header forms, problems with line
numbers, verbatim blocks, ids of hand-written blocks, and render/parse agreement."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.adapters.storage.markdown_format import (
    EntryRenderCache,
    check_memory_file,
    escape_inline,
    escape_text,
    ordered,
    parse,
    read_text,
    render,
    render_file,
    unescape_inline,
    unescape_text_line,
)
from app.adapters.storage.ops import MemoryCache
from app.models.memory import (
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
)

CREATED = datetime(2024, 3, 4, 5, 6, 7, tzinfo=UTC)
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
<!-- cairn {"id": "m-window", "created_at": "2024-03-04T05:06:07+00:00"} -->
Window can be opened with effort.

**[NOTE - SUPERSEDED] Troll accepts lunch gift** *(Ep1, T12, +0)*
<!-- cairn {"id": "m-gift", "created_at": "2024-03-04T05:06:07+00:00", "superseded_by": "m-attack", "turn_end": null} -->
[Superseded at T13 by "Troll attacks after accepting gift"]
Troll accepts lunch offering graciously.

**[DANGER - PERMANENT - ACTIVE] Troll attacks after accepting gift** *(Ep1, T13, -10)*
<!-- cairn {"id": "m-attack", "importance": 900, "created_at": "2024-03-04T05:06:07+00:00", "turn_end": null} -->

# NPC Memories

## NPC troll

**[DANGER - TENTATIVE] Troll hates lunch** *(Ep2)*
<!-- cairn {"id": "m-npc", "created_at": "2024-03-04T05:06:07+00:00"} -->
\\## not a header

# World Memories

**[NOTE] Lamp** *(T5-9)*
<!-- cairn {"id": "m-world", "created_at": "2024-03-04T05:06:07+00:00"} -->
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
    "not a header": ("Just a paragraph someone typed.", "not a memory header"),
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
    assert [(p.line, p.message.split(";")[0]) for p in problems] == [
        (1, "memory outside a location, NPC or world section"),
        (6, "episodes: 'two' is not an episode number"),
        (8, "location 1 appears twice"),
        (10, "unknown top-level header '# Odd Memories'"),
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
    assert len(rendered.problems("M.md")) == 3
    assert rendered.problems("M.md") == parse(rendered.text, "M.md").problems
    assert "## Notes\nby hand\n\nmore\n" in rendered.text


def test_a_bad_section_at_the_end_of_the_file_is_kept() -> None:
    text = "# World Memories\n\n## Notes\nwritten by hand\n"
    parsed = parse(text)
    assert [p.line for p in parsed.problems] == [3]
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
    text = blocks.section(key, [first, second], name, [None, None])
    assert text == blocks.block(first, name, None) + "\n\n" + blocks.block(second, name, None)
    assert blocks.section(key, [first, second], name, [None, None]) is text
    # Equal but not the same object: the offset of an equal datetime is written as it is.
    shifted = first.model_copy(
        update={"created_at": CREATED.astimezone(timezone(timedelta(hours=2)))}
    )
    assert shifted == first
    again = blocks.section(key, [shifted, second], name, [None, None])
    assert "2024-03-04T07:06:07+02:00" in again
    assert blocks.section(key, [shifted, second], name, [None, "[Invalidated]"]) != again
    assert blocks.section(key, [shifted, second], "Renamed", [None, None]) != again
