"""The PostgreSQL store's schema: versioned migrations, applied once per database under a lock.

Every row belongs to a memory space (`space`). Row-level security, forced on the tables'
owner too, lets a connection see and write only the rows of the space in its `cairn.space`
setting; a row written without a space gets that setting. Superusers and roles with BYPASSRLS
skip row-level security: connect as an ordinary role.
"""

from __future__ import annotations

import json
from typing import Any

from cairn.errors import StoreError

SCHEMA_VERSION = 3
"""The newest schema this cairn knows; a database with a newer one is refused. 2 added the
archive (`cairn_archive`), where an episode's end moves SUPERSEDED memories; 3 the column
`created_ts` (a memory's `created_at` as seconds since the epoch), so that a store opens from
the index columns alone (rows written before it are validated when the store opens)."""

SPACE_SETTING = "cairn.space"
"""The per-connection setting naming the connection's memory space."""

_LOCK_KEY = 0x636169726E  # "cairn": one advisory lock serializes migrations
_SPACE = f"current_setting('{SPACE_SETTING}', true)"


def _space_policy(table: str) -> tuple[str, ...]:
    """Row-level security on `table`: a connection sees and writes its space's rows only."""
    return (
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY {table}_space ON {table}"
        f" USING (space = {_SPACE}) WITH CHECK (space = {_SPACE})",
    )


# `entry` (the whole MemoryEntry as JSON text: jsonb cannot hold a NUL character) is the source
# of truth; the other columns are copies kept for queries and indices. `seq` is the store order
# (an update keeps it). Location names and NPC ids are text as they are, unless they hold what
# PostgreSQL text cannot (see `encode_text`).
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        f"""CREATE TABLE cairn_memories (
            space text NOT NULL DEFAULT {_SPACE},
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text NOT NULL,
            scope text NOT NULL,
            category text NOT NULL,
            status text NOT NULL,
            location_id bigint,
            importance integer NOT NULL,
            npc_ids text[] NOT NULL,
            entry text NOT NULL,
            PRIMARY KEY (space, id)
        )""",
        "CREATE INDEX cairn_memories_order ON cairn_memories (space, seq)",
        "CREATE INDEX cairn_memories_location ON cairn_memories (space, location_id)",
        "CREATE INDEX cairn_memories_npcs ON cairn_memories USING gin (npc_ids)",
        f"""CREATE TABLE cairn_locations (
            space text NOT NULL DEFAULT {_SPACE},
            id bigint NOT NULL,
            name text NOT NULL,
            visits integer NOT NULL,
            episodes integer[] NOT NULL,
            PRIMARY KEY (space, id)
        )""",
        *_space_policy("cairn_memories"),
        *_space_policy("cairn_locations"),
    ),
    2: (
        f"""CREATE TABLE cairn_archive (
            space text NOT NULL DEFAULT {_SPACE},
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text NOT NULL,
            location_id bigint,
            archived_at timestamptz NOT NULL DEFAULT now(),
            entry text NOT NULL,
            PRIMARY KEY (space, id)
        )""",
        "CREATE INDEX cairn_archive_order ON cairn_archive (space, seq)",
        *_space_policy("cairn_archive"),
    ),
    3: ("ALTER TABLE cairn_memories ADD COLUMN created_ts double precision",),
}


ENCODED = "\ufffejson:"
"""Prefix of a text column holding a JSON string (U+FFFE is a noncharacter: no name has it)."""


def encode_text(value: str) -> str:
    """`value` as it is, or (when it holds a NUL, an unpaired surrogate or ENCODED's prefix,
    which PostgreSQL text cannot hold or would confuse) ENCODED + its JSON string."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return ENCODED + json.dumps(value)
    if "\x00" in value or value.startswith(ENCODED):
        return ENCODED + json.dumps(value)
    return value


def decode_text(value: str) -> str:
    """The inverse of `encode_text`."""
    return str(json.loads(value[len(ENCODED) :])) if value.startswith(ENCODED) else value


def migrate(conn: Any, where: str) -> int:
    """Bring the database up to SCHEMA_VERSION in one transaction (psycopg connection in
    autocommit mode); return the version found. A newer version is a StoreError."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS cairn_schema ("
            " one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)"
        )
        row = conn.execute("SELECT version FROM cairn_schema").fetchone()
        found = 0 if row is None else int(row[0])
        if found > SCHEMA_VERSION:
            raise StoreError(
                f"{where}: schema version {found} is newer than this cairn supports"
                f" (version {SCHEMA_VERSION}); upgrade cairn to use this database"
            )
        for version in range(found + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
        if found < SCHEMA_VERSION:
            conn.execute(
                "INSERT INTO cairn_schema (version) VALUES (%s)"
                " ON CONFLICT (one) DO UPDATE SET version = excluded.version",
                (SCHEMA_VERSION,),
            )
    return found
