"""MemoryCache: a store's memories and location records in process, indexed, read lazily."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Protocol

from cairn.adapters.storage.memory_index import (
    SCOPE_RANK,
    LevelItem,
    MemoryIndex,
    negated_importance,
)
from cairn.adapters.storage.store_ops import (
    AddOp,
    DeleteOp,
    StoreOp,
    SupersedeOp,
    UpdateOp,
)
from cairn.adapters.storage.undo_log import Undo
from cairn.errors import MemoryNotFoundError, StoreError
from cairn.models.memory import (
    VISIBLE_STATUSES,
    CapKey,
    LocationRecord,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
)

_VISIBLE = VISIBLE_STATUSES


def own_record(record: LocationRecord) -> LocationRecord:
    """A copy of a location record its holder may change: its one mutable field is copied
    (a deep copy costs ten times as much)."""
    return record.model_copy(update={"episodes": list(record.episodes)})


class LazySource(Protocol):
    """Where a lazily loaded cache reads the memories it has not read yet (see
    `MemoryCache.lazy`): a store's snapshot, or its table."""

    def load(self, entry_id: str) -> MemoryEntry | None:
        """The memory with this id, as stored when the cache was loaded (None: it does not
        read as a memory; the source reports it, and the cache forgets it)."""

    def load_many(self, ids: list[str]) -> dict[str, MemoryEntry | None]:
        """These memories (ids in store order), as `load` gives each, read together (one
        parse, one query: cheaper than one by one)."""

    def load_all(self) -> dict[str, MemoryEntry]:
        """Every memory, as stored when the cache was loaded (one pass: cheaper than reading
        them one by one)."""


