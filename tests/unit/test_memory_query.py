"""Seed-003 query tools: clamping, empty input errors, lexical ranking, location by id or name."""

from __future__ import annotations

from collections.abc import Sequence

from app.adapters.storage.memory_store import InMemoryStore
from app.events.publisher import EventPublisher
from app.models.memory import MemoryEntry, MemoryScope
from app.services.map_graph import MapGraph
from app.services.memory_query import MemoryQueryTools
from app.services.memory_service import MemoryService
from app.services.policy import MemoryPolicy
from app.testing import FakeSummarizer


def tools_with(entries: list[MemoryEntry], ranker: object = None) -> MemoryQueryTools:
    store = InMemoryStore()
    with store.transaction() as tx:
        for e in entries:
            tx.add(e)
    service = MemoryService(store, FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy())
    return MemoryQueryTools(service, ranker=ranker)  # type: ignore[arg-type]


def loc(loc_id: int, name: str, title: str, text: str, importance: int = 500) -> MemoryEntry:
    return MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=loc_id,
        location_name=name,
        title=title,
        text=text,
        importance=importance,
    )


def test_top_memories_limit_is_clamped_to_1_20() -> None:
    tools = tools_with([loc(1, "A", f"M{n}", "t", importance=n + 1) for n in range(25)])
    assert tools.get_top_memories(0).startswith("Top 1 ")
    assert tools.get_top_memories(99).startswith("Top 20 ")
    assert "M24" in tools.get_top_memories(1)


def test_empty_inputs_give_clear_error_strings() -> None:
    tools = tools_with([loc(1, "A", "x", "y")])
    assert tools.query_memories("  ").startswith("Error:")
    assert tools.get_location_memories("").startswith("Error:")


def test_query_ranks_lexically_offline() -> None:
    tools = tools_with(
        [
            loc(1, "Hall", "Lamp", "The brass lantern is in the living room"),
            loc(2, "Yard", "Mailbox", "A leaflet in the mailbox"),
        ]
    )
    answer = tools.query_memories("Where is the brass lantern?")
    assert "Lamp" in answer and "Mailbox" not in answer


def test_query_passes_a_bounded_candidate_set_to_the_ranker() -> None:
    seen: list[int] = []

    def ranker(question: str, candidates: Sequence[MemoryEntry]) -> str:
        seen.append(len(candidates))
        return "ranked"

    tools = tools_with([loc(1, "A", f"key {n}", "rusty key") for n in range(50)], ranker)
    assert tools.query_memories("rusty key") == "ranked"
    assert seen == [30]


def test_location_memories_by_id_or_by_repeated_name() -> None:
    tools = tools_with(
        [
            loc(10, "Forest Path", "North", "a tree"),
            loc(11, "Forest Path", "South", "a bird"),
            loc(12, "Clearing", "Grate", "a grating"),
        ]
    )
    by_name = tools.get_location_memories("forest path")
    assert "Location 10" in by_name and "Location 11" in by_name and "Grate" not in by_name
    assert "Grate" in tools.get_location_memories(12)
    assert "No location named" in tools.get_location_memories("Nowhere")
