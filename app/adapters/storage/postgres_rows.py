"""Rows of the PostgreSQL store: its SQL, a memory's columns, merging an update with the row
it changes, and the cache a unit of work changes in place (in store order)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.adapters.storage.postgres_schema import decode_text, encode_text
from cairn.adapters.storage.store_ops import AddOp, DeleteOp, StoreOp, UpdateOp
from cairn.adapters.storage.undo_log import Undo
from cairn.errors import StoreError
from cairn.models.memory import LocationRecord, MemoryEntry

log = logging.getLogger(__name__)

COLUMNS = "scope, category, status, location_id, importance, npc_ids, created_ts, entry"
INSERT = (
    f"INSERT INTO cairn_memories (id, {COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (space, id) DO NOTHING RETURNING seq"
)
UPDATE = f"UPDATE cairn_memories SET ({COLUMNS}) = (%s, %s, %s, %s, %s, %s, %s, %s) WHERE id = %s"
INDEX_COLUMNS = "seq, id, scope, status, location_id, importance, npc_ids, created_ts"
"""What a store opens from: each row's place and what the index keeps of it (no memory read)."""
LOCK_ROW = "SELECT seq, entry FROM cairn_memories WHERE id = %s FOR UPDATE"
LOCATION = "id, name, visits, episodes"
# a memory at a location names it when it has no name yet (as MemoryCache.ensure_location)
ENSURE_LOCATION = (
    f"INSERT INTO cairn_locations ({LOCATION}) VALUES (%s, %s, 0, '{{}}')"
    " ON CONFLICT (space, id) DO UPDATE SET name = excluded.name"
    f" WHERE cairn_locations.name = '' RETURNING {LOCATION}"
)
# one more visit, counted by the database (never read-modify-write)
VISIT = (
    f"INSERT INTO cairn_locations ({LOCATION}) VALUES (%(id)s, %(name)s, 1, %(first)s)"
    " ON CONFLICT (space, id) DO UPDATE SET visits = cairn_locations.visits + 1,"
    " name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE cairn_locations.name END,"
    " episodes = CASE WHEN %(episode)s::integer IS NULL"
    " OR %(episode)s::integer = ANY (cairn_locations.episodes) THEN cairn_locations.episodes"
    " ELSE ARRAY(SELECT unnest(cairn_locations.episodes || %(episode)s::integer) ORDER BY 1)"
    f" END RETURNING {LOCATION}"
)


def values(entry: MemoryEntry) -> tuple[Any, ...]:
    """The columns of a memory, checked first: a row every agent of the space reads must be
    valid (a `model_copy(update=...)` is not validated)."""
    try:
        MemoryEntry.model_validate(dict(entry))
    except ValidationError as e:
        problem = " ".join(str(e).split())
        raise StoreError(f"memory {entry.id!r} is invalid, not stored: {problem}") from e
    return (
        entry.scope.value,
        entry.category.value,
        entry.status.value,
        entry.location_id,
        entry.importance,
        [encode_text(npc) for npc in entry.npc_ids],
        entry.created_at.timestamp(),
        entry.model_dump_json(),
    )


def record(row: Sequence[Any]) -> LocationRecord:
    return LocationRecord(id=row[0], name=decode_text(row[1]), visits=row[2], episodes=list(row[3]))


def merge(known: MemoryEntry | None, current: MemoryEntry, ours: MemoryEntry) -> MemoryEntry:
    """The update `ours` (made from `known`) applied to `current`, what the database holds:
    fields `ours` changed take its value, the others keep `current`'s (no lost update). When
    the result would be invalid (e.g. turn_start from one change, turn_end from the other),
    `ours` is taken whole."""
    if known is None or known == current:
        return ours
    changed = {
        name: getattr(ours, name)
        for name in MemoryEntry.model_fields
        if getattr(ours, name) != getattr(known, name)
    }
    try:
        return MemoryEntry.model_validate({**dict(current), **changed})
    except ValidationError:  # the two sets of changes do not fit together: the later one wins
        log.warning("memory %s was changed by another agent meanwhile; this change wins", ours.id)
        return ours


class Working:
    """The cache and each memory's `seq`, changed in place as a unit of work (or a fetch of
    others' changes) proceeds; each memory keeps its `seq` as its place in store order. With an
    undo log, `undo` takes every change back: a failed attempt leaves the cache as it was, and
    no unit copies the cache (a write costs what it changes, not the space's size). It never
    reads the store: with an undo log, which keeps each changed memory's version before, the
    memories it changes are read first (`MemoryCache.prefetch`)."""

    def __init__(self, cache: MemoryCache, seqs: dict[str, int], undo: Undo | None = None) -> None:
        self.cache = cache
        self.seqs = seqs
        self._undo = undo
        self._seqs_before: dict[str, int | None] = {}

    def put(self, entry: MemoryEntry, seq: int) -> None:
        """Hold `entry` (stored at `seq`) in its place."""
        if entry.id in self.cache and self.seqs.get(entry.id) == seq:
            if self.cache.read_now(entry.id) != entry:
                self._apply(UpdateOp(entry))
            return
        self.drop(entry.id)
        self._apply(AddOp(entry, seq))
        self._set_seq(entry.id, seq)

    def drop(self, entry_id: str) -> None:
        if entry_id in self.cache:
            self._apply(DeleteOp(entry_id))
        self._set_seq(entry_id, None)

    def set_location(self, location_id: int, found: LocationRecord) -> None:
        """Hold the location's record as the database returned it."""
        if self._undo is None:
            self.cache.locations[location_id] = found
        else:
            self._undo.set_location(location_id, found)

    def undo(self) -> None:
        """Take back every change made through this object (with an undo log)."""
        if self._undo is not None:
            self._undo.undo()
        for entry_id, seq in self._seqs_before.items():
            if seq is None:
                self.seqs.pop(entry_id, None)
            else:
                self.seqs[entry_id] = seq
        self._seqs_before.clear()

    def _apply(self, op: StoreOp) -> None:
        if self._undo is None:
            self.cache.apply(op)
        else:
            self._undo.apply(op)

    def _set_seq(self, entry_id: str, seq: int | None) -> None:
        if self._undo is not None and entry_id not in self._seqs_before:
            self._seqs_before[entry_id] = self.seqs.get(entry_id)
        if seq is None:
            self.seqs.pop(entry_id, None)
        else:
            self.seqs[entry_id] = seq
