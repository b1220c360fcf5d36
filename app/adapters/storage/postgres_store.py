"""PostgresMemoryStore: one memory space in a PostgreSQL database, shared by many agents.

A unit of work is one transaction of per-row writes. The database decides every write: an
update or supersession locks its row (`SELECT ... FOR UPDATE`) and merges with what others
committed meanwhile, visits are counted in SQL, an unknown id fails the unit of work. The
commit then NOTIFYs the changed ids on the space's channel; other store objects fetch just
those rows into their caches before their next read.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError

from cairn.adapters.storage.archived_rows import archived_entries
from cairn.adapters.storage.cached_store import CachedStore
from cairn.adapters.storage.gc_pause import gc_paused
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.adapters.storage.memory_index import IndexRow, MemoryIndex, entry_row, index_row
from cairn.adapters.storage.postgres_link import Changes, PostgresLink, notify_payloads
from cairn.adapters.storage.postgres_rows import (
    INDEX_COLUMNS,
    LOCATION,
    Working,
    record,
)
from cairn.adapters.storage.postgres_schema import decode_text
from cairn.adapters.storage.postgres_writes import Conn, write_all
from cairn.adapters.storage.store_ops import (
    StoreOp,
    targets,
    visits_only,
)
from cairn.errors import ConfigError, StoreError
from cairn.models.memory import (
    MemoryEntry,
    MemoryStatus,
    ParseProblem,
)

log = logging.getLogger(__name__)


_ARCHIVE = (
    "WITH moved AS (DELETE FROM cairn_memories WHERE status = %s"
    " RETURNING seq, id, location_id, entry)"
    " INSERT INTO cairn_archive (id, location_id, entry)"
    " SELECT id, location_id, entry FROM moved ORDER BY seq"
    " ON CONFLICT (space, id) DO UPDATE SET location_id = excluded.location_id,"
    " entry = excluded.entry, archived_at = now()"
    " RETURNING id"
)
"""Move the space's memories of a status to the archive, in store order (a memory archived
before under the same id, later re-added and superseded again, is replaced); their ids."""


_NOT_LIVE = (
    "WHERE NOT EXISTS (SELECT 1 FROM cairn_memories m WHERE m.space = a.space AND m.id = a.id)"
)
"""An archived memory a restore brought back (`RestoreGame`) is live again: not the archive's."""


