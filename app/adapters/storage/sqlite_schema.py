"""The SQLite store's schema: tables, statements, the load's index, upgrades of older files."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from pydantic import ValidationError

from cairn.errors import StoreError
from cairn.models.memory import VISIBLE_STATUSES, MemoryEntry

SCHEMA_VERSION = 5
"""Kept in `PRAGMA user_version`; a file with a newer version is refused. 2 added the archive
(`memories_archive`), 3 the columns a load builds its index from (`npcs`, `created_ts`), 4 the
index that keeps them in store order (`memories_store_order`, in place of 3's
`memories_columns`), 5 dropped the indexes no query of cairn's uses (`_DROPPED_INDEXES`);
every statement of `_SCHEMA` is idempotent and `create_schema` adds the columns and indexes
and drops the old ones, so an older file is brought up to date."""

# `memories.entry` (pydantic JSON of the whole MemoryEntry) is the source of truth; the other
# columns are copies kept for queries and indices. `seq` is the store order (an update keeps it).
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS memories (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        scope TEXT NOT NULL,
        category TEXT NOT NULL,
        status TEXT NOT NULL,
        location_id INTEGER,
        importance INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        entry TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS memory_npcs (
        memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
        npc_id TEXT NOT NULL,
        PRIMARY KEY (memory_id, npc_id)
    )""",
    """CREATE TABLE IF NOT EXISTS locations (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        visits INTEGER NOT NULL,
        episodes TEXT NOT NULL
    )""",
    # SUPERSEDED memories move here when an episode ends: kept, never loaded for play
    """CREATE TABLE IF NOT EXISTS memories_archive (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        location_id INTEGER,
        archived_at TEXT NOT NULL,
        entry TEXT NOT NULL
    )""",
)
_DROPPED_INDEXES = (
    "memories_columns",
    "memories_by_location",
    "memories_by_status",
    "memories_by_importance",
    "memory_npcs_by_npc",
)
"""Indexes older schemas made that no query of cairn's uses (reads come from the cache, a load
from `memories_store_order`, an episode's archive scans once): each was a B-tree page more to
change and sync at every commit (dropping them took the write p95 at 10,000 memories from
~0.42 to ~0.35 ms here). The tables keep every column, for a person's own queries."""

