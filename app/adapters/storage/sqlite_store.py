"""SqliteMemoryStore: one WAL SQLite file; rows hold the full entry as JSON plus index columns."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from cairn.adapters.files import ensure_folder
from cairn.adapters.storage.archived_rows import archived_entries
from cairn.adapters.storage.cached_store import CachedStore
from cairn.adapters.storage.gc_pause import gc_paused
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.adapters.storage.memory_index import IndexRow, MemoryIndex, entry_row, index_row
from cairn.adapters.storage.sqlite_rows import columns_index, npc_column, row_columns
from cairn.adapters.storage.sqlite_schema import (
    ARCHIVED,
    INSERT_MEMORY,
    NEWEST_ARCHIVED,
    UPDATE_MEMORY,
    UPSERT_LOCATION,
    check_version,
    create_schema,
    is_locked,
    use_wal,
)
from cairn.adapters.storage.store_ops import (
    AddOp,
    DeleteOp,
    StoreOp,
    SupersedeOp,
    UpdateOp,
    VisitOp,
    visits_only,
)
from cairn.errors import MemoryNotFoundError, StoreError, StoreLockedError
from cairn.interfaces.clock import IClock
from cairn.models.memory import (
    LocationRecord,
    MemoryEntry,
    MemoryStatus,
    ParseProblem,
    utc_now,
)

log = logging.getLogger(__name__)

# Connections inherited through fork() must never be closed by the child (that would release
# or checkpoint on behalf of the parent); they are parked here and a fresh one is opened.
_INHERITED: list[sqlite3.Connection] = []


def _data_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA data_version").fetchone()
    return int(row[0])


def _read_only_note(path: Path) -> str:
    """' (the folder is on a read-only file system)' when it is, else ''."""
    try:
        read_only = bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return ""
    return " (the folder is on a read-only file system)" if read_only else ""


class SqliteMemoryStore(CachedStore):
    """Memories in SQLite: durable (WAL, synchronous=FULL) and safe for many processes.

    Reads come from the in-process cache, refreshed whenever `PRAGMA data_version` shows that
    another connection has committed. Each unit of work is one `BEGIN IMMEDIATE` transaction.
    Use one store object from one thread at a time; any number of processes may share the file.
    """

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout_ms: int = 30000,
        clock: IClock | None = None,
        create: bool = True,
    ) -> None:
        """`create=False` (the reading commands): a missing file is read as an empty store
        held in memory and refusing writes; nothing is made on disk, not even the folder."""
        super().__init__()
        self._now = utc_now if clock is None else clock.now
        """The time archived rows carry: the container's clock (a replay's is its own)."""
        self._path = Path(path)
        self._busy_timeout_ms = int(busy_timeout_ms)
        self._data_version: int | None = None
        self._stored_records: dict[int, tuple[str, int, str]] = {}
        """The location rows as this store last read or wrote them (name, visits, episodes):
        a unit of work writes only the records it changed."""
        self._unsynced = False
        """Units that only counted visits were committed without syncing the WAL since the
        last unit that synced it (`visits_only`)."""
        self._pid = os.getpid()
        self._absent = not create and not self._path.exists()
        """No store at `path` and none to be made: an empty one in memory stands in."""
        self._conn: sqlite3.Connection | None = self._open()
        with self._lock:
            self._refresh()

    @property
    def path(self) -> Path:
        return self._path

    # -- connection and schema -------------------------------------------------------------

    @contextmanager
    def _sql_errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as e:
            if is_locked(e):
                raise StoreLockedError(
                    f"{self._path}: {doing}: database is locked (waited {self._busy_timeout_ms} ms)"
                ) from e
            if self._absent:
                raise StoreError(f"{self._path}: {doing}: no such store (nothing written)") from e
            raise StoreError(f"{self._path}: {doing}: {e}{_read_only_note(self._path)}") from e

    def _open(self) -> sqlite3.Connection:
        if self._absent:
            return self._open_absent()
        ensure_folder(self._path.parent)  # as the markdown store does
        with self._sql_errors("open"):
            conn = sqlite3.connect(
                self._path,
                timeout=self._busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
                conn.execute("PRAGMA foreign_keys = ON")
                conn.execute("PRAGMA synchronous = FULL")
                check_version(conn, self._path)
                use_wal(conn, self._path, self._busy_timeout_ms)
                create_schema(conn, self._path)
            except BaseException:
                conn.close()
                raise
        return conn

    def _open_absent(self) -> sqlite3.Connection:
        """An empty store in memory, read-only once its schema is made (a write is an error
        naming the missing file, never a file made on disk)."""
        with self._sql_errors("open"):
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            create_schema(conn, self._path)
            conn.execute("PRAGMA query_only = ON")
        return conn

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"{self._path}: the store is closed")
        if os.getpid() != self._pid:
            _INHERITED.append(self._conn)
            self._pid = os.getpid()
            self._conn = None
            self._conn = self._open()
            self._data_version = None
        return self._conn

    # -- loading -----------------------------------------------------------------------------

    def _refresh(self) -> None:
        """Re-read everything when another connection has committed since the last look."""
        conn = self._connection()
        with self._sql_errors("read"):
            if _data_version(conn) != self._data_version:
                self._load(conn)

    def _load(self, conn: sqlite3.Connection) -> None:
        with gc_paused():
            self._load_rows(conn)

    def _load_rows(self, conn: sqlite3.Connection) -> None:
        """Build the index from the rows' columns; each memory is read (and validated) from
        its row when first asked for (a row that does not validate is reported then, and left
        out). Rows cairn did not write whole (no `created_ts`: by hand, or an older cairn) are
        validated now."""
        own_snapshot = not conn.in_transaction
        if own_snapshot:
            conn.execute("BEGIN")
        try:
            version = _data_version(conn)
            problems: list[ParseProblem] = []
            index = columns_index(conn)
            if index is not None:
                cache = MemoryCache.lazy(index, {}, _RowSource(self, conn, {}))
                self._load_locations(conn, cache, problems)
                self._cache, self._problems, self._data_version = cache, problems, version
                return
            rows: list[IndexRow] = []
            checked: dict[str, MemoryEntry] = {}
            for seq, row_id, scope, status, loc, importance, ts, npcs in conn.execute(
                "SELECT seq, id, scope, status, location_id, importance, created_ts, npcs"
                " FROM memories INDEXED BY memories_store_order"
            ):
                names = npc_column(npcs)
                if ts is None or names is None:
                    entry = self._checked_row(conn, seq, row_id, problems)
                    if entry is not None:
                        checked[row_id] = entry
                        rows.append(entry_row(entry, seq))
                    continue
                rows.append(index_row(seq, row_id, scope, status, loc, importance, names, ts))
            index = MemoryIndex.from_rows(rows)
            cache = MemoryCache.lazy(index, {}, _RowSource(self, conn, checked))
            self._load_locations(conn, cache, problems)
        finally:
            if own_snapshot:
                conn.execute("COMMIT")
        self._cache, self._problems, self._data_version = cache, problems, version

    def _load_locations(
        self, conn: sqlite3.Connection, cache: MemoryCache, problems: list[ParseProblem]
    ) -> None:
        self._stored_records = {}
        for loc_id, name, visits, episodes in conn.execute(
            "SELECT id, name, visits, episodes FROM locations ORDER BY id"
        ):
            try:
                cache.locations[loc_id] = LocationRecord(
                    id=loc_id, name=name, visits=visits, episodes=json.loads(episodes)
                )
                self._stored_records[loc_id] = (name, visits, episodes)
            except (ValidationError, ValueError, TypeError) as e:
                problems.append(self._problem(loc_id, f"location {loc_id} is invalid: {e}"))

    def _checked_row(
        self, conn: sqlite3.Connection, seq: int, row_id: str, problems: list[ParseProblem]
    ) -> MemoryEntry | None:
        """A row read and validated in full (None, with a problem, when it is not a memory)."""
        (data,) = conn.execute("SELECT entry FROM memories WHERE seq = ?", (seq,)).fetchone()
        return self._validated(seq, row_id, data, problems)

    def _validated(
        self, seq: int, row_id: str, data: str, problems: list[ParseProblem]
    ) -> MemoryEntry | None:
        """The memory a row holds, or None with a problem naming the row."""
        try:
            entry = MemoryEntry.model_validate_json(data)
        except ValidationError as e:
            problems.append(self._problem(seq, f"memory {row_id!r} is invalid: {e}"))
            return None
        if entry.id != row_id:
            problems.append(self._problem(seq, f"row id {row_id!r} != entry id"))
            return None
        return entry

    def _problem(self, line: int, message: str) -> ParseProblem:
        return ParseProblem(path=str(self._path), line=line, message=message)

    def reload(self) -> None:
        self._outside_unit("reload")
        with self._lock, self._sql_errors("reload"):
            self._load(self._connection())

    # -- reads (kept fresh) -------------------------------------------------------------------

    # -- writes -------------------------------------------------------------------------------

    def _commit(self, ops: Sequence[StoreOp]) -> MemoryCache:
        conn = self._connection()
        lazy = visits_only(ops)  # committed without waiting for the disk (`visits_only`)
        with self._sql_errors("commit"):
            if lazy:
                conn.execute("PRAGMA synchronous = NORMAL")
            try:
                self._transact(conn, ops)
            finally:
                if lazy:
                    conn.execute("PRAGMA synchronous = FULL")
            self._unsynced = lazy  # (a synced commit syncs the WAL's earlier frames too)
        return self._cache

    def _transact(self, conn: sqlite3.Connection, ops: Sequence[StoreOp]) -> None:
        """One unit of work's transaction: the ops' rows and the location rows they changed."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            if _data_version(conn) != self._data_version:
                self._load(conn)
            cache = self._cache
            touched: set[int] = set()
            with cache.applying(ops):  # undone when the database refuses the unit of work
                for op in ops:
                    self._write(conn, cache, op, touched)
                written: dict[int, tuple[str, int, str]] = {}
                for loc_id in sorted(touched):
                    record = cache.locations[loc_id]
                    row = (record.name, record.visits, json.dumps(record.episodes))
                    if self._stored_records.get(loc_id) != row:  # else the row holds it
                        conn.execute(UPSERT_LOCATION, (loc_id, *row))
                        written[loc_id] = row
                conn.execute("COMMIT")
                self._stored_records.update(written)
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")

    def _sync(self, conn: sqlite3.Connection) -> None:
        """Make the visits that units committed without a sync durable: a checkpoint of the
        WAL syncs it first."""
        if self._unsynced:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self._unsynced = False

    def _write(
        self, conn: sqlite3.Connection, cache: MemoryCache, op: StoreOp, touched: set[int]
    ) -> None:
        """Write one op to the database (`cache` holds the unit of work's result: every op
        already applied, and validated)."""
        if isinstance(op, AddOp):
            entry = op.entry
            conn.execute(INSERT_MEMORY, (entry.id, *row_columns(entry)))
            self._write_npcs(conn, entry)
            if entry.location_id is not None and entry.location_id in cache.locations:
                touched.add(entry.location_id)
        elif isinstance(op, UpdateOp | SupersedeOp):
            found = cache.get(op.entry.id if isinstance(op, UpdateOp) else op.old_id)
            if found is None:
                return  # deleted by a later op of this unit of work
            entry = found
            if conn.execute(UPDATE_MEMORY, (*row_columns(entry), entry.id)).rowcount != 1:
                raise MemoryNotFoundError(f"no memory with id {entry.id!r} in {self._path}")
            if isinstance(op, UpdateOp):
                conn.execute("DELETE FROM memory_npcs WHERE memory_id = ?", (entry.id,))
                self._write_npcs(conn, entry)
        elif isinstance(op, DeleteOp):
            if conn.execute("DELETE FROM memories WHERE id = ?", (op.entry_id,)).rowcount != 1:
                raise MemoryNotFoundError(f"no memory with id {op.entry_id!r} in {self._path}")
        elif isinstance(op, VisitOp):
            touched.add(op.location_id)

    def checkpoint(self) -> None:
        """The end of an episode: move SUPERSEDED memories to `memories_archive`, in one
        transaction."""
        self._outside_unit("checkpoint")
        with self._lock:
            conn = self._connection()
            with self._sql_errors("archive"):
                self._sync(conn)
                conn.execute("BEGIN IMMEDIATE")
                try:
                    if _data_version(conn) != self._data_version:
                        self._load(conn)
                    ids = [
                        row[0]
                        for row in conn.execute(
                            "SELECT id FROM memories WHERE status = ? ORDER BY seq",
                            (MemoryStatus.SUPERSEDED.value,),
                        )
                    ]
                    if not ids:
                        return
                    conn.execute(
                        "INSERT OR REPLACE INTO memories_archive (id, location_id, archived_at,"
                        " entry) SELECT id, location_id, ?, entry FROM memories WHERE status = ?"
                        " ORDER BY seq",
                        (self._now().isoformat(), MemoryStatus.SUPERSEDED.value),
                    )
                    conn.execute(
                        "DELETE FROM memories WHERE status = ?", (MemoryStatus.SUPERSEDED.value,)
                    )
                    cache = self._cache
                    with cache.applying([DeleteOp(i) for i in ids if i in cache]):
                        conn.execute("COMMIT")
                finally:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")

    def archived(self, *, newest: int | None = None) -> list[MemoryEntry]:
        query, args = (ARCHIVED, ()) if newest is None else (NEWEST_ARCHIVED, (max(0, newest),))
        with self._lock:
            conn = self._connection()
            with self._sql_errors("read the archive"):
                rows = conn.execute(query, args).fetchall()
        return archived_entries((data for (data,) in rows), self._path)

    def archived_count(self) -> int:
        with self._lock:
            conn = self._connection()
            with self._sql_errors("read the archive"):
                (count,) = conn.execute("SELECT count(*) FROM memories_archive").fetchone()
        return int(count)

    @staticmethod
    def _write_npcs(conn: sqlite3.Connection, entry: MemoryEntry) -> None:
        if not entry.npc_ids:
            return  # (most memories: no statement at all)
        conn.executemany(
            "INSERT OR IGNORE INTO memory_npcs (memory_id, npc_id) VALUES (?, ?)",
            [(entry.id, npc) for npc in entry.npc_ids],
        )

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and os.getpid() == self._pid:
                with contextlib.suppress(sqlite3.Error):  # (the last connection's close does it)
                    self._sync(self._conn)
                self._conn.close()
            elif self._conn is not None:
                _INHERITED.append(self._conn)
            self._conn = None


