"""MemoryIndex: sorted id lists (store order, sections, rooms, NPCs, ranking) kept in step."""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Iterable, Sequence

from cairn.interfaces.store import ranking_key
from cairn.models.memory import VISIBLE_STATUSES, CapKey, MemoryEntry, MemoryScope, cap_key

_VISIBLE = VISIBLE_STATUSES

OrderKey = tuple[int, int | str, int]
"""Store order: (section rank, section key, sequence). Locations by id, then NPCs by their first
id, then the world; within a section the order memories were added (the order a file holds)."""


SCOPE_RANK = {MemoryScope.LOCATION: 0, MemoryScope.NPC: 1, MemoryScope.WORLD: 2}
"""The first element of a section's key (`section_key`), by scope."""
SCOPES = {rank: scope for scope, rank in SCOPE_RANK.items()}


def _section(scope: str, location_id: int | None, npc_ids: Sequence[str]) -> tuple[int, int | str]:
    """The section of a memory with these fields (the scope as an enum or its value: a
    `StrEnum` key finds both): (0, room), (1, first NPC), (2, 0); an unknown scope is the
    world's."""
    rank = SCOPE_RANK.get(scope, 2)  # type: ignore[call-overload]
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


def section_key(entry: MemoryEntry) -> tuple[int, int | str]:
    """The section a memory is kept in, as store order sorts it: (0, room), (1, NPC), (2, 0)."""
    return _section(entry.scope, entry.location_id, entry.npc_ids)


_Meta = tuple[int | None, tuple[str, ...], "tuple[tuple[int, float, OrderKey], str] | None"]
"""What the index keeps of a memory: its location id, NPC ids and ranked item (None: hidden)."""
_LevelKey = tuple[int, int, float, str, str, float]
"""A memory's `ranking_key` without its importance: its place in its importance level."""
LevelItem = tuple[_LevelKey, OrderKey, str]
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
        """Visible memories, most important first, then newest, then store order (each item is
        ((-importance, -created_at, order), id)). Only its importance levels are relied on:
        `MemoryCache.ranked` takes the levels it needs whole and sorts them by `ranking_key`
        (time of writing and store order do not rank memories)."""
        self.levels: dict[int, list[LevelItem]] = {}
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
        start = bisect.bisect_left(ranked, level_of, key=negated_importance)
        end = bisect.bisect_right(ranked, level_of, lo=start, key=negated_importance)
        return [i for _, i in ranked[start:end]]

    def set_level(self, level_of: int, entries: Iterable[MemoryEntry]) -> list[LevelItem]:
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

    def scope_counts(self) -> dict[CapKey, tuple[int, int]]:
        """(visible, hidden) per scope key (`IMemoryStore.scope_counts`): no memory is read."""
        meta = self.meta
        tallies: dict[CapKey, list[int]] = {}
        for entry_id, order in self.order.items():
            location_id, npcs, item = meta[entry_id]
            key = cap_key(SCOPES[order[0]], location_id, npcs)
            tally = tallies.get(key)
            if tally is None:
                tally = tallies[key] = [0, 0]
            tally[item is None] += 1
        return {key: (tally[0], tally[1]) for key, tally in tallies.items()}

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


def negated_importance(item: tuple[tuple[int, float, OrderKey], str]) -> int:
    """-importance of an item of `MemoryIndex.ranked` (the order's first key)."""
    return item[0][0]


def _level_key(entry: MemoryEntry) -> _LevelKey:
    """A memory's `ranking_key` without its importance (its place in its level)."""
    return ranking_key(entry)[1:]
