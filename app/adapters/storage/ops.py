"""Staged store operations, the in-process memory cache they apply to, and a staging transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cairn.errors import MemoryNotFoundError, StoreError
from cairn.interfaces.store import StoreTransaction
from cairn.models.memory import (
    LocationRecord,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
)


@dataclass(frozen=True)
class AddOp:
    """Add a new memory."""

    entry: MemoryEntry


@dataclass(frozen=True)
class UpdateOp:
    """Replace the memory with the same id."""

    entry: MemoryEntry


@dataclass(frozen=True)
class SupersedeOp:
    """Mark a memory SUPERSEDED, linked by id to what replaced it (None: invalidated)."""

    old_id: str
    new_id: str | None


@dataclass(frozen=True)
class DeleteOp:
    """Remove a memory."""

    entry_id: str


@dataclass(frozen=True)
class VisitOp:
    """Count one visit to a location."""

    location_id: int
    name: str
    episode: int | None


StoreOp = AddOp | UpdateOp | SupersedeOp | DeleteOp | VisitOp


class MemoryCache:
    """All memories and location records of a store, in store order, with the ops applied."""

    def __init__(self) -> None:
        self.memories: dict[str, MemoryEntry] = {}
        self.locations: dict[int, LocationRecord] = {}

    def copy(self) -> MemoryCache:
        """A shallow copy: entries and location records are replaced, never mutated, so sharing
        them is safe (see `ensure_location`, which copies a record before changing it)."""
        other = MemoryCache()
        other.memories = dict(self.memories)
        other.locations = dict(self.locations)
        return other

    def apply(self, op: StoreOp) -> None:
        """Apply one op; raise StoreError naming the problem when it cannot be applied."""
        if isinstance(op, AddOp):
            if op.entry.id in self.memories:
                raise StoreError(f"memory id {op.entry.id!r} already exists")
            self.memories[op.entry.id] = op.entry
            if op.entry.location_id is not None and op.entry.scope is MemoryScope.LOCATION:
                self.ensure_location(op.entry.location_id, op.entry.location_name or "")
        elif isinstance(op, UpdateOp):
            if op.entry.id not in self.memories:
                raise MemoryNotFoundError(f"no memory with id {op.entry.id!r} to update")
            self.memories[op.entry.id] = op.entry
        elif isinstance(op, SupersedeOp):
            old = self.memories.get(op.old_id)
            if old is None:
                raise MemoryNotFoundError(f"no memory with id {op.old_id!r} to supersede")
            self.memories[op.old_id] = old.model_copy(
                update={"status": MemoryStatus.SUPERSEDED, "superseded_by": op.new_id}
            )
        elif isinstance(op, DeleteOp):
            if self.memories.pop(op.entry_id, None) is None:
                raise MemoryNotFoundError(f"no memory with id {op.entry_id!r} to delete")
        else:
            record = self.ensure_location(op.location_id, op.name)
            record.visits += 1
            if op.name:
                record.name = op.name
            if op.episode is not None and op.episode not in record.episodes:
                record.episodes.append(op.episode)
                record.episodes.sort()

    def apply_all(self, ops: Iterable[StoreOp]) -> None:
        """Apply ops in order."""
        for op in ops:
            self.apply(op)

    def ensure_location(self, location_id: int, name: str) -> LocationRecord:
        """Return a record of this location that this cache alone owns (copied on first write)."""
        shared = self.locations.get(location_id)
        record = (
            LocationRecord(id=location_id, name=name)
            if shared is None
            else shared.model_copy(deep=True)
        )
        if name and not record.name:
            record.name = name
        self.locations[location_id] = record
        return record

    def select(
        self,
        *,
        scope: MemoryScope | None = None,
        location_id: int | None = None,
        npc_id: str | None = None,
        statuses: frozenset[MemoryStatus] | None = None,
    ) -> list[MemoryEntry]:
        """Memories matching every given filter, in store order."""
        return [
            m
            for m in self.memories.values()
            if (scope is None or m.scope is scope)
            and (location_id is None or m.location_id == location_id)
            and (npc_id is None or npc_id in m.npc_ids)
            and (statuses is None or m.status in statuses)
        ]


class StagingTransaction(StoreTransaction):
    """Records ops for a store to apply on commit; runs callbacks after a durable write."""

    def __init__(self) -> None:
        self.ops: list[StoreOp] = []
        self.callbacks: list[Callable[[], None]] = []

    def add(self, entry: MemoryEntry) -> None:
        self.ops.append(AddOp(entry))

    def update(self, entry: MemoryEntry) -> None:
        self.ops.append(UpdateOp(entry))

    def supersede(self, old_id: str, new_id: str | None) -> None:
        self.ops.append(SupersedeOp(old_id, new_id))

    def delete(self, entry_id: str) -> None:
        self.ops.append(DeleteOp(entry_id))

    def record_visit(self, location_id: int, name: str, episode: int | None) -> None:
        if isinstance(location_id, bool) or not isinstance(location_id, int):
            raise StoreError(f"location_id: must be an integer, got {location_id!r}")
        self.ops.append(VisitOp(location_id, name, episode))

    def after_commit(self, callback: Callable[[], None]) -> None:
        self.callbacks.append(callback)

    def run_callbacks(self) -> None:
        """Run the after-commit callbacks in order."""
        for callback in self.callbacks:
            callback()
