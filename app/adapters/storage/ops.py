"""Staged store operations, the in-process memory cache they apply to, and a staging transaction."""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from cairn.errors import MemoryNotFoundError, StoreError
from cairn.interfaces.store import StoreTransaction, ranking_key
from cairn.models.memory import (
    VISIBLE_STATUSES,
    CapKey,
    LocationRecord,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
    cap_key,
)


@dataclass(frozen=True)
class AddOp:
    """Add a new memory."""

    entry: MemoryEntry
    seq: int | None = None
    """Its place in store order within its section (a database's sequence number); None: the
    end of its section."""


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


def visits_only(ops: Sequence[StoreOp]) -> bool:
    """A unit of work that only counts visits: every store writes it at once (a crashed
    process loses nothing) but does not wait for the disk; the next unit with a memory in it,
    the episode's end or the store's close makes it durable with its own sync. A power cut can
    so cost the last few visit counts, never a memory (PLAN.md, "Visit counts")."""
    return bool(ops) and all(isinstance(op, VisitOp) for op in ops)


_VISIBLE = VISIBLE_STATUSES

OrderKey = tuple[int, int | str, int]
"""Store order: (section rank, section key, sequence). Locations by id, then NPCs by their first
id, then the world; within a section the order memories were added (the order a file holds)."""


_SCOPE_RANK = {MemoryScope.LOCATION: 0, MemoryScope.NPC: 1, MemoryScope.WORLD: 2}
"""The first element of a section's key (`section_key`), by scope."""
_SCOPES = {rank: scope for scope, rank in _SCOPE_RANK.items()}


def _section(scope: str, location_id: int | None, npc_ids: Sequence[str]) -> tuple[int, int | str]:
    """The section of a memory with these fields (the scope as an enum or its value: a
    `StrEnum` key finds both): (0, room), (1, first NPC), (2, 0); an unknown scope is the
    world's."""
    rank = _SCOPE_RANK.get(scope, 2)  # type: ignore[call-overload]
    if rank == 0:
        return 0, location_id or 0
    if rank == 1:
        return 1, npc_ids[0] if npc_ids else ""
    return 2, 0


IndexRow = tuple[OrderKey, str, int | None, tuple[str, ...], tuple[int, float] | None]
"""What the index keeps of one memory (`MemoryIndex.from_rows`): its order key, id, location
id, NPC ids (no repeats) and (-importance, -created_at) when visible."""


def index_row(
    seq: int,
    entry_id: str,
    scope: str,
    status: str,
    location_id: int | None,
    importance: int,
    npc_ids: Sequence[str],
    created_ts: float,
) -> IndexRow:
    """A memory's index row from its fields as a store keeps them (scope and status as their
    values): the section `section_key` gives, at `seq`."""
    visible = (-importance, -created_ts) if status in _VISIBLE else None
    return (
        (*_section(scope, location_id, npc_ids), seq),
        entry_id,
        location_id,
        tuple(dict.fromkeys(npc_ids)),
        visible,
    )


def entry_row(entry: MemoryEntry, seq: int) -> IndexRow:
    """`index_row` of a memory at `seq`."""
    return index_row(
        seq,
        entry.id,
        entry.scope,
        entry.status,
        entry.location_id,
        entry.importance,
        entry.npc_ids,
        entry.created_at.timestamp(),
    )


def own_record(record: LocationRecord) -> LocationRecord:
    """A copy of a location record its holder may change: its one mutable field is copied
    (a deep copy costs ten times as much)."""
    return record.model_copy(update={"episodes": list(record.episodes)})


def section_key(entry: MemoryEntry) -> tuple[int, int | str]:
    """The section a memory is kept in, as store order sorts it: (0, room), (1, NPC), (2, 0)."""
    return _section(entry.scope, entry.location_id, entry.npc_ids)


