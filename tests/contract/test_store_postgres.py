"""The PostgreSQL store beyond the shared contract: memory spaces enforced by the database,
sharing between agents through LISTEN/NOTIFY, concurrent supersessions, visits and pruning,
the schema version, timeouts and a server restart in the middle of a run."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cairn.adapters.storage.memory_index import MemoryIndex
from cairn.adapters.storage.postgres_link import notify_payloads
from cairn.adapters.storage.postgres_rows import merge
from cairn.adapters.storage.postgres_schema import SCHEMA_VERSION
from cairn.adapters.storage.postgres_store import PostgresMemoryStore
from cairn.errors import MemoryNotFoundError, StoreError, StoreLockedError
from cairn.models.memory import MemoryEntry, MemoryStatus
from cairn.services.policy import MemoryPolicy, prune
from tests.contract.conftest import StoreFactory
from tests.contract.test_store_contract import add_all, location_memory, world_memory
from tests.contract.test_store_crash_and_concurrency import Writer, stored_ids, writer_pool
from tests.postgres import open_pg_store, server


def pg(store: Any) -> PostgresMemoryStore:
    assert isinstance(store, PostgresMemoryStore)
    return store


@contextmanager
def raw_connection(space: str, url: str | None = None) -> Iterator[psycopg.Connection[Any]]:
    """A hand-made connection of the application role, in `space` (autocommit)."""
    with psycopg.connect(url or server().url, autocommit=True) as conn:
        conn.execute("SELECT set_config('cairn.space', %s, false)", (space,))
        yield conn


def eventually(check: Callable[[], bool], seconds: float = 5.0) -> None:
    """Wait until `check()` holds (the notification of another connection's commit is on its
    way: it arrives within milliseconds)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not seen in time"
        time.sleep(0.002)


def in_threads(*calls: Callable[[], None]) -> None:
    """Run each call in its own thread at once; fail with the first error any of them raised."""
    errors: list[BaseException] = []

    def guarded(call: Callable[[], None]) -> None:
        try:
            call()
        except BaseException as e:  # reported by the test's thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


# -- memory spaces -------------------------------------------------------------------------------


def test_another_spaces_rows_are_neither_visible_nor_writable(tmp_path: Path) -> None:
    ours = open_pg_store(tmp_path / "ours")
    theirs = open_pg_store(tmp_path / "theirs")
    try:
        add_all(ours, location_memory("Ours", id="m-ours"))
        secret = location_memory("Theirs", id="m-theirs", location_id=9)
        add_all(theirs, secret)
        with theirs.transaction() as tx:
            tx.record_visit(9, "Their room", 1)
        assert [m.id for m in ours.entries()] == ["m-ours"]
        assert set(ours.locations()) == {1}
        other = str(tmp_path / "theirs")

        def hand_written(conn: psycopg.Connection[Any], attempt: int) -> None:
            role = conn.execute(
                "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
            ).fetchone()
            assert role == (False, False)  # superusers would skip row-level security
            rows = conn.execute("SELECT space, id FROM cairn_memories").fetchall()
            assert rows == [(str(tmp_path / "ours"), "m-ours")]
            assert conn.execute(
                "SELECT count(*) FROM cairn_memories WHERE space = %s", (other,)
            ).fetchone() == (0,)
            assert conn.execute("SELECT id FROM cairn_locations").fetchall() == [(1,)]
            for statement in (
                "UPDATE cairn_memories SET status = 'ACTIVE' WHERE space = %s",
                "DELETE FROM cairn_memories WHERE space = %s",
                "UPDATE cairn_locations SET visits = 99 WHERE space = %s",
                "DELETE FROM cairn_locations WHERE space = %s",
            ):
                assert conn.execute(statement, (other,)).rowcount == 0
            for statement in (
                "INSERT INTO cairn_memories (space, id, scope, category, status, importance,"
                " npc_ids, entry) VALUES (%s, 'm-planted', 'world', 'NOTE', 'ACTIVE', 1, '{}',"
                " '{}')",
                "INSERT INTO cairn_locations (space, id, name, visits, episodes)"
                " VALUES (%s, 77, 'Planted', 1, '{}')",
                "UPDATE cairn_memories SET space = %s WHERE id = 'm-ours'",
            ):
                with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level"):
                    conn.execute(statement, (other,))

        pg(ours)._link.run(hand_written, "test")
        assert theirs.entries() == [secret]
        assert theirs.locations()[9].visits == 1
        again = open_pg_store(tmp_path / "ours")
        assert [m.id for m in again.entries()] == ["m-ours"]
        again.close()
    finally:
        ours.close()
        theirs.close()


