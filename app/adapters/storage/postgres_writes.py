"""The rows a unit of work writes in the PostgreSQL store, merged with others' commits."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import psycopg
from pydantic import ValidationError

from cairn.adapters.storage.postgres_rows import (
    ENSURE_LOCATION,
    INSERT,
    LOCATION,
    LOCK_ROW,
    UPDATE,
    VISIT,
    Working,
    merge,
    record,
    values,
)
from cairn.adapters.storage.postgres_schema import encode_text
from cairn.adapters.storage.store_ops import (
    AddOp,
    DeleteOp,
    StoreOp,
    SupersedeOp,
    UpdateOp,
    VisitOp,
)
from cairn.errors import MemoryNotFoundError, StoreError
from cairn.models.memory import MemoryEntry, MemoryScope, MemoryStatus

log = logging.getLogger(__name__)

Conn = psycopg.Connection[Any]


def write_all(
    conn: Conn,
    working: Working,
    ops: Iterable[StoreOp],
    attempt: int,
    seen: dict[str, MemoryEntry | None],
) -> tuple[list[str], list[int]]:
    """Write each op; return the memory ids and location ids changed. `seen`: the memories
    the cache held when the unit began, as this agent had read them (None: not read; a
    change another agent made is then never taken for this one's view)."""
    memories: dict[str, None] = {}
    locations: dict[int, None] = {}
    deleted_here: set[str] = set()

    def known(entry_id: str) -> MemoryEntry | None:
        """What this agent knows of the memory: its cache, when it had read it or this
        unit changed it already; else nothing."""
        if entry_id in memories or seen.get(entry_id) is not None:
            return working.cache.read_now(entry_id)
        return None

    for op in ops:
        if isinstance(op, AddOp):
            _add(conn, working, op.entry, retried=attempt > 0)
            memories[op.entry.id] = None
            entry = op.entry
            at = entry.location_id if entry.scope is MemoryScope.LOCATION else None
            if at is not None and _ensure_location(conn, working, at, entry.location_name):
                locations[at] = None
        elif isinstance(op, UpdateOp):
            seq, current = _lock_row(conn, op.entry.id, "update")
            merged = merge(known(op.entry.id), current, op.entry)
            _store(conn, working, merged, seq)
            memories[op.entry.id] = None
        elif isinstance(op, SupersedeOp):
            _supersede(conn, working, op, known(op.old_id))
            memories[op.old_id] = None
        elif isinstance(op, DeleteOp):
            deleted = conn.execute(
                "DELETE FROM cairn_memories WHERE id = %s", (op.entry_id,)
            ).rowcount
            held = op.entry_id in seen or op.entry_id in deleted_here
            if not deleted and not held:
                raise MemoryNotFoundError(f"no memory with id {op.entry_id!r} to delete")
            working.drop(op.entry_id)  # gone, whether we or another agent deleted it
            deleted_here.add(op.entry_id)
            memories[op.entry_id] = None
        elif isinstance(op, VisitOp):
            first = [] if op.episode is None else [op.episode]
            row = conn.execute(
                VISIT,
                {
                    "id": op.location_id,
                    "name": encode_text(op.name),
                    "first": first,
                    "episode": op.episode,
                },
            ).fetchone()
            assert row is not None  # an upsert with RETURNING always returns its row
            working.set_location(op.location_id, record(row))
            locations[op.location_id] = None
    return list(memories), list(locations)


def _add(conn: Conn, working: Working, entry: MemoryEntry, *, retried: bool) -> None:
    row = conn.execute(INSERT, (entry.id, *values(entry))).fetchone()
    if row is None:
        stored = conn.execute(
            "SELECT seq, entry FROM cairn_memories WHERE id = %s", (entry.id,)
        ).fetchone()
        # a retried unit of work whose first attempt did commit (the connection was lost
        # before the answer came back) finds its own memory: that is not a conflict
        if not (retried and stored and stored[1] == entry.model_dump_json()):
            raise StoreError(f"memory id {entry.id!r} already exists")
        row = stored
    working.put(entry, int(row[0]))


def _ensure_location(conn: Conn, working: Working, location_id: int, name: str | None) -> bool:
    """Make sure the location has a record (named, if it had no name); return whether
    this wrote it."""
    row = conn.execute(
        f"SELECT {LOCATION} FROM cairn_locations WHERE id = %s", (location_id,)
    ).fetchone()
    wrote = False
    if row is None or (not row[1] and name):  # only then is there something to write
        new = conn.execute(ENSURE_LOCATION, (location_id, encode_text(name or "")))
        written = new.fetchone()
        wrote = written is not None
        row = written or row
    if row is None:  # inserted by another agent meanwhile, with a name already
        row = conn.execute(
            f"SELECT {LOCATION} FROM cairn_locations WHERE id = %s", (location_id,)
        ).fetchone()
    assert row is not None
    working.set_location(location_id, record(row))
    return wrote


def _lock_row(conn: Conn, entry_id: str, doing: str) -> tuple[int, MemoryEntry]:
    """The memory's row, locked for this unit."""
    return _locked(entry_id, doing, conn.execute(LOCK_ROW, (entry_id,)).fetchone())


def _locked(entry_id: str, doing: str, row: Any) -> tuple[int, MemoryEntry]:
    """The `seq` and memory of a row `LOCK_ROW` fetched (MemoryNotFoundError for none)."""
    if row is None:
        raise MemoryNotFoundError(f"no memory with id {entry_id!r} to {doing}")
    try:
        return int(row[0]), MemoryEntry.model_validate_json(row[1])
    except ValidationError as e:
        raise StoreError(f"memory {entry_id!r} is invalid in the database: {e}") from e


def _supersede(conn: Conn, working: Working, op: SupersedeOp, known: MemoryEntry | None) -> None:
    row = conn.execute(LOCK_ROW, (op.old_id,)).fetchone()
    if row is None and _archived(conn, op.old_id):
        # another agent superseded it and its episode's end moved it to the archive after
        # this agent read it: it has its successor already, theirs
        log.warning(
            "memory %s was superseded and archived by another agent meanwhile; not re-linking"
            " it to %s",
            op.old_id,
            op.new_id,
        )
        working.drop(op.old_id)
        return
    seq, current = _locked(op.old_id, "supersede", row)
    taken = (
        current.status is MemoryStatus.SUPERSEDED
        and current.superseded_by is not None
        and current.superseded_by != op.new_id
        and known != current
    )
    if taken:  # another agent superseded it first: one successor, theirs
        log.warning(
            "memory %s was superseded by %s meanwhile; not re-linking it to %s",
            op.old_id,
            current.superseded_by,
            op.new_id,
        )
        working.put(current, seq)
        return
    changed = current.model_copy(
        update={"status": MemoryStatus.SUPERSEDED, "superseded_by": op.new_id}
    )
    _store(conn, working, changed, seq)


def _archived(conn: Conn, entry_id: str) -> bool:
    """Whether the archive holds the memory."""
    found = conn.execute("SELECT 1 FROM cairn_archive WHERE id = %s", (entry_id,)).fetchone()
    return found is not None


def _store(conn: Conn, working: Working, entry: MemoryEntry, seq: int) -> None:
    conn.execute(UPDATE, (*values(entry), entry.id))
    working.put(entry, seq)
