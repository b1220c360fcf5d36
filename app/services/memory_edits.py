"""MemoryEdits: memories written as a caller gives them (`cairn.Memory`, an import), behind the
same door as play's: a bus command's handler calls these through `IMemoryEditor`, inside the
command's unit of work, and the events go out after it commits."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from cairn.errors import InvalidMemoryError, MemoryNotFoundError, StoreError
from cairn.events import events
from cairn.events.publisher import EventPublisher
from cairn.interfaces.memory_service import IMemoryEditor
from cairn.interfaces.store import IMemoryStore
from cairn.models.memory import (
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryStatus,
    persistence_level,
)


class MemoryEdits(IMemoryEditor):
    """IMemoryEditor over a store and a publisher: a service of its own, needing no game,
    summarizer or map (the library's writes do not load map.json). It is the sender of the
    events it sends."""

    def __init__(self, store: IMemoryStore, publisher: EventPublisher) -> None:
        self._store = store
        self._publisher = publisher

    def add_memory(self, entry: MemoryEntry) -> MemoryEntry:
        with self._store.transaction() as tx:
            if entry.location_id is not None and not entry.location_name:
                record = self._store.location(entry.location_id)
                if record is not None and record.name:
                    entry = entry.model_copy(update={"location_name": record.name})
            tx.add(entry)
            # as stored: Memories.md keeps times to the second, and a receiver should see what
            # a read of the store gives
            tx.after_commit(self._recorded_callback(entry))
        return entry

    def update_memory(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        title: str | None = None,
        importance: int | None = None,
        category: MemoryCategory | None = None,
        tags: Iterable[str] | None = None,
        persistence: str | None = None,
    ) -> MemoryEntry:
        given = {
            "text": text,
            "title": title,
            "importance": importance,
            "category": category,
            "tags": None if tags is None else list(tags),
        }
        changes: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        if persistence is not None:
            try:
                changes["persistence"] = persistence_level(persistence)
            except ValueError as exc:
                raise InvalidMemoryError(f"persistence: {exc}") from None
        with self._store.transaction() as tx:
            # read inside the unit: another writer's change to the other fields is kept
            current = self._existing(memory_id)
            if not changes:
                return current
            updated = MemoryEntry.model_validate({**current.model_dump(), **changes})
            tx.update(updated)
        return updated

    def forget_memory(self, memory_id: str) -> None:
        with self._store.transaction() as tx:
            if self._existing(memory_id).status is MemoryStatus.SUPERSEDED:
                return
            tx.supersede(memory_id, None)
            tx.after_commit(
                lambda: self._publisher.publish(
                    events.memory_superseded, self, old_id=memory_id, new_id=None
                )
            )

    def import_memories(
        self, records: Iterable[LocationRecord], entries: Iterable[MemoryEntry]
    ) -> list[str]:
        store = self._store
        records = list(records)
        warnings: list[str] = []
        with store.transaction() as tx:
            held = (len(store.entries()), len(store.locations()))
            if any(held):
                raise StoreError(
                    f"{store.path}: holds {held[0]} memories and {held[1]} locations already;"
                    " import into an empty store"
                )
            for entry in entries:
                tx.add(entry)  # a memory at a location makes its record, named as it says
            for record in records:  # then each visit, naming the episodes in order
                for n in range(record.visits):
                    episode = record.episodes[n] if n < len(record.episodes) else None
                    tx.record_visit(record.id, record.name, episode)
            # compared with what was written, not with the unit's staged view (reading that
            # would apply every staged memory to the cache once more)
            tx.after_commit(lambda: warnings.extend(unmade_records(store, records)))
        return warnings

    def _existing(self, memory_id: str) -> MemoryEntry:
        entry = self._store.get(memory_id)
        if entry is None:
            raise MemoryNotFoundError(f"no memory with id {memory_id!r}")
        return entry

    def _recorded_callback(self, entry: MemoryEntry) -> Callable[[], None]:
        def announce() -> None:
            stored = self._store.get(entry.id)
            shown = stored if stored is not None else entry
            self._publisher.publish(events.memory_recorded, self, entry=shown)

        return announce


def unmade_records(store: IMemoryStore, records: Iterable[LocationRecord]) -> list[str]:
    """A line per location the store holds otherwise than `records` say (or holds, or lacks)."""
    wanted = {record.id: record for record in records}
    made = store.locations()
    return [
        f"location {location_id}: stored as {made.get(location_id)}, exported as"
        f" {wanted.get(location_id)}"
        for location_id in sorted(set(wanted) | set(made))
        if made.get(location_id) != wanted.get(location_id)
    ]