def test_the_schema_version_is_kept_and_a_newer_one_is_refused() -> None:
    url = server().create_database("schema_version_test")
    store = PostgresMemoryStore(url, space="s")
    store.close()
    with raw_connection("s", url) as conn:
        assert conn.execute("SELECT version FROM cairn_schema").fetchone() == (SCHEMA_VERSION,)
    server().admin(
        f"UPDATE cairn_schema SET version = {SCHEMA_VERSION + 1}", database="schema_version_test"
    )
    newer = SCHEMA_VERSION + 1
    with pytest.raises(StoreError, match=rf"schema version {newer} is newer .* upgrade cairn"):
        PostgresMemoryStore(url, space="s")


def test_a_database_of_schema_1_gains_the_archive_and_keeps_its_memories() -> None:
    url = server().create_database("schema_1_test")
    store = PostgresMemoryStore(url, space="s")
    kept = world_memory("From before the archive")
    add_all(store, kept)
    store.close()
    server().admin(  # as the first schema left it
        "DROP TABLE cairn_archive",
        "ALTER TABLE cairn_memories DROP COLUMN created_ts",
        "UPDATE cairn_schema SET version = 1",
        database="schema_1_test",
    )
    store = PostgresMemoryStore(url, space="s")
    assert store.get(kept.id) == kept  # a row from before `created_ts`: validated at the open
    with raw_connection("s", url) as conn:  # and given its created_ts for the next open
        assert conn.execute("SELECT created_ts FROM cairn_memories").fetchall() == [
            (kept.created_at.timestamp(),)
        ]
    with store.transaction() as tx:
        tx.supersede(kept.id, None)
    store.checkpoint()
    assert store.entries() == [] and [e.id for e in store.archived()] == [kept.id]
    store.close()
    with raw_connection("s", url) as conn:
        assert conn.execute("SELECT version FROM cairn_schema").fetchone() == (SCHEMA_VERSION,)


# -- sharing between agents ------------------------------------------------------------------


def test_a_commit_shows_in_the_other_agents_cache_without_a_full_reload(
    postgres_factory: StoreFactory,
) -> None:
    a, b = pg(postgres_factory.open()), pg(postgres_factory.open())
    hall = location_memory("Hall memory", location_id=1)
    add_all(a, hall)
    eventually(lambda: b.get(hall.id) == hall)
    assert (b.loads, b.fetched) == (1, 2)  # the memory and its location row, nothing else

    moved = hall.model_copy(update={"text": "changed by A"})
    successor = world_memory("Successor")
    with a.transaction() as tx:
        tx.update(moved)
        tx.add(successor)
        tx.record_visit(1, "Great Hall", 3)
    eventually(lambda: b.get(hall.id) == moved and b.get(successor.id) == successor)
    assert b.locations()[1].visits == 1 and b.locations()[1].name == "Great Hall"
    with a.transaction() as tx:
        tx.supersede(hall.id, successor.id)
    eventually(lambda: b.get(hall.id) is not None and not b.get(hall.id).visible)  # type: ignore[union-attr]
    with a.transaction() as tx:
        tx.delete(hall.id)
    eventually(lambda: b.get(hall.id) is None)
    assert b.loads == 1
    assert b.entries() == a.entries() == [successor]
    assert a.fetched == 0  # its own commits are not fetched back


