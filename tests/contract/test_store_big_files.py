"""Files that are big or hostile, at a small scale: a comment nested 2,000 levels deep,
thousands of empty location sections, a thousand units cut short. Each is read with its
problems named on their lines, written back without growing, and with work linear in its
size (counted in operations, never timed; bench/check_bench.py times the big ones)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from cairn.adapters.storage.markdown_check import check_file
from cairn.adapters.storage.markdown_layout import UNIT_START
from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.markdown_render import render
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope

DEEP = "[" * 2000 + "]" * 2000


def room_memory(title: str, room: int = 3) -> MemoryEntry:
    return MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=room,
        location_name="Cellar",
        title=title,
        text=f"What {title} says.",
    )


def deep_block(title: str) -> str:
    return f'**[NOTE] {title}**\n<!-- cairn {{"x": {DEEP}}} -->\nA comment 2,000 levels deep.'


def line_of(text: str, line: str) -> int:
    return text.split("\n").index(line) + 1


def test_a_comment_nested_2000_levels_deep_is_one_problem_and_is_kept_verbatim(
    tmp_path: Path,
) -> None:
    """The attack: `<!-- cairn {"x": [[[[...]]]]} -->` under a memory's header. Reading it
    was a RecursionError (every load, so no `play` could start); now it is one problem on its
    line, every other memory is read, and writes keep the block as it is."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    with store.transaction() as tx:
        tx.record_visit(3, "Cellar", 1)
        tx.add(room_memory("Before"))
        tx.add(room_memory("After"))
    store.close()
    text = path.read_text()
    block = deep_block("Deep")
    head = "**[NOTE] Deep**"
    path.write_text(text.replace("# World Memories", f"# World Memories\n\n{block}"))

    store = MarkdownMemoryStore(path)  # (the load that raised RecursionError)
    [problem] = store.problems()
    assert problem.line == line_of(path.read_text(), head)
    assert "nests more than 32 levels" in problem.message
    assert [e.title for e in store.entries()] == ["Before", "After"]
    with store.transaction() as tx:  # a fold (the first write of a session that parsed)
        tx.add(room_memory("Later"))
    store.checkpoint()
    store.close()
    written = path.read_text()
    assert block in written
    [again] = check_file(path).problems
    assert again.line == line_of(written, head) and again.message == problem.message
    reopened = MarkdownMemoryStore(path)  # from the snapshot the fold wrote
    assert [e.title for e in reopened.entries()] == ["Before", "After", "Later"]
    assert [p.message for p in reopened.problems()] == [problem.message]
    reopened.close()


def test_deep_nesting_anywhere_in_a_comment_and_brackets_in_its_strings(tmp_path: Path) -> None:
    """Nesting in any field (a list of tags, an object) is caught the same way; brackets inside
    a comment's strings are text, not nesting."""
    path = tmp_path / "Memories.md"
    brackets = "[" * 500
    text = (
        "# World Memories\n\n"
        f'**[NOTE] Tags**\n<!-- cairn {{"tags": [{"{" * 40 + "}" * 40}]}} -->\ndeep tags\n\n'
        f'**[NOTE] Odd title**\n<!-- cairn {{"id": "m-odd", "location_name": "{brackets}"}} -->'
        "\nfine\n"
    )
    path.write_text(text)
    found = check_file(path)
    assert [(p.line, "nests more than 32" in p.message) for p in found.problems] == [(3, True)]
    assert found.memories == 1


def bare_sections(count: int) -> str:
    """A file of `count` location sections with nothing under them (`## Location N:`), as a
    person or a tool may write: what grew 22 MB to 74 MB in one `play`."""
    sections = "".join(f"## Location {n}:\n\n" for n in range(1, count + 1))
    return f"# Location Memories\n\n{sections}# NPC Memories\n\n# World Memories\n"


def test_empty_sections_are_written_back_as_they_were_not_grown(tmp_path: Path) -> None:
    """Each empty section read from the file was written back with a visits line, a
    `### Memories` line and a rule (3.4 times the file's size). Now a fold writes it back as
    it was, and a unit of work adds only what it adds."""
    path = tmp_path / "Memories.md"
    text = bare_sections(2000)
    path.write_text(text)
    store = MarkdownMemoryStore(path)
    store.fold()  # (nothing to fold: the file stays as it is)
    with store.transaction() as tx:  # the first write of a session that parsed: a fold
        tx.record_visit(1500, "Hall", 1)
        tx.add(room_memory("In the hall", room=1500))
    store.close()
    written = path.read_text()
    start = written.index("## Location 1500: Hall")
    section = written[start : written.index("\n---\n", start) + 4]  # (its rule too)
    assert written == text.replace("## Location 1500:", section)
    assert section.startswith("## Location 1500: Hall\n**Visits:** 1 | **Episodes:** 1\n")
    assert check_file(path).problems == []
    reopened = MarkdownMemoryStore(path)
    records = reopened.locations()
    assert len(records) == 2000 and records[7].name == "" and records[1500].visits == 1
    reopened.close()


def test_a_named_empty_section_keeps_its_name_and_a_visited_one_its_visits() -> None:
    visited = "## Location 3: Hall\n**Visits:** 2 | **Episodes:** 1\n\n### Memories\n\n---"
    text = bare_sections(4).replace("## Location 2:", "## Location 2: Kitchen \\*")
    text = text.replace("## Location 3:", visited)
    parsed = parse(text)
    records = parsed.cache.locations
    assert (records[2].name, records[2].visits) == ("Kitchen *", 0)
    assert (records[3].name, records[3].visits, records[3].episodes) == ("Hall", 2, [1])
    assert render(parsed.cache, parsed.raw) == text


def operations(work: Callable[[], object]) -> int:
    """The Python and C functions `work` calls (a measure of its work that no machine's speed
    changes)."""
    calls = 0

    def count(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        work()
    finally:
        sys.setprofile(None)
    return calls


def hostile(n: int) -> str:
    """A file with `n` of each shape the parser handles specially: memories, a person's
    notes, blocks that do not parse, empty sections, then an appended part of `n` units of
    work cut short, each leaving a cut block (the shape `list.remove` made quadratic: each
    cut block was looked for among every problem before it, comparing with `__eq__`)."""
    parts = ["# Location Memories\n"]
    for i in range(n):
        parts.append(f"## Location {i}:\n")
        parts.append(f"**[NOTE] Room {i}** *(Ep1, T{i})*\nWhat room {i} holds.\n")
        parts.append(f"A person's note about room {i}.\n")
        parts.append(f"**[BOGUS] Unreadable {i}**\ntext\n")
    parts.append("# World Memories\n")
    parts.append("# Recent Memories\n\n## World\n")
    for i in range(n):
        parts.append(f'{UNIT_START}\n\n**[NOTE] Cut {i}**\n<!-- cairn {{"id": "m-cut{i}", \n')
    return "\n".join(parts)


def test_reading_a_file_takes_work_linear_in_its_size() -> None:
    """Four times the file, four times the work (a quadratic reader did 16 times: at 1,200
    cut units, 1.4 million comparisons of problems; 5,000 took 38 s)."""
    small, large = hostile(300), hostile(1200)
    parse(small), parse(large)  # (the caches of header fields and patterns filled alike)
    ratio = operations(lambda: parse(large)) / operations(lambda: parse(small))
    assert ratio < 4.4, ratio
    parsed = parse(large)
    assert len(parsed.cache.memories) == 1200 and len(parsed.notes) == 1200
    assert len(parsed.problems) == 1200 and parsed.cut_short == 1200
