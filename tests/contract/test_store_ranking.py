"""The ranking (`IMemoryStore.ranked`: the top notes of every prompt, the objectives, the memory
tools) depends on what the memories say, never on how they came to be stored.

Two players keep the same history of memories. One played on a fast machine (every memory
stamped in the same second) and kept the file as written; the other on a slow machine (every
memory a second after the one before) and reordered the file by hand. Ids are random on both.
Their rankings must be the same, in every store kind, after the same changes, and after the
store is opened again (each store kind then ranks from its own load path: the snapshot,
SQLite's columns, PostgreSQL's rows).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.adapters.storage.store_ops import AddOp, DeleteOp, StoreOp, SupersedeOp, UpdateOp
from cairn.interfaces.store import IMemoryStore, ranking_key
from cairn.models.memory import MemoryEntry, MemoryScope, MemoryStatus, new_memory_id
from tests.contract.conftest import ALL_KINDS, FILE_NAMES, open_store
from tests.postgres import server

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
View = tuple[object, ...]


def history() -> list[MemoryEntry]:
    """A run's memories: four importance levels, two memories a turn (ties in game time),
    titles and texts that repeat (ties in content), in rooms, about NPCs and the world; and
    notes added without game time (`Memory.add`), an hour apart."""
    rng = random.Random(11)
    out = []
    for n in range(120):
        turn = (n % 60) // 2
        fields: dict[str, object] = {
            "title": rng.choice(["Open door", "Take lamp", "Dark room", "Troll"]),
            "text": f"Seen {rng.randrange(3)}",
            "importance": rng.choice((300, 400, 400, 500)),
            "episode": 1 + n // 60,
            "turn_start": turn,
            "turn_end": turn,
        }
        kind = n % 5
        if kind < 3:
            fields |= {"scope": MemoryScope.LOCATION, "location_id": 1 + n % 4}
        elif kind == 3:
            fields |= {"scope": MemoryScope.NPC, "npc_ids": [rng.choice(["troll", "thief"])]}
        else:
            fields["scope"] = MemoryScope.WORLD
        out.append(MemoryEntry(id="x", **fields))  # type: ignore[arg-type]
    for n in range(6):
        out.append(
            MemoryEntry(
                id="x",
                scope=MemoryScope.WORLD,
                title=f"Note {n % 2}",
                text="Added by hand",
                importance=400,
                created_at=T0 - timedelta(hours=n),
            )
        )
    return out


def view(entries: list[MemoryEntry]) -> list[View]:
    """What a ranking shows of each memory (everything but its id and time of writing)."""
    return [
        (e.title, e.text, e.importance, e.episode, e.turn_end, e.scope, e.location_id, e.npc_ids)
        for e in entries
    ]


def write(store: IMemoryStore, memories: list[MemoryEntry], *, slow: bool) -> list[str]:
    """Write the history: in order (fast machine) or in reverse order, a second apart (slow
    machine); memories without game time keep their own time. Returns the ids, by position."""
    ids = [new_memory_id() for _ in memories]
    order = list(range(len(memories)))
    with store.transaction() as tx:
        for n in reversed(order) if slow else order:
            memory = memories[n]
            timed = memory.episode is not None
            stamp = (T0 + timedelta(seconds=n) if slow else T0) if timed else memory.created_at
            tx.add(memory.model_copy(update={"id": ids[n], "created_at": stamp}))
    return ids


def change(store: IMemoryStore, ids: list[str], memories: list[MemoryEntry]) -> None:
    """The same changes a later turn makes: a failure fails again (its last turn moves on), a
    note gains importance, one is superseded by a new memory, one is retired, one is added."""
    newest = MemoryEntry(
        id=new_memory_id(),
        scope=MemoryScope.LOCATION,
        location_id=2,
        title="Take lamp",
        text="Seen 0",
        importance=400,
        episode=2,
        turn_start=29,
        turn_end=29,
    )
    with store.transaction() as tx:
        again = store.get(ids[3])
        assert again is not None
        tx.update(again.model_copy(update={"turn_end": 40, "episode": 2}))
        raised = store.get(ids[70])
        assert raised is not None
        tx.update(raised.model_copy(update={"importance": 500}))
        tx.add(newest)
        tx.supersede(ids[100], newest.id)
        retired = store.get(ids[121])
        assert retired is not None
        tx.update(retired.model_copy(update={"status": MemoryStatus.SUPERSEDED}))


def rankings(store: IMemoryStore) -> list[list[View]]:
    return [view(store.ranked(limit)) for limit in (1, 7, 30, 10_000)]


@pytest.fixture(params=ALL_KINDS)
def two_stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], tuple[IMemoryStore, IMemoryStore]]]:
    """Opens the two players' stores (of one kind), again at each call."""
    kind = str(request.param)
    if kind == "postgres":
        server()
    opened: list[IMemoryStore] = []
    shared = (InMemoryStore(), InMemoryStore())

    def open_both() -> tuple[IMemoryStore, IMemoryStore]:
        if kind == "inmemory":
            return shared
        fast, slow = (
            open_store(kind, tmp_path / player / FILE_NAMES[kind]) for player in ("a", "b")
        )
        opened.extend((fast, slow))
        return fast, slow

    yield open_both
    for store in opened:
        store.close()


