"""SQLite loads: the index comes from the columns, sorted and aggregated by SQLite, and answers
every read as the store that wrote the rows does; rows without the columns (or with columns a
load cannot take) go through the validating path with the same answers."""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.adapters.storage.sqlite_rows import columns_index
from cairn.adapters.storage.sqlite_store import SqliteMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope, MemoryStatus

BASE = datetime(2026, 11, 24, 9, 0, 0, 123456, tzinfo=UTC)
WHOLE = BASE.replace(microsecond=0)
_NPCS = (["troll"], ["\u00e9lan", "troll"], ["Zed"], ["zed", "zed"], ["\u03a9mega"], [])


def entry(rng: random.Random, n: int) -> MemoryEntry:
    """Memories in rooms, NPC sections (non-ASCII ids, several ids, none) and the world, with
    equal importances and timestamps here and there (ties fall to store order), stamped to the
    microsecond (as older cairns and people's own rows are) or to the second (as cairn does)."""
    roll = rng.random()
    fields: dict[str, object] = {
        "id": f"q-{n:04d}",
        "title": f"Memory {n}",
        "text": f"Thing {n}.",
        "importance": rng.choice((1, 500, 500, 999, rng.randrange(1, 1000))),
        "created_at": rng.choice(
            (
                BASE + timedelta(microseconds=rng.choice((0, 0, n * 1_000_003))),
                WHOLE + timedelta(seconds=rng.choice((0, n))),  # read as integers
            )
        ),
        "status": rng.choice(
            (MemoryStatus.ACTIVE,) * 4 + (MemoryStatus.TENTATIVE, MemoryStatus.SUPERSEDED)
        ),
    }
    if roll < 0.4:
        room = rng.randrange(0, 6)
        return MemoryEntry(scope=MemoryScope.LOCATION, location_id=room, **fields)  # type: ignore[arg-type]
    if roll < 0.8:
        npcs = rng.choice(_NPCS) or ["troll"]
        location = rng.choice((None, 2))
        return MemoryEntry(  # type: ignore[arg-type]
            scope=MemoryScope.NPC, npc_ids=npcs, location_id=location, **fields
        )
    return MemoryEntry(scope=MemoryScope.WORLD, npc_ids=rng.choice(_NPCS), **fields)  # type: ignore[arg-type]


def answers(store: SqliteMemoryStore) -> tuple[object, ...]:
    return (
        [e.id for e in store.entries()],
        [e.id for e in store.ranked(1000)],
        [e.id for e in store.ranked(7)],
        {n: [e.id for e in store.entries(npc_id=n)] for n in ("troll", "\u00e9lan", "zed", "Zed")},
        {r: [e.id for e in store.entries(location_id=r)] for r in range(6)},
        [e.id for e in store.entries(scope=MemoryScope.NPC)],
    )


def written(path: Path, *, seed: int, count: int) -> SqliteMemoryStore:
    """A store holding `count` memories added in one unit of work (open: the caller closes)."""
    writer = SqliteMemoryStore(path)
    rng = random.Random(seed)
    with writer.transaction() as tx:
        for n in range(count):
            tx.add(entry(rng, n))
    return writer


@pytest.mark.parametrize("by_hand", [False, True])
def test_a_load_answers_as_the_writer_does(tmp_path: Path, by_hand: bool) -> None:
    path = tmp_path / "memories.sqlite3"
    writer = SqliteMemoryStore(path)
    rng = random.Random(4)
    for n in range(0, 240, 8):
        with writer.transaction() as tx:
            for k in range(n, n + 8):
                tx.add(entry(rng, k))
            if n:
                moved = entry(rng, n + 1000).model_copy(update={"id": f"q-{n - 3:04d}"})
                tx.update(moved)  # keeps its place in store order, maybe in another section
    expected = answers(writer)
    writer.close()
    if by_hand:  # a row without the columns: the load validates it (the other path)
        conn = sqlite3.connect(path)
        with conn:
            conn.execute("UPDATE memories SET created_ts = NULL WHERE id = 'q-0010'")
        conn.close()
    conn = sqlite3.connect(path)
    taken = columns_index(conn) is not None
    conn.close()
    assert taken is not by_hand, "the columns path, or the validating one for a hand-made row"
    store = SqliteMemoryStore(path)
    assert store._cache.unread == 240
    assert answers(store) == expected
    with store.transaction() as tx:  # the loaded index is kept in step by the ops
        tx.supersede("q-0011", None)
        tx.add(entry(rng, 999))
    after = answers(store)
    store.close()
    again = SqliteMemoryStore(path)
    assert answers(again) == after
    again.close()


def test_a_rooms_rows_are_read_in_one_query(tmp_path: Path) -> None:
    path = tmp_path / "memories.sqlite3"
    writer = written(path, seed=8, count=120)
    expected = writer.entries(location_id=3)
    writer.close()
    store = SqliteMemoryStore(path)
    statements: list[str] = []
    assert store._conn is not None
    store._conn.set_trace_callback(statements.append)
    assert len(expected) > 3
    assert store.entries(location_id=3) == expected
    reads = [s for s in statements if "FROM memories WHERE id" in s]
    assert len(reads) == 1, reads
    store.close()


def test_a_unit_of_work_writes_only_the_location_rows_it_changed(tmp_path: Path) -> None:
    path = tmp_path / "memories.sqlite3"
    store = SqliteMemoryStore(path)
    rng = random.Random(9)
    with store.transaction() as tx:
        tx.record_visit(1, "Hall", 1)
    statements: list[str] = []
    assert store._conn is not None
    store._conn.set_trace_callback(statements.append)
    memory = entry(rng, 1).model_copy(
        update={"scope": MemoryScope.LOCATION, "location_id": 1, "npc_ids": []}
    )
    with store.transaction() as tx:
        tx.add(memory)  # the room's record is as stored: not written again
    assert not [s for s in statements if "INTO locations" in s]
    with store.transaction() as tx:
        tx.record_visit(1, "Hall", 2)
    assert len([s for s in statements if "INTO locations" in s]) == 1
    store._conn.set_trace_callback(None)
    other = sqlite3.connect(path)  # another writer renames the room
    with other:
        other.execute("UPDATE locations SET name = 'Great Hall' WHERE id = 1")
    other.close()
    with store.transaction() as tx:
        tx.add(memory.model_copy(update={"id": "q-other"}))
    store.close()
    again = SqliteMemoryStore(path)
    record = again.location(1)
    assert record is not None and (record.name, record.visits, record.episodes) == (
        "Great Hall",
        2,
        [1, 2],
    )
    again.close()


@pytest.mark.parametrize("npcs", ['["\\udcff"]', "5", '{"troll": 1}', '"troll"'])
def test_a_column_the_fast_decoder_refuses_sends_the_load_to_the_validating_path(
    tmp_path: Path, npcs: str
) -> None:
    """The columns are decoded by orjson, stricter than SQLite's json_valid, and NPC columns
    are joined as arrays: a row whose NPC column a hand wrote with a lone surrogate, or as
    something other than an array, is still loaded (through the validating path, from the
    row's entry), and every read answers as before."""
    path = tmp_path / "memories.sqlite3"
    writer = written(path, seed=12, count=40)
    expected = writer.entries()
    writer.close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET npcs = ? WHERE id = ?", (npcs, "q-0003"))
        assert conn.execute("SELECT json_valid(npcs) FROM memories WHERE id = 'q-0003'").fetchone()
    store = SqliteMemoryStore(path)
    assert store.entries() == expected
    assert store.problems() == []
    store.close()
