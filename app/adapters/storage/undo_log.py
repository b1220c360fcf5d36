"""Undo: the log of ops applied to a cache in place, taken back when a unit of work fails."""

from __future__ import annotations

from typing import Protocol

from cairn.adapters.storage.memory_index import MemoryIndex
from cairn.adapters.storage.store_ops import AddOp, StoreOp, VisitOp, targets
from cairn.models.memory import LocationRecord, MemoryEntry


class UndoableCache(Protocol):
    """What the undo log reaches of the cache it takes back (`MemoryCache`, whose module
    imports this one)."""

    locations: dict[int, LocationRecord]
    _index: MemoryIndex | None

    def get(self, entry_id: str) -> MemoryEntry | None: ...

    def apply(self, op: StoreOp) -> None: ...

    def _restore(self, entry_id: str, before: MemoryEntry | None, seq: int | None) -> None: ...


class Undo:
    """Ops applied to a cache in place, with what each changed, so that all can be taken back
    (`MemoryCache.undoable`)."""

    def __init__(self, cache: UndoableCache) -> None:
        self.cache = cache
        self._memories: list[tuple[str, MemoryEntry | None, int | None]] = []
        self._records: list[tuple[int, LocationRecord | None]] = []

    def apply(self, op: StoreOp) -> None:
        """Apply `op` (StoreError when it cannot be: the cache is then as it was)."""
        cache = self.cache
        index = cache._index
        for entry_id in targets(op):
            order = index.order.get(entry_id) if index else None
            self._memories.append((entry_id, cache.get(entry_id), order[2] if order else None))
        loc_id = op.location_id if isinstance(op, VisitOp) else None
        if isinstance(op, AddOp):
            loc_id = op.entry.location_id
        if loc_id is not None:
            self._records.append((loc_id, cache.locations.get(loc_id)))
        cache.apply(op)

    def set_location(self, location_id: int, record: LocationRecord) -> None:
        """Hold `record` as the location's (taken back by `undo`)."""
        self._records.append((location_id, self.cache.locations.get(location_id)))
        self.cache.locations[location_id] = record

    def undo(self) -> None:
        """Put back what the ops applied so far changed (newest first); the log is then empty."""
        cache = self.cache
        for entry_id, before, seq in reversed(self._memories):
            cache._restore(entry_id, before, seq)
        for loc_id, record in reversed(self._records):
            if record is None:
                cache.locations.pop(loc_id, None)
            else:
                cache.locations[loc_id] = record
        self._memories.clear()
        self._records.clear()