class MemoryCache:
    """All memories and location records of a store, with indexes for the reads of a turn.

    `memories` may be filled directly while a cache is being built (a parse, a merge); the
    indexes are built on the first query, then kept in step by `apply`, one change at a time.
    Once queried, change the cache only through `apply`/`apply_all`.

    A cache may also start *lazy* (`MemoryCache.lazy`): its indexes come ready-made and each
    memory is read from its source the first time it is asked for (`get`, the queries), so a
    store opens without reading every memory. `memories` reads every one that is still unread.
    """

    def __init__(self) -> None:
        self._memories: dict[str, MemoryEntry] = {}
        self.locations: dict[int, LocationRecord] = {}
        self._index: MemoryIndex | None = None
        self._source: LazySource | None = None
        self._unread: set[str] = set()
        self._current = False
        self._selected: dict[tuple[object, ...], dict[tuple[object, ...], list[MemoryEntry]]]
        self._selected = {}
        """Answers of `select` by the index list they read (("location", id), ("npc", id),
        ("scope", rank), ("all",)) and filter; a change to a memory forgets the answers of
        its lists (`_forget_selected`), so a turn re-reads only the rooms that changed."""

    @classmethod
    def lazy(
        cls,
        index: MemoryIndex,
        locations: dict[int, LocationRecord],
        source: LazySource,
        *,
        current: bool = False,
    ) -> MemoryCache:
        """A cache of the memories `index` holds, read from `source` when first asked for.
        `current`: the source gives each memory as it is when read, which may be newer than
        what the index was made from (a shared database): each read is checked against it."""
        cache = cls()
        cache._index, cache.locations, cache._source = index, locations, source
        cache._unread = set(index.order)
        cache._current = current
        return cache

    @property
    def memories(self) -> dict[str, MemoryEntry]:
        """Every memory by id, in store order for a cache built in store order (a lazy cache
        reads the ones still unread first)."""
        if self._unread:
            assert self._index is not None and self._source is not None
            read, unread, order = self._memories, self._unread, self._index.in_order()
            # the few still unread together; most of them: one pass over everything
            everything: Mapping[str, MemoryEntry | None]
            if len(unread) > 64 and 2 * len(unread) > len(order):
                everything = self._source.load_all()
            else:
                everything = self._source.load_many([i for i in order if i in unread])
            found = {
                i: read.get(i) or (everything[i] if i in everything else self._source.load(i))
                for i in order
            }
            unread.clear()
            for entry_id in [i for i, e in found.items() if e is None]:
                self._unindex(entry_id)
            self._memories = {i: e for i, e in found.items() if e is not None}
            if self._current:
                for entry in self._memories.values():
                    self._follow(entry)
        return self._memories

    @memories.setter
    def memories(self, value: dict[str, MemoryEntry]) -> None:
        self._memories, self._unread = value, set()
        self._selected.clear()

    @property
    def unread(self) -> int:
        """How many memories a lazy cache has not read from its source yet."""
        return len(self._unread)

    def read_now(self, entry_id: str) -> MemoryEntry | None:
        """The memory with this id when it was read already (a lazy cache does not read it)."""
        return self._memories.get(entry_id)

    def prefetch(self, ids: Iterable[str]) -> None:
        """Read the unread memories among `ids` from the source now, together (before a
        store's write transaction, which must not read through the source)."""
        if self._unread:
            wanted = [i for i in ids if i in self._unread]
            if len(wanted) == 1:
                self.get(wanted[0])
            else:
                self._read_many(wanted)

    def get(self, entry_id: str) -> MemoryEntry | None:
        """The memory with this id (read from the source the first time), or None."""
        entry = self._memories.get(entry_id)
        if entry is None and entry_id in self._unread:
            assert self._source is not None
            entry = self._source.load(entry_id)
            self._unread.discard(entry_id)
            if entry is None:  # does not read (the source said why): gone from the cache
                self._unindex(entry_id)
                return None
            self._memories[entry_id] = entry
            self._follow(entry)
        return entry

    def _read_many(self, ids: Iterable[str]) -> None:
        """Read the unread memories among `ids` from the source together."""
        unread = self._unread
        wanted = [i for i in ids if i in unread]
        if len(wanted) < 2:
            return  # `get` reads it
        assert self._source is not None
        for entry_id, entry in self._source.load_many(wanted).items():
            unread.discard(entry_id)
            if entry is None:  # does not read (the source said why): gone from the cache
                self._unindex(entry_id)
            else:
                self._memories[entry_id] = entry
                self._follow(entry)

    def _follow(self, entry: MemoryEntry) -> None:
        """For a source that gives memories as they are now (`current`): when the one just
        read is not what the index holds of it (another process changed it since the load),
        the index takes this version."""
        index = self._index
        if not self._current or index is None or index.holds(entry):
            return
        seq = self._unindex(entry.id)
        index.add(entry, seq)
        self._forget_selected(entry.id)

    def __contains__(self, entry_id: str) -> bool:
        return entry_id in self._memories or entry_id in self._unread

    @property
    def indexed(self) -> bool:
        """Whether the indexes are built (they are kept in step from then on)."""
        return self._index is not None

    @property
    def index(self) -> MemoryIndex:
        """The indexes, built from the memories on first use."""
        if self._index is None:
            self._index = MemoryIndex.of_entries(self._memories.values())
        return self._index

    def _put(self, entry: MemoryEntry, at: int | None = None) -> None:
        known = entry.id in self
        self._unread.discard(entry.id)
        self._memories[entry.id] = entry
        if self._index is not None:
            seq = self._unindex(entry.id) if known else at
            self._index.add(entry, seq)
            self._forget_selected(entry.id)

    def _drop(self, entry_id: str) -> None:
        self._unread.discard(entry_id)
        self._memories.pop(entry_id, None)
        self._unindex(entry_id)

    def _unindex(self, entry_id: str) -> int | None:
        """Take a memory out of the indexes (forgetting the answers that read its lists); its
        sequence number, None when it was not indexed."""
        if self._index is None or entry_id not in self._index.order:
            return None
        self._forget_selected(entry_id)
        return self._index.remove(entry_id)

    def _forget_selected(self, entry_id: str) -> None:
        """Forget the `select` answers that read the lists this (indexed) memory is in."""
        if not self._selected or self._index is None or entry_id not in self._index.meta:
            return
        location_id, npcs, _ = self._index.meta[entry_id]
        lists: list[tuple[object, ...]] = [("all",), ("scope", self._index.order[entry_id][0])]
        if location_id is not None:
            lists.append(("location", location_id))
        lists.extend(("npc", npc) for npc in npcs)
        for key in lists:
            self._selected.pop(key, None)

    def apply(self, op: StoreOp) -> None:
        """Apply one op; raise StoreError naming the problem when it cannot be applied."""
        if isinstance(op, AddOp):
            if op.entry.id in self:
                raise StoreError(f"memory id {op.entry.id!r} already exists")
            self._put(op.entry, op.seq)
            if op.entry.location_id is not None and op.entry.scope is MemoryScope.LOCATION:
                name = op.entry.location_name or ""
                known = self.locations.get(op.entry.location_id)
                if known is None or (name and not known.name):  # else: nothing to change
                    self.ensure_location(op.entry.location_id, name)
        elif isinstance(op, UpdateOp):
            if op.entry.id not in self:
                raise MemoryNotFoundError(f"no memory with id {op.entry.id!r} to update")
            self._put(op.entry)
        elif isinstance(op, SupersedeOp):
            old = self.get(op.old_id)
            if old is None:
                raise MemoryNotFoundError(f"no memory with id {op.old_id!r} to supersede")
            self._put(
                old.model_copy(
                    update={"status": MemoryStatus.SUPERSEDED, "superseded_by": op.new_id}
                )
            )
        elif isinstance(op, DeleteOp):
            if op.entry_id not in self:
                raise MemoryNotFoundError(f"no memory with id {op.entry_id!r} to delete")
            self._drop(op.entry_id)
        else:
            record = self.ensure_location(op.location_id, op.name)
            record.visits += 1
            if op.name:
                record.name = op.name
            if op.episode is not None and op.episode not in record.episodes:
                record.episodes.append(op.episode)
                record.episodes.sort()

    def apply_all(self, ops: Iterable[StoreOp]) -> None:
        """Apply ops in order, all or none: on an error the cache is as it was."""
        with self.applying(ops):
            pass

    @contextmanager
    def applying(self, ops: Iterable[StoreOp]) -> Iterator[None]:
        """Apply ops in order; when they or the block fail, undo them all (in place: no copy
        of the cache, so a unit of work costs what it changes)."""
        undo = self.undoable()
        try:
            for op in ops:
                undo.apply(op)
            yield
        except BaseException:
            undo.undo()
            raise

    def undoable(self) -> Undo:
        """An undo log: ops applied through it can all be taken back, newest first."""
        return Undo(self)

    def _restore(self, entry_id: str, before: MemoryEntry | None, seq: int | None) -> None:
        """Put back what a memory was before an op (absent when `before` is None), in its
        place in store order."""
        now = self.get(entry_id)
        if now is before:
            return
        if before is None:
            self._drop(entry_id)
        elif now is not None:
            self._put(before)
        else:
            self._memories[entry_id] = before
            if self._index is not None:
                self._index.add(before, seq)
                self._forget_selected(entry_id)

    def ensure_location(self, location_id: int, name: str) -> LocationRecord:
        """Return a record of this location that this cache alone owns (copied on first write)."""
        shared = self.locations.get(location_id)
        record = LocationRecord(id=location_id, name=name) if shared is None else own_record(shared)
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
        """Memories matching every given filter, in store order (read from the indexes; an
        answer is kept until a memory of the list it read changes)."""
        index = self.index
        if location_id is not None:
            read: tuple[object, ...] = ("location", location_id)
        elif npc_id is not None:
            read = ("npc", npc_id)
        elif scope is not None:
            read = ("scope", SCOPE_RANK[scope])
        else:
            read = ("all",)
        answers = self._selected.setdefault(read, {})
        key = (scope, location_id, npc_id, statuses)
        found = answers.get(key)
        if found is None:
            found = answers[key] = self._select(index, scope, location_id, npc_id, statuses)
            if self._selected.get(read) is not answers:  # a lazy read forgot it meanwhile
                self._selected.pop(read, None)
        return list(found)

    def _select(
        self,
        index: MemoryIndex,
        scope: MemoryScope | None,
        location_id: int | None,
        npc_id: str | None,
        statuses: frozenset[MemoryStatus] | None,
    ) -> list[MemoryEntry]:
        get = self.get
        ids: Iterable[str]
        if location_id is not None:
            ids = index.by_location.get(location_id, ())
        elif npc_id is not None:
            ids = index.by_npc.get(npc_id, ())
        elif scope is not None:
            rank = SCOPE_RANK[scope]
            ids = [
                i
                for section in sorted(k for k in index.by_section if k[0] == rank)
                for i in index.by_section[section]
            ]
        else:
            ids = index.in_order()
            if len(self._unread) > 64:
                self.memories  # noqa: B018 (every memory wanted: read the unread in one pass)
        ids = list(ids)
        if self._unread:
            self._read_many(ids)
        found = [m for m in [get(i) for i in ids] if m is not None]
        return [
            m
            for m in found
            if (scope is None or m.scope is scope)
            and (location_id is None or m.location_id == location_id)
            and (npc_id is None or npc_id in m.npc_ids)
            and (statuses is None or m.status in statuses)
        ]

    def in_order(self) -> list[MemoryEntry]:
        """Every memory in store order (file order for a cache that was never queried)."""
        if self._index is None:
            return list(self._memories.values())
        return self.select()

    def ranked(self, limit: int) -> list[MemoryEntry]:
        """The visible memories in `ranking_key` order (`IMemoryStore.ranked`), at most
        `limit`: the index's importance levels from the most important, each in `ranking_key`
        order (`MemoryIndex.levels`, made from a level's memories the first time it is read)."""
        get = self.get
        while True:
            ids = self._ranked_ids(limit)
            top = [get(i) for i in ids]
            # one that did not read left the index (take the next), or one read as it is now
            # moved in it (`current`): read the top again
            if None not in top and (not self._current or ids == self._ranked_ids(limit)):
                return top  # type: ignore[return-value]

    def _ranked_ids(self, limit: int) -> list[str]:
        index = self.index
        ranked, ids, at = index.ranked, list[str](), 0
        while at < len(ranked) and len(ids) < limit:
            level_of = ranked[at][0][0]
            level = index.levels.get(level_of) or self._level(level_of)
            ids.extend(item[2] for item in level[: limit - len(ids)])
            at = bisect.bisect_right(ranked, level_of, lo=at, key=negated_importance)
        return ids

    def _level(self, level_of: int) -> list[LevelItem]:
        """An importance level (-importance) in `ranking_key` order, made from its memories
        (read now when they were not: the place of each in its level depends on what it says)
        and kept in the index. Its importance is the index's (a source that is not `current`
        is trusted as it is)."""
        index = self.index
        while True:
            ids = index.level_ids(level_of)
            if self._unread:
                self._read_many(ids)
            entries = [self.get(i) for i in ids]
            # one that did not read left the index, or one read as it is now moved in it
            # (`current`): take the level again
            if None not in entries and ids == index.level_ids(level_of):
                return index.set_level(level_of, entries)  # type: ignore[arg-type]

    def scope_counts(self) -> dict[CapKey, tuple[int, int]]:
        """(visible, hidden) per scope key (`IMemoryStore.scope_counts`), from the index
        alone: no memory is read."""
        return self.index.scope_counts()

    def ids_with_status(self, status: MemoryStatus) -> list[str]:
        """The ids of the memories with this status, in store order (a lazy cache reads only
        the ones that are not visible: their status is not in the index)."""
        index, get = self.index, self.get
        if status in _VISIBLE:
            candidates = [i for i in index.in_order() if index.meta[i][2] is not None]
        else:
            candidates = [i for i in index.in_order() if index.meta[i][2] is None]
        return [i for i in candidates if (e := get(i)) is not None and e.status is status]