class PostgresMemoryStore(CachedStore):
    """Memories of one space in PostgreSQL; any number of processes and machines may share it.

    Reads come from the in-process cache, kept current by LISTEN/NOTIFY (changed rows only;
    everything is read again only after a lost connection). A read first waits for the
    notifications of every commit that returned before it (one round trip; once per turn in a
    `steady` block). Use one store object from one thread at a time. Connect as an ordinary
    role: superusers skip row-level security.
    """

    def __init__(
        self,
        url: str | SecretStr | None,
        *,
        space: str,
        statement_timeout: float = 10.0,
        connect_timeout: float = 5.0,
        reconnect_timeout: float = 30.0,
    ) -> None:
        super().__init__()
        raw = url.get_secret_value() if isinstance(url, SecretStr) else url
        if not raw:
            raise ConfigError("database_url: required by the postgres store (CAIRN_DATABASE_URL)")
        if not space:
            raise ConfigError("memory_space: must not be empty")
        self._space = space
        self._token = secrets.token_hex(8)
        self._link = PostgresLink(
            raw,
            space,
            token=self._token,
            statement_timeout=statement_timeout,
            connect_timeout=connect_timeout,
            reconnect_timeout=reconnect_timeout,
        )
        self._seqs: dict[str, int] = {}
        self._pending: Changes | None = Changes()
        self._bad: dict[str, ParseProblem] = {}
        self.commits = 0
        """Units of work committed by this object."""
        self.loads = 0
        """Times everything was read (opening, `reload`, after a lost connection)."""
        self.fetched = 0
        """Rows read because a notification named them."""
        self._link.open()
        with self._lock:
            self._load()

    @property
    def path(self) -> Path:
        return Path(f"{self._link.where}#{self._space}")

    @property
    def space(self) -> str:
        """The memory space this store object reads and writes."""
        return self._space

    # -- reading -----------------------------------------------------------------------------

    def _live(self) -> None:
        """Raise when closed; in a forked child, open this process's own connections."""
        if self._link.forked():
            self._link.open()
            self._load()
        elif self._link.closed:
            raise StoreError(f"{self._link.where}: the store is closed")

    def _refresh(self) -> None:
        self._live()
        self._gather(sync=True)  # every commit that returned before this read is named
        pending, self._pending = self._pending, Changes()
        if pending is None:
            self._load()
        elif pending:
            self._fetch(pending)

    def _gather(self, *, sync: bool = False) -> None:
        """Take in the notifications that arrived (a commit does too, so they never pile up
        unread); the rows they name are read on the next read. None: read everything.
        `sync`: wait for those of every commit that returned before now (`PostgresLink.poll`)."""
        changes = self._link.poll(sync=sync)
        if changes is None or self._pending is None:
            self._pending = None
        else:
            self._pending.memories |= changes.memories
            self._pending.locations |= changes.locations

    def _load(self) -> None:
        """Read the space's index (after draining notifications: the read covers them): each
        memory is read from its row when first asked for (`_RowSource`); rows written before
        `created_ts` existed are read and validated now."""
        self._link.poll()  # whatever it names (or missed, if it reconnected) is read below
        self._pending = Changes()
        rows, older, locations = self._link.run(self._read_index, "read")
        self._bad.clear()
        with gc_paused():  # every object made here stays: a collection would find nothing
            checked: dict[str, MemoryEntry] = {}
            for seq, row_id, data in older:
                entry = self._parse(seq, row_id, data)
                if entry is not None:
                    checked[row_id] = entry
            index, seqs = _index(rows, checked)
            cache = MemoryCache.lazy(index, {}, _RowSource(self, checked), current=True)
        cache.locations.update({row[0]: record(row) for row in locations})
        self._cache, self._seqs = cache, seqs
        self._problems = list(self._bad.values())
        self.loads += 1
        if checked:
            self._fill_created_ts(checked)

    def _fill_created_ts(self, checked: dict[str, MemoryEntry]) -> None:
        """Give the rows written before `created_ts` existed their value, so that the next
        open reads their index columns alone. Only a speed-up: a refusal (a read-only role)
        is logged and the store goes on."""
        ids = list(checked)
        times = [checked[i].created_at.timestamp() for i in ids]

        def fill(conn: Conn, attempt: int) -> None:
            with conn.transaction():
                conn.execute(
                    "UPDATE cairn_memories AS m SET created_ts = v.ts FROM"
                    " unnest(%s::text[], %s::float8[]) AS v(id, ts)"
                    " WHERE m.id = v.id AND m.created_ts IS NULL",
                    (ids, times),
                )

        try:
            self._link.run(fill, "fill created_ts")
        except StoreError as e:
            log.info("%s: rows without created_ts left as they are: %s", self.path, e)

    @staticmethod
    def _read_index(conn: Conn, attempt: int) -> tuple[list[Any], list[Any], list[Any]]:
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            rows = conn.execute(
                f"SELECT {INDEX_COLUMNS} FROM cairn_memories ORDER BY seq"
            ).fetchall()
            older = conn.execute(
                "SELECT seq, id, entry FROM cairn_memories WHERE created_ts IS NULL ORDER BY seq"
            ).fetchall()
            locations = conn.execute(f"SELECT {LOCATION} FROM cairn_locations").fetchall()
        return rows, older, sorted(locations)

    def _read_rows(self, ids: list[str] | None) -> dict[str, MemoryEntry | None]:
        """These memories (None: every one) as their rows hold them now, validated (None for
        a row that does not validate, reported; and for a row gone meanwhile)."""

        def read(conn: Conn, attempt: int) -> list[Any]:
            if ids is None:
                return conn.execute("SELECT seq, id, entry FROM cairn_memories").fetchall()
            return conn.execute(
                "SELECT seq, id, entry FROM cairn_memories WHERE id = ANY (%s)", (ids,)
            ).fetchall()

        rows = self._link.run(read, "read memories")
        found: dict[str, MemoryEntry | None] = dict.fromkeys(ids or ())
        with gc_paused():
            for seq, row_id, data in rows:
                found[row_id] = self._parse(seq, row_id, data)
        self._problems = list(self._bad.values())
        return found

    def _parse(self, seq: int, row_id: str, data: str) -> MemoryEntry | None:
        self._bad.pop(row_id, None)
        try:
            entry = MemoryEntry.model_validate_json(data)
        except ValidationError as e:
            message = f"memory {row_id!r} is invalid: {e}"
        else:
            if entry.id == row_id:
                return entry
            message = f"row id {row_id!r} != entry id {entry.id!r}"
        self._bad[row_id] = ParseProblem(path=str(self.path), line=seq, message=message)
        return None

    def _fetch(self, changes: Changes) -> None:
        """Bring just the rows other agents changed into the cache."""
        ids, locs = sorted(changes.memories), sorted(changes.locations)

        def read(conn: Conn, attempt: int) -> tuple[list[Any], list[Any]]:
            memories = (
                conn.execute(
                    "SELECT seq, id, entry FROM cairn_memories WHERE id = ANY (%s) ORDER BY seq",
                    (ids,),
                ).fetchall()
                if ids
                else []
            )
            if not locs:
                return memories, []
            locations = conn.execute(
                f"SELECT {LOCATION} FROM cairn_locations WHERE id = ANY (%s)", (locs,)
            ).fetchall()
            return memories, locations

        memories, locations = self._link.run(read, "read changes")
        # in place: a fetch costs the rows it brings, not the space's size (no undo log: one
        # would read the memories not read yet, to keep them; a fetch that fails has the next
        # read take everything again instead)
        working = Working(self._cache, self._seqs)
        found = set()
        try:
            for seq, row_id, data in memories:
                found.add(row_id)
                entry = self._parse(seq, row_id, data)
                if entry is None:
                    working.drop(row_id)
                else:
                    working.put(entry, seq)
            for gone in set(ids) - found:
                working.drop(gone)
                self._bad.pop(gone, None)
            for row in locations:
                working.set_location(row[0], record(row))
        except BaseException:
            self._pending = None  # what it named is read again, with everything, next time
            raise
        self._problems = list(self._bad.values())
        self.fetched += len(memories) + len(locations)

    def reload(self) -> None:
        self._outside_unit("reload")
        with self._lock:
            self._live()
            self._load()

    # -- writing -----------------------------------------------------------------------------

    def _commit(self, ops: Sequence[StoreOp]) -> MemoryCache:
        self._live()
        self._gather()
        # not refreshed first: the updates were made from this view, and what others changed
        # since is merged row by row (`merge`); their notifications are read on the next read
        cache = self._cache
        lazy = visits_only(ops)
        changed = [i for op in ops for i in targets(op)]
        # what this agent knew of each memory it holds (None: not read), taken before the
        # prefetch (which reads the rows as they are now, and may find one gone meanwhile)
        seen = {i: cache.read_now(i) for i in changed if i in cache}
        cache.prefetch(changed)  # read before the transaction, never inside it

        def work(conn: Conn, attempt: int) -> Working:
            # the cache changes in place as the rows are written; an attempt that fails
            # (or whose commit does not return) takes its changes back before the next one
            working = Working(cache, self._seqs, cache.undoable())
            try:
                with conn.transaction():
                    if lazy:  # the server's next synced commit flushes it (`visits_only`)
                        conn.execute("SET LOCAL synchronous_commit = off")
                    self._notify(conn, *write_all(conn, working, ops, attempt, seen))
            except BaseException:
                working.undo()
                raise
            return working

        self._link.run(work, "commit")
        self.commits += 1
        return cache

    def _notify(self, conn: Conn, memories: list[str], locations: list[int]) -> None:
        """Name the changed rows to the space's other agents (sent when the transaction
        commits)."""
        for payload in notify_payloads(self._token, memories, locations):
            conn.execute("SELECT pg_notify(%s, %s)", (self._link.channel, payload))

    # -- hot and cold ------------------------------------------------------------------------

    def checkpoint(self) -> None:
        """The end of an episode: move the space's SUPERSEDED memories to `cairn_archive`, in
        one transaction that names them to the other agents (their caches drop them, as rows
        gone; an update of one then finds no memory, as with the other stores' archives)."""
        self._outside_unit("checkpoint")
        with self._lock:
            self._live()
            self._gather()

            def move(conn: Conn, attempt: int) -> list[str]:
                with conn.transaction():
                    moved = conn.execute(_ARCHIVE, (MemoryStatus.SUPERSEDED.value,)).fetchall()
                    ids = [row[0] for row in moved]
                    if ids:
                        self._notify(conn, ids, [])
                return ids

            ids = self._link.run(move, "archive")
            working = Working(self._cache, self._seqs)
            for entry_id in ids:
                working.drop(entry_id)
                self._bad.pop(entry_id, None)
            self._problems = list(self._bad.values())

    def archived(self, *, newest: int | None = None) -> list[MemoryEntry]:
        """The archive's memories, less those a restore brought back (live again)."""

        def read(conn: Conn, attempt: int) -> list[Any]:
            if newest is None:
                return conn.execute(
                    f"SELECT entry FROM cairn_archive a {_NOT_LIVE} ORDER BY seq"
                ).fetchall()
            return conn.execute(
                f"SELECT entry FROM (SELECT seq, entry FROM cairn_archive a {_NOT_LIVE}"
                " ORDER BY seq DESC LIMIT %s) AS newest ORDER BY seq",
                (max(0, newest),),
            ).fetchall()

        with self._lock:
            self._live()
            rows = self._link.run(read, "read the archive")
        return archived_entries((data for (data,) in rows), self.path)

    def archived_count(self) -> int:
        def read(conn: Conn, attempt: int) -> int:
            row = conn.execute("SELECT count(*) FROM cairn_archive").fetchone()
            return int(row[0]) if row else 0

        with self._lock:
            self._live()
            return self._link.run(read, "read the archive")

    def close(self) -> None:
        with self._lock:
            self._link.close()