class _RowSource:
    """Reads a memory from its row the first time a lazily loaded cache is asked for it."""

    def __init__(
        self, store: SqliteMemoryStore, conn: sqlite3.Connection, checked: dict[str, MemoryEntry]
    ) -> None:
        self._store = store
        self._conn = conn
        self._checked = checked

    def load(self, entry_id: str) -> MemoryEntry | None:
        return self.load_many([entry_id])[entry_id]

    def load_many(self, ids: list[str]) -> dict[str, MemoryEntry | None]:
        found: dict[str, MemoryEntry | None] = {}
        rows: dict[str, tuple[int, str]] = {}
        wanted = [i for i in ids if i not in self._checked]
        with self._store._sql_errors("read"):
            for at in range(0, len(wanted), 500):
                part = wanted[at : at + 500]
                marks = ", ".join("?" * len(part))
                for seq, entry_id, data in self._conn.execute(
                    f"SELECT seq, id, entry FROM memories WHERE id IN ({marks})", part
                ):
                    rows[entry_id] = (seq, data)
        for entry_id in ids:
            row = rows.get(entry_id)
            if row is None and entry_id not in self._checked:
                raise StoreError(f"{self._store.path}: memory {entry_id!r} is gone from its row")
            found[entry_id] = (
                self._checked.pop(entry_id)
                if row is None
                else self._store._validated(row[0], entry_id, row[1], self._store._problems)
            )
        return found

    def load_all(self) -> dict[str, MemoryEntry]:
        found = dict(self._checked)
        with self._store._sql_errors("read"):
            rows = self._conn.execute("SELECT id, entry FROM memories").fetchall()
        for entry_id, data in rows:
            if entry_id not in found:
                with contextlib.suppress(ValidationError):  # read one by one: named there
                    found[entry_id] = MemoryEntry.model_validate_json(data)
        return found