def test_two_players_with_the_same_memories_see_the_same_ranking(
    two_stores: Callable[[], tuple[IMemoryStore, IMemoryStore]],
) -> None:
    memories = history()
    fast, slow = two_stores()
    fast_ids = write(fast, memories, slow=False)
    slow_ids = write(slow, memories, slow=True)
    shown = rankings(fast)
    assert rankings(slow) == shown
    # the most important first; among them the latest in game time; no game time after those
    top = view(fast.ranked(10_000))
    assert [m[2] for m in top] == sorted((m[2] for m in top), reverse=True)
    fours = [m for m in top if m[2] == 400]
    timed = [(m[3], m[4]) for m in fours if m[3] is not None]
    assert timed == sorted(timed, reverse=True)
    assert [(m[0], m[3]) for m in fours[-6:]] == [("Note 0", None), ("Note 1", None)] * 3

    change(fast, fast_ids, memories)
    change(slow, slow_ids, memories)
    changed = rankings(fast)
    assert changed != shown and rankings(slow) == changed

    fast, slow = two_stores()  # opened again: ranked from each store's load path
    assert rankings(fast) == changed and rankings(slow) == changed


def session_step(rng: random.Random, cache: MemoryCache, n: int) -> list[StoreOp]:
    """One turn's change: mostly new memories, on three importance levels, in two episodes."""
    ids = list(cache.memories)
    roll = rng.random()
    if roll < 0.5 or not ids:
        turn = rng.randrange(30)
        return [
            AddOp(
                MemoryEntry(
                    id=f"s-{n:04d}",
                    scope=MemoryScope.LOCATION if n % 3 else MemoryScope.WORLD,
                    location_id=1 + n % 4 if n % 3 else None,
                    title=rng.choice(["Open door", "Take lamp", "Troll"]),
                    text=f"Seen {rng.randrange(3)}",
                    importance=rng.choice((300, 400, 500)),
                    episode=rng.choice((1, 2)),
                    turn_start=turn,
                    turn_end=turn,
                    created_at=T0 + timedelta(seconds=rng.randrange(5)),
                )
            )
        ]
    target = cache.memories[rng.choice(ids)]
    if roll < 0.65:  # a failure that failed again, later
        return [UpdateOp(target.model_copy(update={"turn_end": (target.turn_end or 0) + 7}))]
    if roll < 0.75:
        return [UpdateOp(target.model_copy(update={"importance": rng.choice((300, 400, 500))}))]
    if roll < 0.85:
        return [SupersedeOp(target.id, None)]
    return [DeleteOp(target.id)]


def test_the_ranking_stays_the_one_of_every_memory_by_ranking_key_change_by_change() -> None:
    """The index keeps its importance levels in order as memories come, change and go (a
    level's first reading orders it; later changes move one memory each)."""
    rng = random.Random(7)
    cache = MemoryCache()
    for n in range(400):
        cache.apply_all(session_step(rng, cache, n))
        expected = sorted((m for m in cache.select() if m.visible), key=ranking_key)
        limit = (3, 20, 10_000)[n % 3]
        assert cache.ranked(limit) == expected[:limit], n