def test_a_commit_another_agent_returned_from_is_read_at_once(
    postgres_factory: StoreFactory,
) -> None:
    """A notification reaches the listening connection on its own time; a read first makes the
    server send those of every commit that returned (without that, 42 of 300 reads here missed
    the memory just committed)."""
    a, b = pg(postgres_factory.open()), pg(postgres_factory.open())
    missed = []
    for n in range(300):
        entry = world_memory(f"B's {n}")
        add_all(b, entry)
        if a.get(entry.id) != entry:
            missed.append(n)
    assert missed == []
    assert a.loads == 1  # read row by row, never by reading everything again


def test_an_agents_checkpoint_archives_for_every_agent_without_a_reload(
    postgres_factory: StoreFactory,
) -> None:
    """A's episode end moves the space's SUPERSEDED memories to the archive: B's cache drops
    them at its next read (no full reload), B's update of one finds no memory, and both read
    them from the archive, in the order they were superseded in the store."""
    a, b = pg(postgres_factory.open()), pg(postgres_factory.open())
    old, new, other = location_memory("Old"), location_memory("New"), world_memory("Other")
    add_all(a, old, new, other)
    with b.transaction() as tx:  # B supersedes: A has not read it yet
        tx.supersede(old.id, new.id)
        tx.supersede(other.id, None)
    a.checkpoint()
    assert [e.id for e in a.entries()] == [new.id]
    eventually(lambda: [e.id for e in b.entries()] == [new.id])
    assert b.loads == 1
    with pytest.raises(MemoryNotFoundError), b.transaction() as tx:
        tx.update(old.model_copy(update={"text": "too late"}))
    for store in (a, b, postgres_factory.open()):
        archived = pg(store).archived()
        assert [(e.id, e.superseded_by) for e in archived] == [(old.id, new.id), (other.id, None)]
    a.checkpoint()  # nothing more to move
    assert len(b.archived()) == 2


