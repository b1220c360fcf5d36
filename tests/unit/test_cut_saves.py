"""A person's save cut short (issue 37, item 1): an editor that stops partway leaves the start
of the file, ending mid-line or at a line end. Such a save is damaged, not a deletion: every
memory cairn acknowledged survives it, the memory whose block the cut fell in keeps its whole
text, and a cairn block cut in two is not left behind as a problem. A whole save that deletes
whole blocks is still taken as a deletion."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cairn.adapters.storage import live_file
from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope


@pytest.fixture(autouse=True)
def quick_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """A save in place that ends mid-line is taken after the settle timeout (2 s): shorter here."""
    monkeypatch.setattr(live_file, "SETTLE_TIMEOUT", 0.05)


def entry(i: int) -> MemoryEntry:
    return MemoryEntry(
        id=f"m-{i:04d}",
        title=f"Memory {i}",
        text=f"first line of memory {i}\nsecond line of memory {i}",
        scope=MemoryScope.LOCATION,
        location_id=1 + i % 5,
        category=MemoryCategory.NOTE,
        created_at=datetime(2026, 11, 28, tzinfo=UTC),
    )


def write(store: MarkdownMemoryStore, numbers: range) -> list[str]:
    for i in numbers:
        with store.transaction() as tx:
            tx.add(entry(i))
    return [entry(i).id for i in numbers]


def cut_in_place(path: Path, at: int) -> None:
    """An editor's save that stopped after `at` bytes, written into the file in place."""
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.write(data[:at])
        handle.truncate(at)


def held(path: Path) -> dict[str, MemoryEntry]:
    return parse(path.read_text(encoding="utf-8")).cache.memories


def played_then_cut(tmp_path: Path, where: str) -> tuple[Path, list[str]]:
    """Memories written (some folded, some appended), the file cut as `where` says, then more
    memories written: the store sees the cut save at its next write."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    acked = write(store, range(30))
    store.checkpoint()  # folded: the sections
    acked += write(store, range(30, 40))  # appended: the recent part
    data = path.read_bytes()
    recent = data.index(b"# Recent Memories")
    # (memory 24 is in the last room's section: the cut loses less than half of the file)
    if where == "mid-line in the sections":
        at = data.index(b"second line of memory 24") + 10
    elif where == "at a line end in the sections":
        at = data.index(b"\n", data.index(b"first line of memory 24")) + 1
    else:  # at a line end inside a unit cairn appended
        at = data.index(b"\n", data.index(b"first line of memory 35", recent)) + 1
    cut_in_place(path, at)
    acked += write(store, range(40, 45))
    store.close()
    return path, acked


def test_the_start_of_the_file_cut_at_a_line_end_is_a_save_cut_short(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    write(store, range(20))
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index("**[NOTE] Memory 19**")], encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        write(store, range(20, 21))
    store.close()
    assert len(held(path)) == 21
    assert "was cut short" in caplog.text and "lacked 1 memories; kept them" in caplog.text


@pytest.mark.parametrize(
    "where",
    [
        "mid-line in the sections",
        "at a line end in the sections",
        "at a line end inside an appended unit",
    ],
)
def test_a_save_cut_short_loses_no_acknowledged_memory(tmp_path: Path, where: str) -> None:
    path, acked = played_then_cut(tmp_path, where)
    memories = held(path)
    assert [i for i in acked if i not in memories] == []
    assert memories["m-0024"].text == entry(24).text  # the block the cut fell in: whole
    assert parse(path.read_text(encoding="utf-8")).problems == []


def test_a_cairn_block_cut_in_its_comment_leaves_no_fragment(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    acked = write(store, range(20))
    store.checkpoint()
    data = path.read_bytes()
    cut_in_place(path, data.index(b'"id": "m-0007"') + 5)  # inside the cairn comment
    acked += write(store, range(20, 22))
    store.close()
    parsed = parse(path.read_text(encoding="utf-8"))
    assert [i for i in acked if i not in parsed.cache.memories] == []
    assert parsed.problems == []


def test_a_whole_save_that_deletes_whole_blocks_is_still_a_deletion(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    write(store, range(12))
    store.checkpoint()
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    start = lines.index("**[NOTE] Memory 6**")
    del lines[start : start + 5]  # header, comment, two text lines, the blank line
    path.write_text("\n".join(lines), encoding="utf-8")  # (a whole save, ending with a line end)
    write(store, range(12, 13))
    store.close()
    memories = held(path)
    assert "m-0006" not in memories
    assert len(memories) == 12


def test_a_save_cut_mid_line_is_known_as_such_by_the_parser() -> None:
    assert parse("# World Memories\n\n**[NOTE] Memo").ends_mid_line
    assert not parse("# World Memories\n").ends_mid_line
    assert not parse("").ends_mid_line
