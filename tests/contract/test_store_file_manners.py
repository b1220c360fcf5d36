"""How the stores treat the files a person owns: a symlinked Memories.md stays a link, the
file's mode and its CRLF line ends are kept, and a missing workdir is created (SQLite too)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.adapters.storage.sqlite_store import SqliteMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope


def note(title: str) -> MemoryEntry:
    return MemoryEntry(scope=MemoryScope.WORLD, title=title, text="Something learned.")


def add(store: MarkdownMemoryStore | SqliteMemoryStore, title: str) -> None:
    with store.transaction() as tx:
        tx.add(note(title))


def test_a_symlinked_memory_file_is_written_through_the_link(tmp_path: Path) -> None:
    target = tmp_path / "shared" / "Memories.md"
    target.parent.mkdir()
    add(MarkdownMemoryStore(target), "first")
    link = tmp_path / "work" / "Memories.md"
    link.parent.mkdir()
    link.symlink_to(target)
    store = MarkdownMemoryStore(link)
    add(store, "second")
    store.close()
    assert link.is_symlink()
    assert "second" in target.read_text()


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_the_file_mode_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    add(MarkdownMemoryStore(path), "first")
    path.chmod(0o640)
    store = MarkdownMemoryStore(path)
    add(store, "second")
    store.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_crlf_line_ends_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    add(MarkdownMemoryStore(path), "first")
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    store = MarkdownMemoryStore(path)
    assert [e.title for e in store.entries()] == ["first"]
    add(store, "second")
    store.close()
    data = path.read_bytes()
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert [e.title for e in MarkdownMemoryStore(path).entries()] == ["first", "second"]


def test_the_sqlite_store_creates_a_missing_workdir(tmp_path: Path) -> None:
    store = SqliteMemoryStore(tmp_path / "new" / "deeper" / "memories.sqlite3")
    add(store, "first")
    store.close()
    assert (tmp_path / "new" / "deeper" / "memories.sqlite3").is_file()


def test_a_byte_order_mark_hides_no_section_and_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    with store.transaction() as tx:
        tx.add(MemoryEntry(scope=MemoryScope.LOCATION, location_id=1, title="In the hall"))
    store.close()
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    again = MarkdownMemoryStore(path)
    assert [e.title for e in again.entries()] == ["In the hall"] and not again.problems()
    add(again, "second")
    again.close()
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    assert len(MarkdownMemoryStore(path).entries()) == 2


def test_a_hand_written_paragraph_stays_where_it_was_written(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    with store.transaction() as tx:
        for title in ("first", "second", "third"):
            tx.add(MemoryEntry(scope=MemoryScope.LOCATION, location_id=1, title=title))
    store.close()
    text = path.read_text()
    second = text.index("**[NOTE] second**")
    first = text.index("**[NOTE] first**")
    text = (
        text[:first]
        + "A paragraph before every memory.\n\n"
        + text[first:second]
        + "My own paragraph, after the first memory.\n\n"
        + text[second:]
    )
    path.write_text(text)
    again = MarkdownMemoryStore(path)
    with again.transaction() as tx:  # a write: the file is rendered again
        tx.add(MemoryEntry(scope=MemoryScope.LOCATION, location_id=1, title="fourth"))
    again.close()
    order = [
        "A paragraph before every memory.",
        "**[NOTE] first**",
        "My own paragraph, after the first memory.",
        "**[NOTE] second**",
        "**[NOTE] third**",
        "**[NOTE] fourth**",
    ]
    written = path.read_text()
    assert [written.index(piece) for piece in order] == sorted(
        written.index(piece) for piece in order
    )
    once = path.read_text()
    add(MarkdownMemoryStore(path), "elsewhere")
    assert once.split("# NPC Memories")[0] == path.read_text().split("# NPC Memories")[0]