def test_superseding_a_memory_another_agent_superseded_and_archived_meanwhile_is_no_error(
    postgres_factory: StoreFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """C stages the supersession of a memory it read as ACTIVE; before C commits, B supersedes
    it and A's episode end archives it. C's unit commits (its new memory kept), the archived
    memory keeps B's successor, and a warning says so. Before, C's unit failed with
    MemoryNotFoundError (eight agents in one space hit it in about 1 of 4 runs)."""
    a, b, c = (pg(postgres_factory.open()) for _ in range(3))
    old, theirs, mine = location_memory("Old"), location_memory("Theirs"), location_memory("Mine")
    add_all(a, old, theirs)
    eventually(lambda: c.get(old.id) is not None)
    with c.transaction() as tx:
        tx.add(mine)
        tx.supersede(old.id, mine.id)
        with b.transaction() as other:  # meanwhile, in another agent
            other.supersede(old.id, theirs.id)
        a.checkpoint()
    assert any("archived by another agent meanwhile" in r.getMessage() for r in caplog.records)
    fresh = pg(postgres_factory.open())
    assert fresh.get(mine.id) is not None and fresh.get(old.id) is None
    assert [(e.id, e.superseded_by) for e in fresh.archived()] == [(old.id, theirs.id)]


def test_a_unit_of_work_and_a_fetch_cost_what_they_change_not_the_spaces_size(
    postgres_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing one memory into a space of 300, and taking in another agent's one, changes the
    cache in place: its indexes take in one memory, not all 300 again (a copy of the cache per
    unit made each write cost ~12 ms at 3,000 memories and ~40 at 10,000; the cache has no
    copy now)."""
    a, b = pg(postgres_factory.open()), pg(postgres_factory.open())
    add_all(a, *(location_memory(f"Old {n}", location_id=n % 7) for n in range(300)))
    assert len(a.entries()) == len(b.entries(location_id=3)) * 0 + 300  # both indexed now

    indexed: list[str] = []
    real_add = MemoryIndex.add

    def counted(self: MemoryIndex, entry: MemoryEntry, seq: int | None = None) -> None:
        indexed.append(entry.id)
        real_add(self, entry, seq)

    monkeypatch.setattr(MemoryIndex, "add", counted)
    new = location_memory("New", location_id=3)
    with a.transaction() as tx:
        tx.add(new)
        tx.record_visit(3, "Hall", 1)
    assert a.entries(location_id=3)[-1] == new and len(a.entries()) == 301
    assert b.entries(location_id=3)[-1] == new and len(b.entries()) == 301
    assert len(indexed) <= 4, indexed  # the new memory in each cache (nothing rebuilt)
    with a.transaction() as tx:
        tx.supersede(new.id, None)
        tx.delete(a.entries()[0].id)
    assert b.entries() == a.entries() and len(a.entries()) == 300
    assert b.locations() == a.locations() and a.locations()[3].visits == 1
    assert len(indexed) <= 8, indexed


def test_a_unit_of_work_that_fails_part_way_leaves_the_cache_as_it_was(
    postgres_factory: StoreFactory,
) -> None:
    """Its first ops changed the cache in place as their rows were written; the op that fails
    takes them all back: memories, their order, the location records, and the rows' seqs (the
    same memory can be added again later, in its place)."""
    a = pg(postgres_factory.open())
    first, later = location_memory("First", location_id=1), location_memory("Later")
    add_all(a, first)
    before = (a.entries(), a.entries(location_id=2), a.locations())
    with pytest.raises(MemoryNotFoundError), a.transaction() as tx:
        tx.add(later)
        tx.add(location_memory("In a new room", location_id=2))
        tx.record_visit(1, "Renamed", 4)
        tx.supersede(first.id, later.id)
        tx.update(world_memory("Never stored"))
    assert (a.entries(), a.entries(location_id=2), a.locations()) == before
    add_all(a, later)
    fresh = postgres_factory.open()
    assert a.entries() == fresh.entries() == [first, later]
    assert a.locations() == fresh.locations()


def test_memories_of_many_agents_keep_one_order_everywhere(postgres_factory: StoreFactory) -> None:
    """Commits that overlap reach each cache in a different order; each cache still holds the
    store order (the order a fresh load gives)."""
    stores = [pg(postgres_factory.open()) for _ in range(3)]

    def write(store: PostgresMemoryStore, prefix: str) -> None:
        for n in range(30):
            add_all(store, location_memory(f"{prefix} {n}", location_id=n % 3))

    in_threads(*(partial(write, s, f"w{i}") for i, s in enumerate(stores)))
    fresh = postgres_factory.open()
    expected = fresh.entries()
    assert len(expected) == 90
    for store in stores:
        eventually(lambda s=store: s.entries() == expected)  # type: ignore[misc]
        assert store.entries(location_id=1) == fresh.entries(location_id=1)
        assert store.locations() == fresh.locations()


def test_a_supersession_waits_for_the_row_lock_and_keeps_the_first_successor(
    postgres_factory: StoreFactory,
) -> None:
    """Agent B supersedes a memory while agent A holds its row (A is mid-commit, superseding
    it too). B waits for A's commit, then sees A's successor and keeps it: one successor, no
    lost update. Reading the row without the lock would let B overwrite A's link."""
    b = pg(postgres_factory.open())
    old = location_memory("Troll sleeps")
    add_all(b, old)
    by_a = old.model_copy(update={"status": MemoryStatus.SUPERSEDED, "superseded_by": "m-by-a"})
    mine = location_memory("Troll is awake", id="m-by-b")
    done: list[BaseException | None] = []

    def supersede() -> None:
        try:
            with b.transaction() as tx:
                tx.add(mine)
                tx.supersede(old.id, mine.id)
            done.append(None)
        except BaseException as e:
            done.append(e)

    with raw_connection(b.space) as conn, conn.transaction():
        conn.execute("SELECT 1 FROM cairn_memories WHERE id = %s FOR UPDATE", (old.id,))
        thread = threading.Thread(target=supersede)
        thread.start()
        time.sleep(0.3)
        assert thread.is_alive() and not done  # B waits for A's row lock
        conn.execute(
            "UPDATE cairn_memories SET status = 'SUPERSEDED', entry = %s WHERE id = %s",
            (by_a.model_dump_json(), old.id),
        )
    thread.join(timeout=10)
    assert done == [None]
    for view in (b, postgres_factory.open()):
        assert view.get(old.id) == by_a
        assert view.get(mine.id) == mine


def test_two_agents_superseding_one_memory_at_once_agree_on_one_successor(
    postgres_factory: StoreFactory,
) -> None:
    a, b = pg(postgres_factory.open()), pg(postgres_factory.open())
    olds = [world_memory(f"Belief {n}") for n in range(8)]
    add_all(a, *olds)
    eventually(lambda: len(b.entries()) == 8)
    barrier = threading.Barrier(2)

    def replace(store: PostgresMemoryStore, name: str) -> None:
        for old in olds:
            new = world_memory(f"{name} replaces {old.title}", id=f"{name}-{old.id}")
            barrier.wait()
            with store.transaction() as tx:
                tx.add(new)
                tx.supersede(old.id, new.id)

    in_threads(partial(replace, a, "a"), partial(replace, b, "b"))
    fresh = postgres_factory.open()
    for old in olds:
        stored = fresh.get(old.id)
        assert stored is not None and stored.status is MemoryStatus.SUPERSEDED
        assert stored.superseded_by in (f"a-{old.id}", f"b-{old.id}")
        eventually(lambda o=old: a.get(o.id) == b.get(o.id) == fresh.get(o.id))  # type: ignore[misc]
    assert len(fresh.entries()) == 8 * 3


def test_visits_counted_by_many_agents_at_once_are_all_counted(
    postgres_factory: StoreFactory,
) -> None:
    stores = [pg(postgres_factory.open()) for _ in range(4)]

    def visit(store: PostgresMemoryStore, episode: int) -> None:
        for _ in range(25):
            with store.transaction() as tx:
                tx.record_visit(5, "Crossroads", episode)

    in_threads(*(partial(visit, s, n + 1) for n, s in enumerate(stores)))
    record = postgres_factory.open().locations()[5]
    assert (record.visits, record.episodes, record.name) == (100, [1, 2, 3, 4], "Crossroads")
    for store in stores:
        eventually(lambda s=store: s.locations()[5] == record)  # type: ignore[misc]


def test_pruning_by_two_agents_from_the_same_view_removes_once_and_loses_no_link(
    postgres_factory: StoreFactory,
) -> None:
    """B prunes from what it read while A prunes and supersedes meanwhile: B's removal of a
    memory A already removed is no error, and B's retiring of a memory keeps the successor A
    linked in between (the update is merged with the row, not written over it)."""
    a, b = pg(postgres_factory.open()), pg(postgres_factory.open())
    old = [
        location_memory(f"Old {n}", status=MemoryStatus.SUPERSEDED, turn_start=n) for n in range(3)
    ]
    live = [location_memory(f"Live {n}", importance=100 + n) for n in range(3)]
    add_all(a, *old, *live)
    eventually(lambda: len(b.entries()) == 6)
    policy = MemoryPolicy(cap_per_location=2, superseded_kept_per_key=1)
    successor = location_memory("Successor of Live 0", importance=999)
    with b.transaction() as tx_b:
        b_lines = prune(b.entries(), policy, tx_b)  # retires Live 0, removes Old 0 and Old 1
        with a.transaction() as tx_a:
            tx_a.add(successor)
            tx_a.supersede(live[0].id, successor.id)
        with a.transaction() as tx_a:
            a_lines = prune(a.entries(), policy, tx_a)  # removes Old 0, Old 1 and Live 0's...
    assert len(b_lines) == 3 and a_lines
    fresh = postgres_factory.open()
    retired = fresh.get(live[0].id)
    assert retired is not None
    assert (retired.status, retired.superseded_by) == (MemoryStatus.SUPERSEDED, successor.id)
    assert "pruned" in retired.tags
    superseded = [m for m in fresh.entries() if not m.visible]
    assert len(superseded) <= 2 and old[0].id not in {m.id for m in superseded}
    assert fresh.get(old[1].id) is None
    eventually(lambda: b.entries() == a.entries() == fresh.entries())


# -- faults ------------------------------------------------------------------------------------


def test_a_held_row_lock_fails_the_unit_of_work_after_the_timeout(
    postgres_factory: StoreFactory,
) -> None:
    store = postgres_factory.open(statement_timeout=0.5)
    memory = world_memory("Held")
    add_all(store, memory)
    with raw_connection(str(postgres_factory.path)) as conn, conn.transaction():
        conn.execute("SELECT 1 FROM cairn_memories WHERE id = %s FOR UPDATE", (memory.id,))
        started = time.monotonic()
        with pytest.raises(StoreLockedError, match="timeout") as caught, store.transaction() as tx:
            tx.supersede(memory.id, None)
        assert time.monotonic() - started < 5
    assert "\n" not in str(caught.value)
    add_all(store, world_memory("After"))  # the store goes on
    assert [m.status for m in store.entries()] == [MemoryStatus.ACTIVE, MemoryStatus.ACTIVE]


def test_writes_go_on_after_the_server_restarts(postgres_factory: StoreFactory) -> None:
    writer, reader = pg(postgres_factory.open()), pg(postgres_factory.open())
    before = [world_memory(f"Before {n}") for n in range(5)]
    for entry in before:
        add_all(writer, entry)
    eventually(lambda: len(reader.entries()) == 5)
    server().restart()
    after = [world_memory(f"After {n}") for n in range(5)]
    for entry in after:
        add_all(writer, entry)  # reconnects: the pool's connection was cut
    expected = [*before, *after]
    assert postgres_factory.open().entries() == expected
    eventually(lambda: reader.entries() == expected)  # its listener reconnected and re-read
    assert reader.loads == 2


def test_a_writer_process_goes_on_through_a_server_restart_and_loses_nothing(
    postgres_factory: StoreFactory,
) -> None:
    with writer_pool() as writers:
        writer = Writer.start("postgres", postgres_factory.path, 100_000, "r")
        writers.append(writer)
        writer.wait_ready()
        writer.go()
        writer.first_ack()
        assert writer.process.stdout is not None
        for _ in range(20):
            writer.ids.append(writer.process.stdout.readline().strip())
        server().restart()
        at_restart, store = stored_ids("postgres", postgres_factory.path)
        store.close()
        later = 0
        while later < 10:  # acknowledged by commits made after the restart
            line = writer.process.stdout.readline()
            assert line.endswith("\n"), f"the writer stopped: {writer.errors()}"
            writer.ids.append(line.strip())
            later += writer.ids[-1] not in at_restart
        writer.kill()
    ids, store = stored_ids("postgres", postgres_factory.path)
    store.close()
    missing = set(writer.ids) - ids
    assert not missing, f"acknowledged memories lost: {sorted(missing)[:5]}"


def test_a_merge_keeps_both_agents_changes_unless_they_do_not_fit_together() -> None:
    known = location_memory("Visit", turn_start=3, turn_end=5, text="old")
    theirs = known.model_copy(update={"status": MemoryStatus.SUPERSEDED, "superseded_by": "m-x"})
    ours = known.model_copy(update={"text": "new"})
    assert merge(known, theirs, ours) == theirs.model_copy(update={"text": "new"})
    assert merge(theirs, theirs, ours) == ours  # nothing changed meanwhile: ours as it is
    assert merge(None, theirs, ours) == ours
    later = known.model_copy(update={"turn_start": 9, "turn_end": 9})
    shorter = known.model_copy(update={"turn_end": 4})
    assert merge(known, later, shorter) == shorter  # turn_end 4 < turn_start 9: ours whole


def test_an_invalid_memory_is_refused_before_it_reaches_other_agents(
    postgres_factory: StoreFactory,
) -> None:
    store = postgres_factory.open()
    broken = location_memory("Ends first", turn_start=5).model_copy(update={"turn_end": 2})
    with pytest.raises(StoreError, match="turn_end"):
        add_all(store, world_memory("Fine"), broken)
    assert postgres_factory.open().entries() == store.entries() == []


def test_a_role_that_skips_row_level_security_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    running = server()
    running.admin(f"ALTER ROLE {running.role} BYPASSRLS")
    try:
        open_pg_store(tmp_path).close()
    finally:
        running.admin(f"ALTER ROLE {running.role} NOBYPASSRLS")
    assert "does not keep it to its memory space" in caplog.text
    caplog.clear()
    open_pg_store(tmp_path).close()
    assert "memory space" not in caplog.text


def test_a_writer_that_never_reads_takes_in_the_notifications_as_it_commits(
    postgres_factory: StoreFactory,
) -> None:
    a, b = pg(postgres_factory.open()), pg(postgres_factory.open())
    theirs = [world_memory(f"A's {n}") for n in range(5)]
    for entry in theirs:
        add_all(a, entry)
    deadline = time.monotonic() + 5
    while not (b._pending is not None and b._pending.memories == {m.id for m in theirs}):
        assert time.monotonic() < deadline, "b's commits did not take in a's notifications"
        add_all(b, world_memory("B's"))  # commits only: no read
        time.sleep(0.01)
    assert b.fetched == 0
    assert {m.id for m in theirs} <= {m.id for m in b.entries()}  # the next read has them
    assert (b.fetched, b.loads) == (5, 1)


def test_a_unit_of_work_chosen_as_a_deadlocks_victim_runs_again(
    postgres_factory: StoreFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """B supersedes X then Y while another agent holds Y and then asks for X: the database
    breaks the deadlock by failing B's transaction, and B runs its unit of work again."""
    b = pg(postgres_factory.open())
    x, y = world_memory("X"), world_memory("Y")
    add_all(b, x, y)
    done: list[BaseException | None] = []

    def supersede_both() -> None:
        try:
            with b.transaction() as tx:
                tx.supersede(x.id, None)
                tx.supersede(y.id, None)
            done.append(None)
        except BaseException as e:
            done.append(e)

    watcher = psycopg.connect(server().url, autocommit=True)
    with watcher, raw_connection(b.space) as other:
        # B's run again can take X before this transaction's wait for it is granted: the two
        # then deadlock again and the database may choose this one (it has waited longer)
        with contextlib.suppress(psycopg.errors.DeadlockDetected), other.transaction():
            other.execute("SELECT 1 FROM cairn_memories WHERE id = %s FOR UPDATE", (y.id,))
            thread = threading.Thread(target=supersede_both)
            thread.start()
            eventually(  # B holds X and waits for Y
                lambda: (
                    watcher.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    ).fetchone()
                    == (1,)
                )
            )
            other.execute("SELECT 1 FROM cairn_memories WHERE id = %s FOR UPDATE", (x.id,))
        thread.join(timeout=20)
    assert done == [None]
    assert "deadlock detected" in caplog.text
    assert [m.status for m in postgres_factory.open().entries()] == [MemoryStatus.SUPERSEDED] * 2


def test_a_large_unit_of_work_reaches_the_others_in_several_notifications(
    postgres_factory: StoreFactory,
) -> None:
    a, b = pg(postgres_factory.open()), pg(postgres_factory.open())
    many = [world_memory(f"Imported {n}", id=f"m-imported-{n:06d}") for n in range(1200)]
    add_all(a, *many)
    payloads = notify_payloads("token", [m.id for m in many], [1, 2])
    assert len(payloads) > 1 and all(len(p.encode()) < 8000 for p in payloads)
    assert [i for p in payloads for i in json.loads(p)["m"]] == [m.id for m in many]
    assert [json.loads(p)["l"] for p in payloads][-1] == [1, 2]
    eventually(lambda: len(b.entries()) == 1200)
    assert b.entries() == many and b.loads == 1


# -- a lazy open ----------------------------------------------------------------------------


def test_a_store_opens_from_the_index_columns_and_reads_each_memory_when_first_asked_for(
    postgres_factory: StoreFactory, mocker: Any
) -> None:
    """Opening a space reads each row's index columns, no memory; a read validates the rows
    it needs (one query for a room's); another agent's change made after the open and before
    the first read is what that read gives, in the index's order too."""
    writer = pg(postgres_factory.open())
    rooms = [location_memory(f"Room {n % 3} memory {n}", location_id=n % 3) for n in range(9)]
    add_all(writer, *rooms, world_memory("The world"))
    reads = mocker.spy(PostgresMemoryStore, "_read_rows")
    reader = pg(postgres_factory.open())
    assert reads.call_count == 0 and reader.loads == 1
    in_room_1 = reader.entries(location_id=1)
    assert [e.id for e in in_room_1] == [e.id for e in rooms if e.location_id == 1]
    assert reads.call_count == 1  # the room's three memories, together
    changed = rooms[0].model_copy(update={"importance": 999, "text": "changed after the open"})
    with writer.transaction() as tx:
        tx.update(changed)
    assert reader.get(changed.id) == changed
    assert reader.ranked(1) == [changed]
    assert reader.entries() == writer.entries()  # every memory, read together
    assert reader.loads == 1


def test_a_row_that_does_not_validate_is_reported_when_first_read_and_left_out(
    postgres_factory: StoreFactory,
) -> None:
    writer = pg(postgres_factory.open())
    good, bad = world_memory("Good"), world_memory("Bad")
    add_all(writer, good, bad)
    with raw_connection(str(postgres_factory.path)) as conn:  # a hand edit of the database
        conn.execute("UPDATE cairn_memories SET entry = '{\"oops\": 1}' WHERE id = %s", (bad.id,))
    reader = pg(postgres_factory.open())
    assert reader.problems() == []  # nothing read yet
    assert reader.entries() == [good]
    assert [p.message for p in reader.problems()] == [
        f"memory {bad.id!r} is invalid: " + p.message.split("is invalid: ", 1)[1]
        for p in reader.problems()
    ]
    assert len(reader.problems()) == 1 and reader.get(bad.id) is None


def test_memories_an_agent_never_read_can_change_or_go_under_it(
    postgres_factory: StoreFactory, mocker: Any
) -> None:
    """Another agent updates, supersedes and deletes memories this one opened but never read:
    their notifications bring the new rows in (no extra read of the old ones) or drop them."""
    writer = pg(postgres_factory.open())
    kept, changed, gone = (world_memory(t) for t in ("Kept", "Changed", "Gone"))
    add_all(writer, kept, changed, gone)
    reader = pg(postgres_factory.open())
    reads = mocker.spy(PostgresMemoryStore, "_read_rows")
    newer = changed.model_copy(update={"text": "changed unread", "importance": 900})
    with writer.transaction() as tx:
        tx.update(newer)
        tx.delete(gone.id)
    assert reader.get(gone.id) is None and reader.get(newer.id) == newer
    assert reads.call_count == 0  # the notified rows came with the fetch
    assert reader.entries() == writer.entries() == [kept, newer]
    assert reader.ranked(1) == [newer] and reader.loads == 1
    late = pg(postgres_factory.open())  # holds `kept`, unread, when the writer deletes it
    with writer.transaction() as tx:
        tx.delete(kept.id)
    with late.transaction() as tx:  # gone, whether it or another agent deleted it
        tx.delete(kept.id)
    assert late.entries() == [newer]


def test_a_memory_an_agent_never_read_keeps_the_successor_another_agent_gave_it(
    postgres_factory: StoreFactory,
) -> None:
    """B opened the space before A superseded X, and never read X: B superseding X too is
    taken as the late one (one successor, A's), as when B's view of X was the older one."""
    a = pg(postgres_factory.open())
    old, by_a, by_b = world_memory("X"), world_memory("A's"), world_memory("B's")
    add_all(a, old, by_a, by_b)
    b = pg(postgres_factory.open())
    with a.transaction() as tx:
        tx.supersede(old.id, by_a.id)
    with b.transaction() as tx:  # its notification not read yet: X is unread, as loaded
        tx.supersede(old.id, by_b.id)
    stored = pg(postgres_factory.open()).get(old.id)
    assert stored is not None and stored.superseded_by == by_a.id
    assert b.get(old.id) == stored
