"""The archive's journal: the archive read back without a parse, and only when the journal
proves the bytes it covers (edits, missing lines, hostile journals fall back to a parse)."""

from __future__ import annotations

import logging
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytest_mock import MockerFixture

from cairn.adapters.storage import markdown_archive, markdown_parse
from cairn.adapters.storage.archive_journal import journal_path, read_journal
from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope
from tests.contract.conftest import StoreFactory
from tests.contract.test_store_contract import PROPERTY_SETTINGS, any_text, any_title, odd_name
from tests.contract.test_store_speed_paths import memory


def episodes(path: Path, count: int = 3) -> MarkdownMemoryStore:
    """A store after `count` episodes, each superseding some memories (moved to the archive at
    its end): location, NPC and world memories, one room renamed on the way."""
    store = MarkdownMemoryStore(path)
    for episode in range(count):
        base = episode * 20
        with store.transaction() as tx:
            for n in range(base, base + 20):
                tx.add(memory(n))
                tx.record_visit(n % 3 + 1, f"Room {n % 3 + 1}" if episode else "Hall", episode)
        with store.transaction() as tx:
            for n in range(base, base + 8):
                tx.supersede(f"s-{n:04d}", f"s-{n + 8:04d}" if n % 2 else None)
        store.checkpoint()
    return store


def parsed_archive(path: Path) -> list[MemoryEntry]:
    """The archive parsed whole; a memory without cairn's comment dated by the file's
    modification time, as the store dates it."""
    archive = path.with_name("Memories.archive.md")
    modified = datetime.fromtimestamp(archive.stat().st_mtime_ns / 1e9, tz=UTC)
    parsed = parse(archive.read_text(), str(archive), created_at=modified)
    return list(parsed.cache.memories.values())


def test_the_archive_read_through_its_journal_is_what_a_parse_reads(
    tmp_path: Path, mocker: MockerFixture
) -> None:
    path = tmp_path / "Memories.md"
    store = episodes(path)
    assert journal_path(path.with_name("Memories.archive.md")).is_file()
    spy = mocker.spy(markdown_archive, "parse")
    archived = store.archived()
    assert spy.call_count == 0  # every part proven by the journal: nothing parsed
    assert archived == parsed_archive(path)
    assert len(archived) == 24
    assert {e.scope for e in archived} == set(MemoryScope)
    store.close()


def test_a_memory_orjson_cannot_write_is_archived_and_read_back(tmp_path: Path) -> None:
    """A tag or an NPC id may hold a lone surrogate (a name from a file that was not UTF-8):
    the episode's end archives it all the same (its journal line escapes it) and the archive
    gives it back whole."""
    store = MarkdownMemoryStore(tmp_path / "Memories.md")
    odd = MemoryEntry(scope=MemoryScope.NPC, npc_ids=["b\udce9"], title="Odd", tags=["caf\udce9"])
    with store.transaction() as tx:
        tx.add(odd)
    with store.transaction() as tx:
        tx.supersede(odd.id, None)
    store.checkpoint()
    [back] = store.archived()
    assert (back.id, back.tags, back.npc_ids) == (odd.id, ["caf\udce9"], ["b\udce9"])
    assert store.entries() == [] and journal_path(store.archive_path).exists()


def test_an_edit_to_the_archive_is_read_not_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    episodes(path).close()
    archive = path.with_name("Memories.archive.md")
    archive.write_text(archive.read_text().replace("Learned thing 3.", "Edited by hand."))
    archived = MarkdownMemoryStore(path).archived()
    assert archived == parsed_archive(path)
    assert "Edited by hand." in {e.text for e in archived}


def test_parts_the_journal_lacks_are_parsed_and_their_problems_named_at_their_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "Memories.md"
    episodes(path).close()
    archive, journal = path.with_name("Memories.archive.md"), None
    journal = journal_path(archive)
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:-1]))  # a crash before the last part's line
    with archive.open("a", encoding="utf-8") as handle:  # a part a person appended
        handle.write(
            "\n# Archived Memories (by hand)\n\n## World\n\n**[NOTE] Kept by hand**\nA note.\n"
        )
        handle.write("\n**[NOPE] Broken**\nNot a category.\n")
    broken_line = archive.read_text().splitlines().index("**[NOPE] Broken**") + 1
    with caplog.at_level(logging.WARNING):
        archived = MarkdownMemoryStore(path).archived()
    assert archived == parsed_archive(path)
    [by_hand] = [e for e in archived if e.title == "Kept by hand"]
    modified = datetime.fromtimestamp(archive.stat().st_mtime, tz=UTC).replace(microsecond=0)
    assert by_hand.created_at == modified  # the file's time, at every read: not "now"
    later = modified + timedelta(hours=1)  # read again an hour on: "now" would differ
    monkeypatch.setattr(markdown_parse, "utc_now", lambda: later)
    assert MarkdownMemoryStore(path).archived() == archived
    assert f":{broken_line}:" in caplog.text or f"line {broken_line}" in caplog.text


