"""IMemoryStore: where MemoryEntry records and location records live, with units of work."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from cairn.models.changes import AddOp, DeleteOp, StoreOp, SupersedeOp, TurnChanges, UpdateOp
from cairn.models.memory import (
    VISIBLE_STATUSES,
    CapKey,
    LocationRecord,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
    ParseProblem,
    cap_key,
)

RankingKey = tuple[int, int, int, float, str, str, float]
"""What `ranking_key` gives: compared as a tuple, smallest first."""


def ranking_key(entry: MemoryEntry) -> RankingKey:
    """Where a memory stands in `IMemoryStore.ranked` (smallest first), from what it says, so
    that the same history ranks the same in any workdir, store and file order, however fast
    the machine ran and whatever ids it drew:

    1. the most important first;
    2. then the latest in game time: episode, then turn (the last turn the memory is about: a
       failure ledger that failed again moves up). A memory with no game time (`Memory.add`)
       comes after those, and among them the newest (`created_at`) first. Wall-clock time
       does not order memories that have a game time: a run stamps two memories a second apart
       or in the same second depending on the machine's speed;
    3. then by title, then text (a memory's content: no id, no position);
    4. then `created_at`, newest first; memories equal in all of this show the same text, and
       a stable sort of the store keeps them in store order.
    """
    turn = entry.turn_end if entry.turn_end is not None else entry.turn_start
    episode = entry.episode
    if episode is None and turn is None:
        untimed = -entry.created_at.timestamp()
        return (-entry.importance, 1, 1, untimed, entry.title, entry.text, untimed)
    return (
        -entry.importance,
        1 if episode is None else -episode,
        1 if turn is None else -turn,
        0.0,
        entry.title,
        entry.text,
        -entry.created_at.timestamp(),
    )


class StoreTransaction(ABC):
    """Changes staged inside one unit of work; all are written together, once, on commit.

    Operations are validated when staged (an unknown id for `update` or `supersede` is only
    detected at commit, because another process may have added it meanwhile) and applied in the
    order they were staged. `after_commit` callbacks run only after a successful durable write
    (a unit that only counts visits is written but synced later: `store_ops.visits_only`).
    """

    @abstractmethod
    def add(self, entry: MemoryEntry) -> None:
        """Stage a new memory. Its id must be new to the store."""

    @abstractmethod
    def update(self, entry: MemoryEntry) -> None:
        """Stage a full replacement of the memory with the same id."""

    @abstractmethod
    def supersede(self, old_id: str, new_id: str | None) -> None:
        """Stage marking `old_id` SUPERSEDED, linked to `new_id` (None: invalidated)."""

    @abstractmethod
    def delete(self, entry_id: str) -> None:
        """Stage removing a memory (used by prune for old SUPERSEDED entries only)."""

    @abstractmethod
    def record_visit(self, location_id: int, name: str, episode: int | None) -> None:
        """Stage one more visit to a location (and remember its name and the episode)."""

    @abstractmethod
    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run `callback` after the unit of work has been written: durably, unless it only
        counted visits (written at once, synced by the next unit with a memory in it)."""

    def stage(self, op: StoreOp) -> None:
        """Stage one typed change (`cairn.models.changes`) as its method would."""
        if isinstance(op, AddOp):
            self.add(op.entry)
        elif isinstance(op, UpdateOp):
            self.update(op.entry)
        elif isinstance(op, SupersedeOp):
            self.supersede(op.old_id, op.new_id)
        elif isinstance(op, DeleteOp):
            self.delete(op.entry_id)
        else:
            self.record_visit(op.location_id, op.name, op.episode)

    def apply(self, changes: TurnChanges) -> MemoryEntry | None:
        """Stage a turn's changes, in order, and its events for after the commit; returns the
        memory the turn stored."""
        for op in changes.ops:
            self.stage(op)
        for callback in changes.after_commit:
            self.after_commit(callback)
        return changes.entry


class IStoreReader(ABC):
    """The read side of a memory store: what `cairn.Memory`'s reads, the CLI's readers and the
    report use (every store is one). Reads come from an in-process cache kept current. Every
    store has a path (its file, or its database space's name) and reports what it could not
    read (`problems`: a Markdown block, an SQLite or PostgreSQL row), so both are read side."""

    @property
    @abstractmethod
    def path(self) -> Path:
        """The file the store lives in."""

    @abstractmethod
    def get(self, entry_id: str) -> MemoryEntry | None:
        """Return the memory with this id, or None."""

    @abstractmethod
    def entries(
        self,
        *,
        scope: MemoryScope | None = None,
        location_id: int | None = None,
        npc_id: str | None = None,
        statuses: frozenset[MemoryStatus] | None = None,
    ) -> list[MemoryEntry]:
        """Return memories matching every given filter, oldest first (store order)."""

    def ranked(self, limit: int) -> list[MemoryEntry]:
        """The visible (ACTIVE, TENTATIVE) memories in `ranking_key` order (most important
        first, then the latest in game time, then by title and text); at most `limit`. Stores
        answer from an index, without a scan."""
        ranked = sorted(self.entries(statuses=VISIBLE_STATUSES), key=ranking_key)
        return ranked[: max(0, limit)]

    def scope_counts(self) -> dict[CapKey, tuple[int, int]]:
        """(visible, hidden) memories per scope key, the keys pruning caps: ("location", the
        room's id as text), ("npc", the first NPC id), ("world", ""). Stores answer from their
        index, without reading a memory."""
        counts: dict[CapKey, tuple[int, int]] = {}
        for entry in self.entries():
            key = cap_key(entry.scope, entry.location_id, entry.npc_ids)
            visible, hidden = counts.get(key, (0, 0))
            shown = entry.status in VISIBLE_STATUSES
            counts[key] = (visible + shown, hidden + (not shown))
        return counts

    def archived(self, *, newest: int | None = None) -> list[MemoryEntry]:
        """The memories moved to the archive (not loaded for play), oldest first; one a
        restore brought back (`RestoreGame`) is live again and not listed. `newest`:
        only the last that many moved there (what a report shows of the archive, which only
        grows: reading it costs what is shown, not the archive's size)."""
        return []

    def archived_count(self) -> int:
        """How many memories the archive holds, none of them read."""
        return 0

    @abstractmethod
    def locations(self) -> dict[int, LocationRecord]:
        """Return every known location record by id."""

    @abstractmethod
    def location(self, location_id: int) -> LocationRecord | None:
        """Return one location record (a copy), or None."""

    @abstractmethod
    def problems(self) -> list[ParseProblem]:
        """Return the problems found on the last load (empty for a clean store)."""

    def steady(self) -> AbstractContextManager[None]:
        """A block whose reads look for what others wrote once, at the first read: they see
        that state and this thread's own writes (a game turn reads the store a dozen times;
        each read would look again). Writes inside still merge what others wrote before they
        commit.
        Stores that never look (nothing else writes to them) need not override it."""
        return nullcontext()

    @abstractmethod
    def close(self) -> None:
        """Release files and connections."""

    def __iter__(self) -> Iterator[MemoryEntry]:
        return iter(self.entries())


class IMemoryStore(IStoreReader):
    """A durable store of memories: the read side (`IStoreReader`) and the write side: units
    of work, the episode's end and `reload`. Only the services and the bus open units of work
    (`tests/unit/test_one_door.py`)."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[StoreTransaction]:
        """Open a unit of work. Nested calls in one thread join the outermost one.

        Reads inside see what the unit has staged so far (other threads and processes see it
        only once it is committed). Leaving the outermost block normally commits with one
        durable write (a unit that only counts visits: written, and synced with the next
        durable one); an exception discards every staged change and leaves the store as it
        was.
        """

    def checkpoint(self) -> None:  # (a hook: stores without either do nothing)
        """The end of an episode: fold what was appended and move SUPERSEDED memories to the
        archive (stores without either do nothing)."""

    @abstractmethod
    def reload(self) -> None:
        """Re-read the store from disk (picks up edits by people and other processes)."""
