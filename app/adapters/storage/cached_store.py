"""CachedStore: the base of every store: ops staged per unit of work, reads from a MemoryCache."""

from __future__ import annotations

import contextlib
import threading
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from cairn.adapters.storage.memory_cache import MemoryCache, own_record
from cairn.adapters.storage.store_ops import StagingTransaction, StoreOp
from cairn.adapters.storage.undo_log import Undo
from cairn.errors import StoreError
from cairn.interfaces.store import IMemoryStore, StoreTransaction
from cairn.models.memory import (
    CapKey,
    LocationRecord,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
    ParseProblem,
)


class CachedStore(IMemoryStore):
    """Reads from `self._cache`; a unit of work commits its ops through `_commit` once.

    Subclasses implement `_commit(ops) -> MemoryCache`: durably write the ops, re-reading
    what other processes wrote first, under a lock (units that only count visits are written
    and synced with the next durable one: `store_ops.visits_only`), and return the new cache. The
    cache keeps its indexes in step with each op (`MemoryCache.applying` changes it in place
    and undoes a unit of work that fails), so a commit and the reads after it cost what the
    unit of work changed, not the size of the store.
    """

    def __init__(self) -> None:
        self._cache = MemoryCache()
        self._problems: list[ParseProblem] = []
        self._lock = threading.RLock()
        self._local = threading.local()

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        """A unit of work (see the port). Its own reads see what it has staged: before a read,
        the ops staged since the last one are applied to the cache (`_show`); all are taken
        back before the commit, which applies them again to the state the store holds then.
        A unit that never reads after staging pays nothing for this. From its first staged
        change to its commit the unit holds the store object (other threads' reads and units
        wait); before that it holds nothing, so what a unit does before it writes (ask a
        model, play a turn) keeps no one waiting. Its reads look for others' writes at most
        once (as `steady` does), and never after its first staged change: they would land
        under it (the commit merges them)."""
        local = self._local
        current: StagingTransaction | None = getattr(local, "tx", None)
        if current is not None:
            yield current
            return
        with self.steady():
            tx = StagingTransaction(on_stage=self._staged)
            local.tx, local.undo, local.shown, local.holding = tx, None, 0, False
            try:
                try:
                    yield tx
                finally:
                    undo: Undo | None = local.undo
                    local.tx = local.undo = None
                    if undo is not None:
                        undo.undo()
                if tx.ops:
                    self._cache = self._commit(tx.ops)
            finally:
                if local.holding:
                    local.holding = False
                    self._lock.release()
        tx.run_callbacks()

    def _outside_unit(self, doing: str) -> None:
        """Refuse what rewrites the cache or the file from under this thread's open unit of
        work (its staged changes are not committed, and may be showing in the cache)."""
        if getattr(self._local, "tx", None) is not None:
            raise StoreError(f"{self.path}: {doing} inside a unit of work: do it after the commit")

    def _staged(self, op: StoreOp) -> None:
        local = self._local
        if not local.holding:  # the first staged change: the unit holds the store from now on
            self._lock.acquire()
            local.holding = True
        local.looked = True  # from the first staged change on, reads keep to this view

    def _show(self, tx: StagingTransaction) -> None:
        """Apply to the cache the ops `tx` staged since the last read (undoably). An op this
        view cannot take (an update of a memory it does not hold, which another process may
        have added) is left to the commit."""
        local = self._local
        undo: Undo | None = local.undo
        # the cache object stays this one until the commit: no look after a staged change,
        # and what would replace it inside a unit is refused (`_outside_unit`)
        if undo is None:
            undo = local.undo = self._cache.undoable()
        for op in tx.ops[local.shown :]:
            with contextlib.suppress(StoreError):
                undo.apply(op)
        local.shown = len(tx.ops)

    @contextmanager
    def steady(self) -> Iterator[None]:
        local = self._local
        if getattr(local, "looked", None) is not None:
            yield
            return
        local.looked = False  # the first read looks
        try:
            yield
        finally:
            local.looked = None

    def _look(self) -> None:
        """Bring the cache up to date for a read (under `self._lock`); inside `steady()`, only
        the first read does; inside a unit of work, the read sees what the unit staged."""
        local = self._local
        looked = getattr(local, "looked", None)
        if not looked:  # outside `steady` (None), or its first read (False)
            self._refresh()
            if looked is False:
                local.looked = True
        tx: StagingTransaction | None = getattr(local, "tx", None)
        if tx is not None and len(tx.ops) > local.shown:
            self._show(tx)

    @abstractmethod
    def _commit(self, ops: Sequence[StoreOp]) -> MemoryCache:
        """Durably apply `ops` and return the resulting cache; on error change nothing."""

    def _refresh(self) -> None:
        """Bring the cache up to date with what others wrote (called under `self._lock`)."""

    def get(self, entry_id: str) -> MemoryEntry | None:
        with self._lock:
            self._look()
            return self._cache.get(entry_id)

    def entries(
        self,
        *,
        scope: MemoryScope | None = None,
        location_id: int | None = None,
        npc_id: str | None = None,
        statuses: frozenset[MemoryStatus] | None = None,
    ) -> list[MemoryEntry]:
        with self._lock:
            self._look()
            return self._cache.select(
                scope=scope, location_id=location_id, npc_id=npc_id, statuses=statuses
            )

    def ranked(self, limit: int) -> list[MemoryEntry]:
        with self._lock:
            self._look()
            return self._cache.ranked(limit)

    def scope_counts(self) -> dict[CapKey, tuple[int, int]]:
        with self._lock:
            self._look()
            return self._cache.scope_counts()

    def locations(self) -> dict[int, LocationRecord]:
        with self._lock:
            self._look()
            return {k: own_record(v) for k, v in self._cache.locations.items()}

    def location(self, location_id: int) -> LocationRecord | None:
        with self._lock:
            self._look()
            record = self._cache.locations.get(location_id)
            return own_record(record) if record is not None else None

    def problems(self) -> list[ParseProblem]:
        with self._lock:
            self._look()
            return list(self._problems)