def _rank_key(entry: MemoryEntry, order: OrderKey) -> tuple[int, float, OrderKey]:
    """The index's ranking: most important first, then newest, then store order. Only its
    importance levels are relied on: `MemoryCache.ranked` takes the levels it needs whole and
    sorts them by `ranking_key` (time of writing and store order do not rank memories)."""
    return -entry.importance, -entry.created_at.timestamp(), order


_Meta = tuple[int | None, tuple[str, ...], "tuple[tuple[int, float, OrderKey], str] | None"]
"""What the index keeps of a memory: its location id, NPC ids and ranked item (None: hidden)."""
_LevelKey = tuple[int, int, float, str, str, float]
"""A memory's `ranking_key` without its importance: its place in its importance level."""
_LevelItem = tuple[_LevelKey, OrderKey, str]
"""A memory in `MemoryIndex.levels`: its place in its level, then store order, then its id."""


class MemoryIndex:
    """Sorted id lists kept in step with a cache's memories, one change at a time. It keeps what
    it needs of each memory (`meta`), so it can drop one without reading it."""

    def __init__(self) -> None:
        self.order: dict[str, OrderKey] = {}
        self.meta: dict[str, _Meta] = {}
        self.by_location: dict[int, list[str]] = {}
        self.by_npc: dict[str, list[str]] = {}
        self.by_section: dict[tuple[int, int | str], list[str]] = {}
        self.ranked: list[tuple[tuple[int, float, OrderKey], str]] = []
        """Visible memories by `_rank_key`."""
        self.levels: dict[int, list[_LevelItem]] = {}
        """Importance levels of `ranked` (by -importance) in `ranking_key` order, for the
        levels a ranking has read (`MemoryCache.ranked` makes them from the memories, `add`
        and `remove` keep them in step; a row indexed without its memory drops its level)."""
        self._level_keys: dict[str, _LevelKey] = {}
        self.seq = 0

    def _insert(self, bucket: list[str], entry_id: str) -> None:
        order = self.order
        if not bucket or order[bucket[-1]] < order[entry_id]:
            bucket.append(entry_id)  # the usual case: the newest of its section
        else:
            bisect.insort(bucket, entry_id, key=order.__getitem__)

    def _remove(self, bucket: list[str], entry_id: str) -> None:
        at = bisect.bisect_left(bucket, self.order[entry_id], key=self.order.__getitem__)
        if at < len(bucket) and bucket[at] == entry_id:
            del bucket[at]

    def add(self, entry: MemoryEntry, seq: int | None = None) -> None:
        """Index `entry` (at the end of its section, or at `seq` when it keeps its place)."""
        if seq is None:
            self.seq += 1
            seq = self.seq
        order, entry_id, location_id, npcs, rank = entry_row(entry, seq)
        self._add_row(entry_id, order, location_id, npcs, rank)
        if rank is not None and (level := self.levels.get(rank[0])) is not None:
            key = self._level_keys[entry_id] = _level_key(entry)
            bisect.insort(level, (key, order, entry_id))

    def add_row(
        self,
        entry_id: str,
        order: OrderKey,
        location_id: int | None,
        npcs: tuple[str, ...],
        rank: tuple[int, float] | None,
    ) -> None:
        """Index a memory given as its row (see `from_columns`): its order key, location id,
        NPC ids (no repeats) and (-importance, -created_at) when visible."""
        self._add_row(entry_id, order, location_id, npcs, rank)
        if rank is not None:
            self.levels.pop(rank[0], None)  # its place in the level needs the memory

    def _add_row(
        self,
        entry_id: str,
        order: OrderKey,
        location_id: int | None,
        npcs: tuple[str, ...],
        rank: tuple[int, float] | None,
    ) -> None:
        self.order[entry_id] = order
        self.seq = max(self.seq, order[2])
        item = ((rank[0], rank[1], order), entry_id) if rank is not None else None
        self.meta[entry_id] = (location_id, npcs, item)
        if location_id is not None:
            self._insert(self.by_location.setdefault(location_id, []), entry_id)
        for npc in npcs:
            self._insert(self.by_npc.setdefault(npc, []), entry_id)
        self._insert(self.by_section.setdefault(order[:2], []), entry_id)
        if item is not None:
            bisect.insort(self.ranked, item)

    def remove(self, entry_id: str) -> int:
        """Drop a memory from every list; return its sequence number."""
        order = self.order[entry_id]
        location_id, npcs, item = self.meta.pop(entry_id)
        if location_id is not None:
            self._remove(self.by_location[location_id], entry_id)
        for npc in npcs:
            self._remove(self.by_npc[npc], entry_id)
        self._remove(self.by_section[order[:2]], entry_id)
        if item is not None:
            at = bisect.bisect_left(self.ranked, item)
            if at < len(self.ranked) and self.ranked[at] == item:
                del self.ranked[at]
            self._leave_level(item[0][0], entry_id, order)
        del self.order[entry_id]
        return order[2]

    def _leave_level(self, level_of: int, entry_id: str, order: OrderKey) -> None:
        """Take a memory out of its level in `levels` (the level is dropped, to be made again,
        when the memory is not found in it)."""
        key = self._level_keys.pop(entry_id, None)
        level = self.levels.get(level_of)
        if level is None:
            return
        if key is not None:
            item = (key, order, entry_id)
            at = bisect.bisect_left(level, item)
            if at < len(level) and level[at] == item:
                del level[at]
                return
        del self.levels[level_of]

    def level_ids(self, level_of: int) -> list[str]:
        """The ids of the visible memories of an importance level (-importance), in `ranked`
        order."""
        ranked = self.ranked
        start = bisect.bisect_left(ranked, level_of, key=_negated_importance)
        end = bisect.bisect_right(ranked, level_of, lo=start, key=_negated_importance)
        return [i for _, i in ranked[start:end]]

    def set_level(self, level_of: int, entries: Iterable[MemoryEntry]) -> list[_LevelItem]:
        """Put an importance level (-importance) into `levels`, in `ranking_key` order, from
        its memories (as `level_ids` names them); return it."""
        keys, order = self._level_keys, self.order
        level = []
        for entry in entries:
            key = keys[entry.id] = _level_key(entry)
            level.append((key, order[entry.id], entry.id))
        level.sort()
        self.levels[level_of] = level
        return level

    def holds(self, entry: MemoryEntry) -> bool:
        """Whether the index holds `entry` as it is: its section, location, NPCs, visibility
        and rank."""
        order, meta = self.order.get(entry.id), self.meta.get(entry.id)
        if order is None or meta is None:
            return False
        row = entry_row(entry, order[2])
        location_id, npcs, item = meta
        rank = None if item is None else item[0][:2]
        return (row[0], row[2], row[3], row[4]) == (order, location_id, npcs, rank)

    def in_order(self) -> list[str]:
        """Every id in store order."""
        return [i for section in sorted(self.by_section) for i in self.by_section[section]]

    @classmethod
    def of_entries(cls, entries: Iterable[MemoryEntry]) -> MemoryIndex:
        """The index `add` builds from `entries` one by one (each at the end of its section,
        numbered in the order given), built in bulk (`from_rows`: a parse or a merge of
        10,000 memories indexes them in milliseconds, not one insertion at a time)."""
        return cls.from_rows([entry_row(entry, seq) for seq, entry in enumerate(entries, 1)])

    @classmethod
    def from_rows(cls, rows: list[IndexRow]) -> MemoryIndex:
        """The index of memories given as rows (`index_row`) in any order: sorted into store
        order here, then `from_columns`."""
        rows.sort(key=first)  # (order keys are unique)
        return cls.from_columns(
            [row[1] for row in rows],
            [row[0] for row in rows],
            [row[2] for row in rows],
            [row[3] for row in rows],
            [row[4] for row in rows],
        )

    @classmethod
    def from_columns(
        cls,
        ids: list[str],
        orders: list[OrderKey],
        locations: list[int | None],
        npcs: list[tuple[str, ...]],
        ranks: list[tuple[int, float] | None],
        ranked: list[int] | None = None,
    ) -> MemoryIndex:
        """The index of memories given as columns, one row per memory in store order: its
        order key, location id, NPC ids and (-importance, -created_at) when visible. `ranked`:
        the rows in ranking order, when known (else sorted here). Built with comprehensions, so
        a store of 10,000 memories opens in milliseconds."""
        index = cls()
        index.order = dict(zip(ids, orders, strict=True))
        index.seq = max(map(third, orders), default=0)
        items = [
            None if rank is None else (rank + (order,), entry_id)  # noqa: RUF005 (faster)
            for rank, order, entry_id in zip(ranks, orders, ids, strict=True)
        ]
        index.meta = dict(zip(ids, zip(locations, npcs, items, strict=True), strict=True))
        if ranked is None:
            index.ranked = sorted(item for item in items if item is not None)
        else:
            index.ranked = [items[n] for n in ranked]  # type: ignore[misc]
        # rows come in store order: each section's ids are one run
        by_section = index.by_section
        for section, group in itertools.groupby(
            zip(map(_section_of, orders), ids, strict=True), key=first
        ):
            by_section.setdefault(section, []).extend(map(second, group))
        by_location = index.by_location
        for loc, group in itertools.groupby(zip(locations, ids, strict=True), key=first):
            if loc is not None:
                by_location.setdefault(loc, []).extend(map(second, group))
        by_npc = index.by_npc
        # (most memories have no NPC: only the rows that do are visited, picked out in C)
        for entry_id, names in itertools.compress(zip(ids, npcs, strict=True), npcs):
            for npc in names:
                by_npc.setdefault(npc, []).append(entry_id)
        return index


