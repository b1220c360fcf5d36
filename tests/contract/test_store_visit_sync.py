"""Units of work that only count visits are written at once but do not wait for the disk.

Most turns of play only move the player: their unit of work counts one visit. Every store
writes such a unit before it returns (a reader sees it, and a killed process loses nothing),
but does not sync it: the next unit with a memory in it syncs it with its own (markdown: one
fdatasync of the file; SQLite: a commit under synchronous=FULL syncs the WAL's earlier frames;
PostgreSQL: a synchronous commit flushes the WAL up to its own record), as do the episode's end
and the store's close. A power cut can so cost the last few visit counts, never a memory
(`store_ops.visits_only`).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pytest_mock import MockerFixture

from cairn.adapters.storage import live_file
from cairn.adapters.storage.store_ops import AddOp, UpdateOp, VisitOp, visits_only
from cairn.interfaces.store import IMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope
from tests.contract.conftest import StoreFactory

ROOT = Path(__file__).resolve().parents[2]


def note(n: int) -> MemoryEntry:
    return MemoryEntry(
        id=f"v-{n}",
        scope=MemoryScope.LOCATION,
        location_id=7,
        location_name="Kitchen",
        title=f"Note {n}",
        text=f"Learned thing {n}.",
        episode=1,
    )


def visit(store: IMemoryStore, location_id: int = 7, name: str = "Kitchen") -> None:
    with store.transaction() as tx:
        tx.record_visit(location_id, name, 1)


def test_only_a_unit_of_visits_and_nothing_else_is_visits_only() -> None:
    entry = note(1)
    assert visits_only([VisitOp(7, "Kitchen", 1), VisitOp(8, "Attic", None)])
    assert not visits_only([])
    assert not visits_only([VisitOp(7, "Kitchen", 1), AddOp(entry)])
    assert not visits_only([UpdateOp(entry)])


@pytest.fixture
def markdown_syncs(mocker: MockerFixture) -> Iterator[list[int]]:
    """The file descriptors the markdown store's appends synced."""
    synced: list[int] = []
    real = live_file._datasync

    def sync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    mocker.patch.object(live_file, "_datasync", sync)
    yield synced


def test_markdown_appends_a_visit_at_once_and_syncs_it_with_the_next_memory(
    markdown_factory: StoreFactory, markdown_syncs: list[int]
) -> None:
    store = markdown_factory.open()
    with store.transaction() as tx:
        tx.add(note(1))
    visit(store)  # the append that took the backup is past: from here every unit appends
    markdown_syncs.clear()
    size = markdown_factory.path.stat().st_size
    visit(store)
    visit(store)
    assert markdown_syncs == []  # written, not synced
    assert markdown_factory.path.stat().st_size > size  # ...but in the file already
    assert "**Visits:** 3" in markdown_factory.path.read_text(encoding="utf-8")
    with store.transaction() as tx:
        tx.add(note(2))
    assert len(markdown_syncs) == 1  # the memory's unit: one sync, which covers the visits too
    with store.transaction() as tx:
        tx.record_visit(7, "Kitchen", 1)
        tx.update(note(2).model_copy(update={"text": "Changed."}))
    assert len(markdown_syncs) == 2  # a visit with a memory in the same unit is synced


def sqlite_statements(store: IMemoryStore) -> list[str]:
    statements: list[str] = []
    store._connection().set_trace_callback(statements.append)  # type: ignore[attr-defined]
    return statements


def test_sqlite_commits_a_visit_without_syncing_and_a_memory_with_a_full_sync(
    sqlite_factory: StoreFactory,
) -> None:
    store = sqlite_factory.open()
    statements = sqlite_statements(store)
    visit(store)
    assert statements[0] == "PRAGMA synchronous = NORMAL"  # this commit does not sync the WAL
    assert "COMMIT" in statements
    assert statements[-1] == "PRAGMA synchronous = FULL"  # ...and the next ones do again
    conn = store._connection()  # type: ignore[attr-defined]
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    statements.clear()
    with store.transaction() as tx:
        tx.add(note(1))
    assert not any("SYNCHRONOUS" in s.upper() for s in statements)  # committed under FULL
    other = sqlite3.connect(sqlite_factory.path)
    try:  # another connection reads the visit at once
        visits = other.execute("SELECT visits FROM locations WHERE id = 7").fetchone()[0]
    finally:
        other.close()
    assert visits == 1


def test_sqlite_syncs_unsynced_visits_at_the_episodes_end_and_on_close(
    sqlite_factory: StoreFactory,
) -> None:
    store = sqlite_factory.open()
    statements = sqlite_statements(store)
    store.checkpoint()
    assert not any("wal_checkpoint" in s for s in statements)  # nothing left unsynced
    visit(store)
    store.checkpoint()
    assert "PRAGMA wal_checkpoint(PASSIVE)" in statements  # a checkpoint syncs the WAL first
    statements.clear()
    visit(store)
    store.close()
    assert "PRAGMA wal_checkpoint(PASSIVE)" in statements


def test_postgres_commits_a_visit_asynchronously_and_a_memory_synchronously(
    postgres_factory: StoreFactory, mocker: MockerFixture
) -> None:
    store = postgres_factory.open()
    spy = mocker.spy(psycopg.Connection, "execute")

    def asynchronous() -> int:
        return sum(1 for call in spy.call_args_list if "synchronous_commit" in str(call.args[1]))

    visit(store)
    assert asynchronous() == 1  # SET LOCAL: this transaction only
    with store.transaction() as tx:
        tx.add(note(1))
    assert asynchronous() == 1
    reader = postgres_factory.open()
    assert reader.location(7) is not None and reader.location(7).visits == 1  # type: ignore[union-attr]


CHILD = """
import os, signal, sys
from pathlib import Path
from tests.contract.writer import open_store
store = open_store(sys.argv[1], Path(sys.argv[2]))
for _ in range(3):
    with store.transaction() as tx:
        tx.record_visit(7, "Kitchen", 1)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_process_killed_after_counting_visits_loses_none_of_them(
    durable_factory: StoreFactory,
) -> None:
    first = durable_factory.open()
    with first.transaction() as tx:
        tx.add(note(1))
    first.close()
    child = subprocess.run(
        [sys.executable, "-c", CHILD, durable_factory.kind, str(durable_factory.path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    store: Any = durable_factory.open()
    record = store.location(7)
    assert record is not None and record.visits == 3
    assert [e.id for e in store.entries()] == ["v-1"]
