"""The SQLite store's rows: a memory's columns, and a load's index read from them alone."""

from __future__ import annotations

import itertools
import json
import operator
import sqlite3

import orjson

from cairn.adapters.storage.memory_index import MemoryIndex
from cairn.adapters.storage.sqlite_schema import COLUMNS_QUERY
from cairn.models.memory import MemoryEntry


def row_columns(
    entry: MemoryEntry,
) -> tuple[str, str, str, int | None, int, str, str, str, float]:
    """A memory's columns as `INSERT_MEMORY` and `UPDATE_MEMORY` write them (after its id)."""
    return (
        entry.scope.value,
        entry.category.value,
        entry.status.value,
        entry.location_id,
        entry.importance,
        entry.created_at.isoformat(),
        entry.model_dump_json(),
        json.dumps(entry.npc_ids),
        entry.created_at.timestamp(),
    )


def npc_column(npcs: str | None) -> tuple[str, ...] | None:
    """A row's NPC ids column, or None when it is missing or not a JSON array of strings (a
    hand's: the row is then validated, and its entry's NPC ids taken)."""
    if npcs is None:
        return None
    if npcs == "[]":
        return ()
    try:
        value = json.loads(npcs)
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        return None
    return tuple(value)


def columns_index(conn: sqlite3.Connection) -> MemoryIndex | None:
    """The index built from the columns, sorted into store order by SQLite and taken
    column by column (little Python per row); None when some row lacks the columns (then
    the store validates those rows)."""
    if conn.execute(  # (most rows name no NPC: their '[]' is taken without parsing)
        "SELECT 1 FROM memories WHERE created_ts IS NULL OR npcs IS NULL OR CASE WHEN npcs ="
        " '[]' THEN 0 WHEN json_valid(npcs) THEN json_type(npcs) != 'array' ELSE 1 END LIMIT 1"
    ).fetchone():
        return None
    count, ids, ranks, seqs, keys, locations, npcs, importance, times = conn.execute(
        COLUMNS_QUERY
    ).fetchone()
    if not count:
        return MemoryIndex()
    try:  # orjson: 3x json's speed; a column it will not read (rows written by hand,
        # with numbers or escapes beyond what cairn writes) leaves it to the validating path
        id_list: list[str] = orjson.loads(ids)
        key_list: list[int | str] = orjson.loads(keys)
        imp: list[int | None] = orjson.loads(importance)
        location_list: list[int | None] = orjson.loads(locations)
        npc_lists: list[list[str]] = orjson.loads(npcs)  # each row's array, as stored
        ts: list[float] = orjson.loads(f"[{times}]")  # 17 digits: exact, and fast
        rank_list: list[int] = orjson.loads(f"[{ranks}]")
        seq_list: list[int] = orjson.loads(f"[{seqs}]")
    except orjson.JSONDecodeError:
        return None
    orders: list[tuple[int, int | str, int]] = list(zip(rank_list, key_list, seq_list, strict=True))
    try:  # the subquery's order: checked (pair by pair, in C), never assumed
        if not all(map(operator.le, orders, itertools.islice(orders, 1, None))):
            return None
    except TypeError:  # keys of both kinds in one rank (rows written by hand)
        return None
    rank_keys = [None if i is None else (i, t) for i, t in zip(imp, ts, strict=True)]
    # the ranking: (-importance, -created_at, store order): rows are in store order, so a
    # stable sort of the visible rows by their rank gives it (keyed by a C-level look-up)
    visible = [n for n, rank in enumerate(rank_keys) if rank is not None]
    visible.sort(key=rank_keys.__getitem__)  # type: ignore[arg-type]  # (no None here)
    return MemoryIndex.from_columns(
        id_list,
        orders,
        location_list,
        [tuple(dict.fromkeys(n)) if n else () for n in npc_lists],
        rank_keys,
        visible,
    )
