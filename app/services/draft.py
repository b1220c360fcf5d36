"""DraftStore: a unit of work on paper. Reads are a store's, with the draft's own changes
shown; writes are kept as typed changes (`cairn.models.changes`) and never reach the store.

A turn is interpreted against a draft (`MemoryCore.drafting`): the rules read and "write" as
they always did, the model and the game are asked with no lock of the store held, and what
the turn leaves in memory comes out as `TurnChanges` for the handler to apply in one unit of
work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cairn.errors import StoreError
from cairn.interfaces.store import IMemoryStore, StoreTransaction
from cairn.models.changes import (
    AddOp,
    DeleteOp,
    StoreOp,
    SupersedeOp,
    TurnChanges,
    UpdateOp,
    VisitOp,
)
from cairn.models.memory import (
    LocationRecord,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
    ParseProblem,
)


class _DraftTransaction(StoreTransaction):
    """Stages into the draft (every block of the draft joins it: the draft is one unit)."""

    def __init__(self, draft: DraftStore) -> None:
        self._draft = draft

    def add(self, entry: MemoryEntry) -> None:
        if self._draft.get(entry.id) is not None:
            raise StoreError(f"memory id {entry.id!r} already exists")
        self._draft.note(AddOp(entry))

    def update(self, entry: MemoryEntry) -> None:
        self._draft.note(UpdateOp(entry))

    def supersede(self, old_id: str, new_id: str | None) -> None:
        self._draft.note(SupersedeOp(old_id, new_id))

    def delete(self, entry_id: str) -> None:
        self._draft.note(DeleteOp(entry_id))

    def record_visit(self, location_id: int, name: str, episode: int | None) -> None:
        if isinstance(location_id, bool) or not isinstance(location_id, int):
            raise StoreError(f"location_id: must be an integer, got {location_id!r}")
        self._draft.note(VisitOp(location_id, name, episode))

    def after_commit(self, callback: Callable[[], None]) -> None:
        self._draft.callbacks.append(callback)


def _matches(
    entry: MemoryEntry,
    scope: MemoryScope | None,
    location_id: int | None,
    npc_id: str | None,
    statuses: frozenset[MemoryStatus] | None,
) -> bool:
    return (
        (scope is None or entry.scope is scope)
        and (location_id is None or entry.location_id == location_id)
        and (npc_id is None or npc_id in entry.npc_ids)
        and (statuses is None or entry.status in statuses)
    )


class DraftStore(IMemoryStore):
    """`base`'s reads with the draft's changes shown; its writes kept in `ops` (see the module
    docstring). A block that raises takes back what it staged."""

    def __init__(self, base: IMemoryStore) -> None:
        self._base = base
        self.ops: list[StoreOp] = []
        self.callbacks: list[Callable[[], None]] = []
        self._changed: dict[str, MemoryEntry | None] = {}
        """The draft's version of each memory it changed (None: deleted), in staging order."""
        self._depth = 0

    def changes(self, entry: MemoryEntry | None = None) -> TurnChanges:
        """What the draft holds, as the typed changes of one turn."""
        return TurnChanges(ops=tuple(self.ops), after_commit=tuple(self.callbacks), entry=entry)

    def note(self, op: StoreOp) -> None:
        """Keep one staged change and show it to the draft's reads."""
        if isinstance(op, AddOp | UpdateOp):
            self._changed[op.entry.id] = op.entry
        elif isinstance(op, SupersedeOp):
            old = self.get(op.old_id)
            if old is not None:
                self._changed[op.old_id] = old.model_copy(
                    update={"status": MemoryStatus.SUPERSEDED, "superseded_by": op.new_id}
                )
        elif isinstance(op, DeleteOp):
            self._changed[op.entry_id] = None
        self.ops.append(op)

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        if self._depth:
            yield _DraftTransaction(self)
            return
        kept, callbacks, changed = len(self.ops), len(self.callbacks), dict(self._changed)
        self._depth = 1
        try:
            yield _DraftTransaction(self)
        except BaseException:
            del self.ops[kept:], self.callbacks[callbacks:]
            self._changed = changed
            raise
        finally:
            self._depth = 0

    # -- reads: the base's, with the draft shown ----------------------------------------------

    @property
    def path(self) -> Path:
        return self._base.path

    def get(self, entry_id: str) -> MemoryEntry | None:
        if entry_id in self._changed:
            return self._changed[entry_id]
        return self._base.get(entry_id)

    def entries(
        self,
        *,
        scope: MemoryScope | None = None,
        location_id: int | None = None,
        npc_id: str | None = None,
        statuses: frozenset[MemoryStatus] | None = None,
    ) -> list[MemoryEntry]:
        found = self._base.entries(
            scope=scope, location_id=location_id, npc_id=npc_id, statuses=statuses
        )
        if not self._changed:
            return found
        # a changed memory the base listed keeps its place (or leaves, if it no longer
        # matches); one the base did not list (added, or now matching) comes at the end, as
        # the store's order puts a new memory
        changed = self._changed
        shown: list[MemoryEntry] = []
        for entry in found:
            if entry.id in changed:
                now = changed[entry.id]
                if now is None or not _matches(now, scope, location_id, npc_id, statuses):
                    continue
                entry = now
            shown.append(entry)
        listed = {e.id for e in found}
        shown += [
            e
            for i, e in changed.items()
            if i not in listed
            and e is not None
            and _matches(e, scope, location_id, npc_id, statuses)
        ]
        return shown

    def locations(self) -> dict[int, LocationRecord]:
        records = self._base.locations()
        for op in self.ops:
            found = self._record_of(op)
            if found is not None:
                records[found] = self._changed_record(records.get(found), op)
        return records

    def location(self, location_id: int) -> LocationRecord | None:
        record = self._base.location(location_id)
        for op in self.ops:
            if self._record_of(op) == location_id:
                record = self._changed_record(record, op)
        return record

    @staticmethod
    def _record_of(op: StoreOp) -> int | None:
        """The location whose record `op` changes: a visit's, or a new room memory's (a
        store makes the record of a room it first hears of)."""
        if isinstance(op, VisitOp):
            return op.location_id
        if isinstance(op, AddOp) and op.entry.scope is MemoryScope.LOCATION:
            return op.entry.location_id
        return None

    @staticmethod
    def _changed_record(record: LocationRecord | None, op: StoreOp) -> LocationRecord:
        if isinstance(op, AddOp):
            name = op.entry.location_name or ""
            if record is None:
                return LocationRecord(id=op.entry.location_id or 0, name=name)
            if name and not record.name:
                return record.model_copy(update={"name": name})
            return record
        assert isinstance(op, VisitOp)
        record = (
            LocationRecord(id=op.location_id, name=op.name)
            if record is None
            else record.model_copy(deep=True)
        )
        record.visits += 1
        if op.name:
            record.name = op.name
        if op.episode is not None and op.episode not in record.episodes:
            record.episodes = sorted([*record.episodes, op.episode])
        return record

    def problems(self) -> list[ParseProblem]:
        return self._base.problems()

    def close(self) -> None:
        """The base is not the draft's to close."""

    def reload(self) -> None:
        raise StoreError(f"{self.path}: reload inside a draft: do it after the commit")