@pytest.mark.parametrize(
    "junk",
    [
        b"not json\n",
        b"[]\n",
        b'{"cairn_archive": 1, "from": 0, "to": "x", "digest": "", "memories": []}\n',
        b'{"cairn_archive": 1, "from": 0, "to": 99999999999999999999999, "memories": []}\n',
        b'{"cairn_archive": 1, "from": 0, "to": 10, "digest": "00", "memories": [{"id": 1}]}\n',
        b"\xff\xfe not UTF-8\n",
    ],
)
def test_a_broken_or_hostile_journal_is_ignored(tmp_path: Path, junk: bytes) -> None:
    path = tmp_path / "Memories.md"
    episodes(path).close()
    journal_path(path.with_name("Memories.archive.md")).write_bytes(junk)
    assert MarkdownMemoryStore(path).archived() == parsed_archive(path)


def test_a_journal_whose_memories_do_not_validate_is_not_used(tmp_path: Path) -> None:
    """The digest matches but a line's memories were changed into invalid ones: the archive
    is parsed (nothing invalid is ever returned)."""
    import json

    path = tmp_path / "Memories.md"
    episodes(path).close()
    journal = journal_path(path.with_name("Memories.archive.md"))
    first, *rest = journal.read_text().splitlines()
    line = json.loads(first)
    line["memories"][0]["importance"] = 5000
    journal.write_text("\n".join([json.dumps(line), *rest]) + "\n")
    assert MarkdownMemoryStore(path).archived() == parsed_archive(path)


@PROPERTY_SETTINGS
@given(title=any_title, text=any_text, npc=odd_name, room=st.one_of(st.just(""), odd_name))
def test_any_archived_memory_reads_back_from_the_journal_as_a_parse_reads_it(
    title: str, text: str, npc: str, room: str
) -> None:
    """The journal keeps the cache's entries (as the file keeps them); a parse of the archive
    gives the same, whatever the titles, texts, NPC ids and room names hold."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "Memories.md"
        store = MarkdownMemoryStore(path)
        subjects = [
            MemoryEntry(scope=MemoryScope.LOCATION, location_id=7, title=title, text=text),
            MemoryEntry(scope=MemoryScope.LOCATION, location_id=7, location_name=npc, title=title),
            MemoryEntry(scope=MemoryScope.NPC, npc_ids=[npc, "thief"], title=title, text=text),
            MemoryEntry(scope=MemoryScope.WORLD, title=title, text=text, tags=["pruned"]),
        ]
        with store.transaction() as tx:
            tx.record_visit(7, room, 1)
            for entry in subjects:
                tx.add(entry)
        with store.transaction() as tx:
            tx.supersede(subjects[0].id, subjects[1].id)
            for entry in subjects[1:]:
                tx.supersede(entry.id, None)
        store.checkpoint()
        archive = path.with_name("Memories.archive.md")
        data = archive.read_bytes()
        assert read_journal(archive, data)[1] == len(data)  # read from the journal, not parsed
        assert len(store.archived()) == 4
        assert store.archived() == parsed_archive(path)
        store.close()


def test_the_newest_archived_memories_are_read_alone(
    durable_factory: StoreFactory, mocker: MockerFixture
) -> None:
    """`archived(newest=N)`: the last N memories moved to the archive (what a report shows of
    an archive that only grows), and `archived_count()` without reading any."""
    store = durable_factory.open()
    for episode in range(3):  # three episodes, each moving 4 memories to the archive
        with store.transaction() as tx:
            for n in range(episode * 10, episode * 10 + 10):
                tx.add(memory(n))
        with store.transaction() as tx:
            for n in range(episode * 10, episode * 10 + 4):
                tx.supersede(f"s-{n:04d}", None)
        store.checkpoint()
    every = [e.id for e in store.archived()]
    assert sorted(every) == sorted(
        f"s-{n:04d}" for e in range(3) for n in range(e * 10, e * 10 + 4)
    )
    assert store.archived_count() == 12
    if durable_factory.kind == "markdown":  # the journal's last lines, the rest not read
        full_read = mocker.spy(markdown_archive, "read_journal")
    newest = {e.id for e in store.archived(newest=4)}
    assert newest == {"s-0020", "s-0021", "s-0022", "s-0023"}
    assert {e.id for e in store.archived(newest=6)} >= newest
    two = {e.id for e in store.archived(newest=2)}  # of one part: two of its memories
    assert len(two) == 2 and two <= newest
    assert len(store.archived(newest=6)) >= 6
    assert store.archived(newest=0) == []
    assert sorted(e.id for e in store.archived(newest=100)) == sorted(every)
    if durable_factory.kind == "markdown":
        assert full_read.call_count == 0
        journal_path(durable_factory.path.with_name("Memories.archive.md")).unlink()
        read_whole = {e.id for e in store.archived(newest=4)}  # (4 of them: a parse of the
        assert len(read_whole) == 4 and read_whole <= set(every)  # parts sorts by section)