def _index(rows: list[Any], checked: dict[str, MemoryEntry]) -> tuple[MemoryIndex, dict[str, int]]:
    """The index of the rows' columns (`INDEX_COLUMNS`, in `seq` order) and each row's seq; a
    row without `created_ts` is indexed from its validated memory in `checked` (left out when
    it did not validate)."""
    index_rows: list[IndexRow] = []
    seqs: dict[str, int] = {}
    for seq, row_id, scope, status, location_id, importance, npc_ids, ts in rows:
        if ts is None:
            entry = checked.get(row_id)
            if entry is None:
                continue
            index_rows.append(entry_row(entry, seq))
        else:
            names = [decode_text(npc) for npc in npc_ids]
            index_rows.append(
                index_row(seq, row_id, scope, status, location_id, importance, names, ts)
            )
        seqs[row_id] = seq
    return MemoryIndex.from_rows(index_rows), seqs


class _RowSource:
    """Reads a lazily loaded memory from its row (`LazySource`): the row as it is now. A row
    another agent changed since the load is read in its new version; its notification, read
    before the next read, brings the index in step (`_fetch`)."""

    def __init__(self, store: PostgresMemoryStore, checked: dict[str, MemoryEntry]) -> None:
        self._store = store
        self._checked = checked
        """Rows validated when the store opened (no `created_ts`): handed out once."""

    def load(self, entry_id: str) -> MemoryEntry | None:
        return self.load_many([entry_id])[entry_id]

    def load_many(self, ids: list[str]) -> dict[str, MemoryEntry | None]:
        found: dict[str, MemoryEntry | None] = {
            i: self._checked.pop(i) for i in ids if i in self._checked
        }
        rest = [i for i in ids if i not in found]
        if rest:
            found.update(self._store._read_rows(rest))
        return found

    def load_all(self) -> dict[str, MemoryEntry]:
        read = self._store._read_rows(None)
        read.update(self._checked)
        self._checked = {}
        return {i: e for i, e in read.items() if e is not None}