first = operator.itemgetter(0)
second = operator.itemgetter(1)
third = operator.itemgetter(2)
"""Column getters (C-level, for `map`) shared by the index and the snapshot."""
_section_of = operator.itemgetter(slice(0, 2))


def _negated_importance(item: tuple[tuple[int, float, OrderKey], str]) -> int:
    """-importance of an item of `MemoryIndex.ranked` (the order's first key)."""
    return item[0][0]


def _level_key(entry: MemoryEntry) -> _LevelKey:
    """A memory's `ranking_key` without its importance (its place in its level)."""
    return ranking_key(entry)[1:]


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
            read = ("scope", _SCOPE_RANK[scope])
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
            rank = _SCOPE_RANK[scope]
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
            at = bisect.bisect_right(ranked, level_of, lo=at, key=_negated_importance)
        return ids

    def _level(self, level_of: int) -> list[_LevelItem]:
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
        index = self.index
        meta = index.meta
        tallies: dict[CapKey, list[int]] = {}
        for entry_id, order in index.order.items():
            location_id, npcs, item = meta[entry_id]
            key = cap_key(_SCOPES[order[0]], location_id, npcs)
            tally = tallies.get(key)
            if tally is None:
                tally = tallies[key] = [0, 0]
            tally[item is None] += 1
        return {key: (tally[0], tally[1]) for key, tally in tallies.items()}

    def ids_with_status(self, status: MemoryStatus) -> list[str]:
        """The ids of the memories with this status, in store order (a lazy cache reads only
        the ones that are not visible: their status is not in the index)."""
        index, get = self.index, self.get
        if status in _VISIBLE:
            candidates = [i for i in index.in_order() if index.meta[i][2] is not None]
        else:
            candidates = [i for i in index.in_order() if index.meta[i][2] is None]
        return [i for i in candidates if (e := get(i)) is not None and e.status is status]


def targets(op: StoreOp) -> tuple[str, ...]:
    """The ids of the memories an op adds or changes."""
    if isinstance(op, AddOp | UpdateOp):
        return (op.entry.id,)
    if isinstance(op, SupersedeOp):
        return (op.old_id,)
    if isinstance(op, DeleteOp):
        return (op.entry_id,)
    return ()


class Undo:
    """Ops applied to a cache in place, with what each changed, so that all can be taken back
    (`MemoryCache.undoable`)."""

    def __init__(self, cache: MemoryCache) -> None:
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
