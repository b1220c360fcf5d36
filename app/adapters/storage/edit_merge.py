"""Merging a memory file that someone else saved with what the store holds.

A person's editor takes no lock: it saves a copy of the file as it was when the person opened
it, plus their edits. Taken as the truth, that copy would drop every memory cairn wrote since.
`EditHistory` remembers, per memory and location record, every version the store has held and
when (a generation number, one per load or write), so a merge can tell:

- an unedited copy of a version the store held (take the store's, which is newer or equal)
  from a person's edit (take the person's);
- a memory the editor never saw from one the person deleted. The editor's copy was taken from
  some earlier file (a write of this store, or a save merged before); the newest version the
  copy shows names that file. A memory the copy lacks is a deletion only if that file held it:
  the store held it by then, and that file was not one of the saves that lacked it.

When the file lost more than half of the memories the store holds (at least ten), the merge
takes no deletion from it: a sudden shrink is an editor's partial save far more often than a
person's intent (delete in bulk with cairn stopped).

These are rules 2 and 4 of the live-edit protocol; `live_edit` states them all, with the
constants (`VERSIONS_KEPT`, `ABSENT_KEPT`, `SHRINK_SHARE`, `SHRINK_MIN_HELD`) and their reasons.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cairn.adapters.storage.live_edit import (
    ABSENT_KEPT,
    SHRINK_MIN_HELD,
    SHRINK_SHARE,
    VERSIONS_KEPT,
)
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.models.memory import LocationRecord, MemoryEntry

log = logging.getLogger(__name__)

_RecordKey = tuple[str, int, tuple[int, ...]]


def _record_key(record: LocationRecord) -> _RecordKey:
    return (record.name, record.visits, tuple(record.episodes))


@dataclass
class MergeResult:
    """The merged cache and what the merge decided, for the log."""

    cache: MemoryCache
    restored: list[str] = field(default_factory=list)
    """Memories the file lacked that its writer never saw: kept."""
    deleted: list[str] = field(default_factory=list)
    """Memories the file lacked that its writer had seen: deleted by hand."""
    edited: list[str] = field(default_factory=list)
    """Memories the file holds in a version this store never held: edits (or other writers')."""
    shrink: bool = False
    """The file lost more than half of the memories, or was cut short: no deletion was taken
    from it (`live_edit` rule 4)."""
    cut: bool = False
    """The save was cut short (it ends mid-line, or inside a unit cairn appended) and lacked
    memories: they were kept."""

    def log(self, path: Path, source: str, held: MemoryCache) -> None:
        """Log what the merge of a save into `path` decided (`source`: where the save was
        found; `held`: the cache the store held before)."""
        if self.cut:
            log.warning(
                "%s: a save (%s) was cut short (it ends mid-line or inside a unit cairn"
                " appended) and lacked %d memories; kept them (a deletion by hand is taken from"
                " a whole save, ending with a line end)",
                path,
                source,
                len(self.restored),
            )
        elif self.shrink:
            log.warning(
                "%s: a save (%s) lost %d of %d memories at once; kept them (delete in bulk"
                " with cairn stopped)",
                path,
                source,
                len(self.restored),
                len(held.memories),
            )
        elif self.restored:
            log.info(
                "%s: kept %d memories that a save (%s) never saw", path, len(self.restored), source
            )
        if self.deleted:
            log.info("%s: %d memories deleted by hand", path, len(self.deleted))


def _copied_header(entry: MemoryEntry, ours: MemoryCache) -> bool:
    """Whether a memory the store does not hold has the title and place of one it does: what
    a cut leaves of a block of ours (its header, without its comment)."""
    return any(
        e.title == entry.title and e.scope is entry.scope and e.location_id == entry.location_id
        for e in ours.memories.values()
    )


class EditHistory:
    """The versions of memories and location records a store has held, by generation."""

    def __init__(self) -> None:
        self.generation = 0
        self._first_seen: dict[str, int] = {}
        self._versions: dict[str, list[tuple[MemoryEntry, int]]] = {}
        self._records: dict[int, list[tuple[_RecordKey, int]]] = {}
        self._record_first: dict[int, int] = {}
        self._loaded: tuple[int, frozenset[str], Callable[[str], MemoryEntry | None]] | None = None
        """A lazy load: its generation, the memories it held, and their versions then."""
        self._absent: dict[int, frozenset[str]] = {}
        """generation of a merged save -> the memories it lacked and the store kept."""

    def observe(
        self,
        cache: MemoryCache,
        ids: Iterable[str] | None = None,
        location_ids: Iterable[int] | None = None,
    ) -> int:
        """Record the versions `cache` (a file as written or read) holds of `ids` (all memories
        when None) and of the location records `location_ids` (all when None), as one new
        generation; return it."""
        self.generation += 1
        self._record(self.generation, cache, ids, location_ids)
        return self.generation

    def held_too(self, cache: MemoryCache, ids: Iterable[str | int]) -> None:
        """The file of the newest generation (a save just merged) also held the versions
        `cache` holds of these memories (str ids) and location records (int ids): a unit of
        work this store appended as the save landed. Its bytes stay in that file (whole, or
        their end after the saved text) until the store writes again, and a copy an editor
        takes meanwhile shows them: without them here, the newest version such a copy shows
        would be of the store's next write, and the copy would seem to delete every memory
        that write restored."""
        ids = list(ids)
        memory_ids = [i for i in ids if isinstance(i, str)]
        location_ids = [i for i in ids if isinstance(i, int)]
        self._record(self.generation, cache, memory_ids, location_ids)

    def _record(
        self,
        gen: int,
        cache: MemoryCache,
        ids: Iterable[str] | None,
        location_ids: Iterable[int] | None,
    ) -> None:
        """Record the versions `cache` holds of `ids` and `location_ids` (all when None) as
        held by the file of generation `gen`."""
        for memory_id in cache.memories if ids is None else ids:
            entry = cache.get(memory_id)
            if entry is None:
                continue
            self._first_seen.setdefault(memory_id, self._loaded_in(memory_id) or gen)
            versions = self._versions.setdefault(memory_id, [])
            if not versions or versions[-1][0] != entry:
                versions.append((entry, gen))
                del versions[:-VERSIONS_KEPT]
        records = cache.locations
        for loc_id in records if location_ids is None else location_ids:
            record = records.get(loc_id)
            if record is None:
                continue
            key = _record_key(record)
            self._record_first.setdefault(loc_id, gen)
            seen = self._records.setdefault(loc_id, [])
            if not seen or seen[-1][0] != key:
                seen.append((key, gen))
                del seen[:-VERSIONS_KEPT]

    def observe_loaded(
        self, cache: MemoryCache, original: Callable[[str], MemoryEntry | None]
    ) -> int:
        """Record a lazily loaded cache as one new generation without reading its memories:
        `original(id)` gives the version a memory had when it was loaded, when a merge needs
        it."""
        self.observe(cache, ids=())
        self._loaded = (self.generation, frozenset(cache.index.order), original)
        return self.generation

    def _loaded_in(self, memory_id: str) -> int | None:
        """The generation of the lazy load that held this memory, if one did."""
        if self._loaded is not None and memory_id in self._loaded[1]:
            return self._loaded[0]
        return None

    def _first(self, memory_id: str, default: int) -> int:
        return self._first_seen.get(memory_id) or self._loaded_in(memory_id) or default

    def _entry_gen(self, entry: MemoryEntry) -> int | None:
        """The newest generation that held exactly this version, or None (never held)."""
        for version, gen in reversed(self._versions.get(entry.id, ())):
            if version == entry:
                return gen
        loaded = self._loaded_in(entry.id)
        if loaded is not None and self._loaded is not None and self._loaded[2](entry.id) == entry:
            return loaded
        return None

    def _record_gen(self, record: LocationRecord) -> int | None:
        key = _record_key(record)
        for version, gen in reversed(self._records.get(record.id, ())):
            if version == key:
                return gen
        return None

    def merge(
        self,
        theirs: MemoryCache,
        ours: MemoryCache,
        archived: Collection[str] = (),
        cut: str | None = None,
    ) -> MergeResult:
        """`theirs` (a file someone saved) merged into `ours` (what this store holds).
        `archived`: memories the store moved to its archive; an unedited copy of one stays
        there. `cut`: the save was cut short (rule 4: no deletion is taken from it), and its
        last block is where it was cut (an id: its version there is not taken as an edit)."""
        entry_gens = {
            i: self._entry_gen(e) for i, e in theirs.memories.items() if i in ours.memories
        }
        record_gens = [self._record_gen(r) for r in theirs.locations.values()]
        # The writer of `theirs` saw everything up to the newest version it shows.
        base = max(
            [g for g in entry_gens.values() if g is not None] + [g for g in record_gens if g],
            default=0,
        )
        out = MemoryCache()
        result = MergeResult(out)
        for memory_id, entry in theirs.memories.items():
            mine = ours.memories.get(memory_id)
            if mine is None and memory_id in archived and self._entry_gen(entry) is not None:
                continue  # an unedited copy of an archived memory: it stays archived
            if mine is None and memory_id == cut and _copied_header(entry, ours):
                continue  # the cut left a block of ours its header, read as a new memory
            if mine is not None and (entry_gens.get(memory_id) is not None or memory_id == cut):
                # an unedited copy (ours is newer or equal), or the block a cut fell in
                out.memories[memory_id] = mine
            else:
                out.memories[memory_id] = entry
                if mine is not None:
                    result.edited.append(memory_id)
        missing = [i for i in ours.memories if i not in theirs.memories]
        result.cut = cut is not None and bool(missing)
        result.shrink = result.cut or (
            len(missing) * SHRINK_SHARE > len(ours.memories) >= SHRINK_MIN_HELD
        )
        absent_from_base = self._absent.get(base, frozenset())
        for memory_id in missing:
            in_base = self._first(memory_id, base + 1) <= base
            if result.shrink or not in_base or memory_id in absent_from_base:
                out.memories[memory_id] = ours.memories[memory_id]
                result.restored.append(memory_id)
            else:
                result.deleted.append(memory_id)
        for loc_id, record in theirs.locations.items():
            mine_record = ours.locations.get(loc_id)
            unedited = mine_record is not None and self._record_gen(record) is not None
            out.locations[loc_id] = mine_record if unedited and mine_record else record
        used = {e.location_id for e in out.memories.values()}
        for loc_id, mine_record in ours.locations.items():
            new = self._record_first.get(loc_id, 0) > base
            if loc_id not in out.locations and (loc_id in used or new or result.shrink):
                out.locations[loc_id] = mine_record
        # `theirs` is a file now: what it brought (new memories, edits) is of its generation,
        # and so is the list of what it lacked.
        taken = MemoryCache()
        taken.memories = {i: e for i, e in theirs.memories.items() if out.memories.get(i) is e}
        taken.locations = theirs.locations
        gen = self.observe(taken)
        self._absent[gen] = frozenset(result.restored)
        for old in [g for g in self._absent if g < gen - ABSENT_KEPT]:
            del self._absent[old]
        return result


def differing(ours: MemoryCache, theirs: MemoryCache) -> list[str | int]:
    """The memories and location records `ours` holds that `theirs` lacks or holds otherwise."""
    found: list[str | int] = [
        i for i, e in ours.memories.items() if theirs.memories.get(i) not in (e,)
    ]
    for loc_id, record in ours.locations.items():
        other = theirs.locations.get(loc_id)
        if other is None or other != record:
            found.append(loc_id)
    return found
