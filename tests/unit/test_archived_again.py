"""A memory archived twice (issue 37, item 4): cairn forgets a memory and archives it; a
person's stale editor save brings it back with their edit (their version wins); cairn forgets
it again and archives it again. The archive then holds two blocks with one id: the later (the
person's edit) is the memory's version for every reader, and `check` says there are two."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.cli import main
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemoryStatus


def entry(i: int) -> MemoryEntry:
    return MemoryEntry(
        id=f"m-{i}",
        title=f"Memory {i}",
        text=f"text {i}",
        scope=MemoryScope.LOCATION,
        location_id=1,
        category=MemoryCategory.NOTE,
    )


def archived_twice(tmp_path: Path) -> Path:
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    with store.transaction() as tx:
        for i in range(5):
            tx.add(entry(i))
    store.checkpoint()
    stale = path.read_text(encoding="utf-8")  # a person opens the file in an editor
    with store.transaction() as tx:
        tx.supersede("m-2", None)  # cairn forgets m-2 ...
    store.checkpoint()  # ... and archives it
    path.write_text(stale.replace("text 2", "text 2, edited by hand"), encoding="utf-8")
    with store.transaction() as tx:
        tx.add(entry(9))  # the stale save is merged: the person's edit brings m-2 back
    assert store.get("m-2").text == "text 2, edited by hand"  # type: ignore[union-attr]
    with store.transaction() as tx:
        tx.supersede("m-2", None)  # forgotten again ...
    store.checkpoint()  # ... and archived again
    store.close()
    return path


def test_the_later_block_of_a_memory_archived_twice_is_its_version(tmp_path: Path) -> None:
    path = archived_twice(tmp_path)
    store = MarkdownMemoryStore(path)
    again = [e for e in store.archived() if e.id == "m-2"]
    newest = [e for e in store.archived(newest=3) if e.id == "m-2"]
    store.close()
    edited = ("text 2, edited by hand", MemoryStatus.SUPERSEDED)
    assert [(e.text, e.status) for e in again] == [edited]
    assert [e.text for e in newest] == ["text 2, edited by hand"]
    shown = CliRunner().invoke(main, ["memories", "show", "--all", "--workdir", str(tmp_path)])
    assert "text 2, edited by hand" in shown.output and "text 2\n" not in shown.output


def test_check_says_an_archive_holds_a_memory_twice(tmp_path: Path) -> None:
    archive = archived_twice(tmp_path).with_name("Memories.archive.md")
    result = CliRunner().invoke(main, ["memories", "check", str(archive)])
    assert result.exit_code == 0, result.output
    assert "2 memory blocks for 1 memories" in result.output