UPDATE_MEMORY = (
    "UPDATE memories SET scope = ?, category = ?, status = ?, location_id = ?, importance = ?,"
    " created_at = ?, entry = ?, npcs = ?, created_ts = ? WHERE id = ?"
)
INSERT_MEMORY = (
    "INSERT INTO memories (id, scope, category, status, location_id, importance, created_at,"
    " entry, npcs, created_ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_ADDED_COLUMNS = (("npcs", "TEXT"), ("created_ts", "REAL"))
"""Schema 3's columns: the NPC ids in order (JSON) and created_at as a POSIX timestamp. A row
without them (written by hand, or by an older cairn) is read and validated in full on load."""
_RANK_SQL = "CASE scope WHEN 'location' THEN 0 WHEN 'npc' THEN 1 ELSE 2 END"
_KEY_SQL = (
    f"CASE {_RANK_SQL} WHEN 0 THEN coalesce(location_id, 0)"
    " WHEN 1 THEN coalesce(json_extract(npcs, '$[0]'), 0) ELSE 0 END"
)
_COLUMNS_INDEX = (
    f"CREATE INDEX IF NOT EXISTS memories_store_order ON memories({_RANK_SQL}, {_KEY_SQL}, seq,"
    " id, scope, status, location_id, importance, created_ts, npcs)"
)
"""What a load reads, in an index of its own, in store order (see `memory_index.OrderKey`: the
section's rank and key, then seq): its scan neither sorts nor touches the entries' pages."""
COLUMNS_QUERY = (
    "SELECT count(*), json_group_array(id), group_concat(rank), group_concat(seq),"
    " json_group_array(key), json_group_array(location_id), '[' || group_concat(npcs) || ']',"
    " json_group_array(hidden), group_concat(CASE WHEN ts = CAST(ts AS INTEGER) THEN CAST(ts AS"
    " INTEGER) ELSE printf('%.17g', ts) END) FROM ("
    f"SELECT {_RANK_SQL} AS rank, {_KEY_SQL} AS key, seq, id,"
    " location_id, npcs, CASE WHEN status IN ({visible}) THEN -importance END AS hidden,"
    " -created_ts AS ts FROM memories INDEXED BY memories_store_order"
    f" ORDER BY {_RANK_SQL}, {_KEY_SQL}, seq)"
)
"""A load's index as columns, each one value (JSON, or numbers joined by commas: SQLite builds
them, one decode each here, no Python per row): the rows in store order (see
`memory_index.OrderKey`): ids, section ranks, seqs, section keys (the room's id, the first
NPC's), locations, NPC ids (each row's JSON array, joined: rows whose column is not an array
take the validating path), -importance (null when not visible) and -created_at (exact: whole
seconds, as cairn stamps them, as integers, which SQLite prints and orjson reads faster;
others in 17 digits)."""
_VISIBLE = frozenset(status.value for status in VISIBLE_STATUSES)
COLUMNS_QUERY = COLUMNS_QUERY.format(visible=", ".join(f"'{v}'" for v in sorted(_VISIBLE)))
_NOT_LIVE = "WHERE id NOT IN (SELECT id FROM memories)"
"""An archived memory a restore brought back (`RestoreGame`) is live again: not the archive's
(its row stays, replaced if it is archived again)."""
ARCHIVED = f"SELECT entry FROM memories_archive {_NOT_LIVE} ORDER BY seq"
NEWEST_ARCHIVED = (
    f"SELECT entry FROM (SELECT seq, entry FROM memories_archive {_NOT_LIVE} ORDER BY seq DESC"
    " LIMIT ?) ORDER BY seq"
)
UPSERT_LOCATION = (
    "INSERT INTO locations (id, name, visits, episodes) VALUES (?, ?, ?, ?) ON CONFLICT(id)"
    " DO UPDATE SET name = excluded.name, visits = excluded.visits, episodes = excluded.episodes"
)


def check_version(conn: sqlite3.Connection, path: Path) -> int:
    """The file's schema version; StoreError when it is newer than this cairn's."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: schema version {version} is newer than this cairn supports"
            f" (version {SCHEMA_VERSION}); upgrade cairn to open this file"
        )
    return version


def use_wal(conn: sqlite3.Connection, path: Path, busy_timeout_ms: int) -> None:
    """Switch the file to WAL journal mode (waiting up to `busy_timeout_ms` for other
    connections); StoreError when it cannot be."""
    if conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
        return
    deadline = time.monotonic() + busy_timeout_ms / 1000
    while True:  # switching to WAL may not wait on the busy handler: retry until timeout
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as e:
            if not is_locked(e) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)
    if mode != "wal":
        raise StoreError(f"{path}: could not switch to WAL journal mode (got {mode})")


def create_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Create the tables, or bring an older file's up to date (one transaction)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if check_version(conn, path) < SCHEMA_VERSION:
            for statement in _SCHEMA:
                conn.execute(statement)
            have = {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
            for name, kind in _ADDED_COLUMNS:
                if name not in have:
                    conn.execute(f"ALTER TABLE memories ADD COLUMN {name} {kind}")
            _fill_added_columns(conn)
            for name in _DROPPED_INDEXES:
                conn.execute(f"DROP INDEX IF EXISTS {name}")
            conn.execute(_COLUMNS_INDEX)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def _fill_added_columns(conn: sqlite3.Connection) -> None:
    """Give rows an older cairn wrote the columns schema 3 added (once, when upgrading)."""
    rows = conn.execute(
        "SELECT id, entry FROM memories WHERE npcs IS NULL OR created_ts IS NULL"
    ).fetchall()
    for row_id, data in rows:
        try:
            entry = MemoryEntry.model_validate_json(data)
        except ValidationError:
            continue  # reported when the store loads
        conn.execute(
            "UPDATE memories SET npcs = ?, created_ts = ? WHERE id = ?",
            (json.dumps(entry.npc_ids), entry.created_at.timestamp(), row_id),
        )


def is_locked(error: sqlite3.Error) -> bool:
    """Whether SQLite refused for a lock another connection holds."""
    code = getattr(error, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in str(error)
