"""Store operations (add, update, supersede, delete, visit) and the transaction that stages them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cairn.errors import StoreError
from cairn.interfaces.store import StoreTransaction
from cairn.models.changes import AddOp, DeleteOp, StoreOp, SupersedeOp, UpdateOp, VisitOp
from cairn.models.memory import MemoryEntry

__all__ = [
    "AddOp",
    "DeleteOp",
    "StagingTransaction",
    "StoreOp",
    "SupersedeOp",
    "UpdateOp",
    "VisitOp",
    "changed_id",
    "targets",
    "touched_ids",
    "visits_only",
]


def visits_only(ops: Sequence[StoreOp]) -> bool:
    """A unit of work that only counts visits: every store writes it at once (a crashed
    process loses nothing) but does not wait for the disk; the next unit with a memory in it,
    the episode's end or the store's close makes it durable with its own sync. A power cut can
    so cost the last few visit counts, never a memory (PLAN.md, "Visit counts")."""
    return bool(ops) and all(isinstance(op, VisitOp) for op in ops)


def targets(op: StoreOp) -> tuple[str, ...]:
    """The ids of the memories an op adds or changes."""
    if isinstance(op, AddOp | UpdateOp):
        return (op.entry.id,)
    if isinstance(op, SupersedeOp):
        return (op.old_id,)
    if isinstance(op, DeleteOp):
        return (op.entry_id,)
    return ()


def changed_id(op: StoreOp) -> str | None:
    """The id of the existing memory an op changes (None for adds and visits)."""
    if isinstance(op, AddOp):
        return None
    found = targets(op)
    return found[0] if found else None


def touched_ids(ops: Sequence[StoreOp]) -> list[str]:
    """The ids of the memories `ops` add or change (adds first)."""
    ids = [op.entry.id for op in ops if isinstance(op, AddOp)]
    ids += [t for t in map(changed_id, ops) if t is not None]
    return ids


class StagingTransaction(StoreTransaction):
    """Records ops for a store to apply on commit; runs callbacks after a durable write."""

    def __init__(self, on_stage: Callable[[StoreOp], None] | None = None) -> None:
        self.ops: list[StoreOp] = []
        self.callbacks: list[Callable[[], None]] = []
        self._on_stage = on_stage
        """Told of each op as it is staged (a store shows it to the unit's own reads)."""

    def _stage(self, op: StoreOp) -> None:
        self.ops.append(op)
        if self._on_stage is not None:
            self._on_stage(op)

    def add(self, entry: MemoryEntry) -> None:
        self._stage(AddOp(entry))

    def update(self, entry: MemoryEntry) -> None:
        self._stage(UpdateOp(entry))

    def supersede(self, old_id: str, new_id: str | None) -> None:
        self._stage(SupersedeOp(old_id, new_id))

    def delete(self, entry_id: str) -> None:
        self._stage(DeleteOp(entry_id))

    def record_visit(self, location_id: int, name: str, episode: int | None) -> None:
        if isinstance(location_id, bool) or not isinstance(location_id, int):
            raise StoreError(f"location_id: must be an integer, got {location_id!r}")
        self._stage(VisitOp(location_id, name, episode))

    def after_commit(self, callback: Callable[[], None]) -> None:
        self.callbacks.append(callback)

    def run_callbacks(self) -> None:
        """Run the after-commit callbacks in order."""
        for callback in self.callbacks:
            callback()
