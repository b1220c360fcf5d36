"""Persistence levels from the reference tool's files (`core`, `permanent`, `ephemeral`) mean
something (issue 31): before, they were read, written back and ignored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.adapters.storage.markdown_parse import parse
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.models.game import GameState
from cairn.models.memory import MemoryEntry, MemoryScope, MemoryStatus
from cairn.services.clock import DeterministicClock
from cairn.services.map import MapGraph
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.testing import FakeSummarizer

HALL = 1


def memory(n: int, persistence: str | None, importance: int = 500, **kw: object) -> MemoryEntry:
    return MemoryEntry(
        id=f"m-{n}",
        scope=MemoryScope.LOCATION,
        location_id=HALL,
        title=f"Memory {n}",
        text=f"Text {n}.",
        importance=importance,
        persistence=persistence,
        **kw,  # type: ignore[arg-type]
    )


def service(store: InMemoryStore, clock: DeterministicClock, **policy: int) -> MemoryService:
    return fiction_memory_service(
        store, FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy(**policy), clock=clock
    )


def test_core_and_permanent_outlast_the_caps_and_ephemeral_goes_first() -> None:
    store = InMemoryStore()
    with store.transaction() as tx:
        tx.add(memory(1, "core", importance=10))
        tx.add(memory(2, "Permanent", importance=20))  # (levels compare without case)
        tx.add(memory(3, "ephemeral", importance=990))
        tx.add(memory(4, None, importance=400))
        tx.add(memory(5, None, importance=300))
    svc = service(store, DeterministicClock(seed=1), cap_per_location=3)
    svc.prune()
    statuses = {e.id: e.status for e in store.entries()}
    # two too many: the ephemeral one first (despite its importance), then the least useful
    # other; core and permanent stay although they matter least
    assert statuses == {
        "m-1": MemoryStatus.ACTIVE,
        "m-2": MemoryStatus.ACTIVE,
        "m-3": MemoryStatus.SUPERSEDED,
        "m-4": MemoryStatus.ACTIVE,
        "m-5": MemoryStatus.SUPERSEDED,
    }


def test_core_and_permanent_are_kept_even_past_the_cap() -> None:
    store = InMemoryStore()
    with store.transaction() as tx:
        for n, level in enumerate(["core", "permanent", "core", None], start=1):
            tx.add(memory(n, level))
    service(store, DeterministicClock(seed=1), cap_per_location=1).prune()
    visible = sorted(e.id for e in store.entries() if e.visible)
    assert visible == ["m-1", "m-2", "m-3"]


def test_an_ephemeral_memory_lasts_its_episode() -> None:
    clock = DeterministicClock(seed=1)
    store = InMemoryStore()
    svc = service(store, clock)
    with store.transaction() as tx:
        tx.add(memory(1, "ephemeral", created_at=clock.now() + timedelta(seconds=1)))
        tx.add(memory(2, "core", created_at=clock.now() + timedelta(seconds=1)))
    assert [e.id for e in svc.location_memories(HALL)] == ["m-1", "m-2"]
    assert sorted(e.id for e in svc.top_memories(5)) == ["m-1", "m-2"]
    for _ in range(5):  # (the clock advances a second per reading)
        clock.now()
    svc.end_episode(GameState())
    assert [e.id for e in svc.location_memories(HALL)] == ["m-2"]
    assert [e.id for e in svc.top_memories(5)] == ["m-2"]
    assert {e.id for e in store.entries()} == {"m-1", "m-2"}  # kept in the store, as it was


def test_the_reference_tools_levels_are_read_from_memories_md() -> None:
    text = (
        "# Location Memories\n\n## Location 1: Hall\n\n### Memories\n\n"
        "**[NOTE - ephemeral] Door ajar** *(Ep1, T3)*\nThe door is ajar for now.\n\n"
        "**[SUCCESS - core] Lamp** *(Ep1, T4)*\nThe lamp lights the cellar.\n"
    )
    levels = {e.title: e.persistence for e in parse(text, "Memories.md").cache.memories.values()}
    assert levels == {"Door ajar": "ephemeral", "Lamp": "core"}


def test_the_episode_mark_takes_no_reading_of_a_deterministic_clock() -> None:
    """A replay's times stay as they were: marking an episode's start (at the service's
    construction and at each episode's end) reads no second off the deterministic clock."""
    clock = DeterministicClock(seed=1)
    store = InMemoryStore()
    svc = service(store, clock)
    assert clock.mark() == clock.now() == datetime(2026, 1, 1, tzinfo=UTC)
    svc.end_episode(GameState())
    assert clock.now() == datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC)


def test_memories_read_back_by_id_keep_the_order_given_and_leave_out_what_is_over() -> None:
    """A prompt section's memories read back by id: in the section's order, without one that
    was superseded, one that is gone, and an ephemeral one of an earlier episode."""
    clock = DeterministicClock(seed=1)
    store = InMemoryStore()
    svc = service(store, clock)
    with store.transaction() as tx:
        tx.add(memory(1, "ephemeral", created_at=clock.now() - timedelta(days=1)))
        tx.add(memory(2, "permanent"))
        tx.add(memory(3, None))
        tx.add(memory(4, None, status=MemoryStatus.SUPERSEDED))
    ids = ["m-3", "m-gone", "m-4", "m-2", "m-1"]
    assert [e.id for e in svc.memories_by_id(ids)] == ["m-3", "m-2"]
    assert svc.memories_by_id([]) == []
