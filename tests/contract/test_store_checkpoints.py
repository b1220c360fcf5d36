"""Checkpoints on every store (in memory, markdown, SQLite, PostgreSQL): a restore makes the
live view exactly the checkpoint's (later memories SUPERSEDED and tagged `undone`, never
deleted; those it had back as they were, from the archive too), and the archive step moves
the undone ones to the archive. Before this, loading a save left every later memory live."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.store import IMemoryStore
from cairn.models.checkpoint import UNDONE_TAG, MemoryCheckpoint
from cairn.models.game import GameState, LocationState, NPCInstance
from cairn.models.kinds import WorldEvent
from cairn.models.memory import MemoryEntry, MemoryScope, MemoryStatus
from cairn.services.map import MapGraph
from cairn.services.memory_core import VISIBLE
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.testing import FakeSummarizer
from tests.contract.conftest import StoreFactory


def service_on(store: IMemoryStore) -> MemoryService:
    return fiction_memory_service(
        store, FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )


def harbour() -> GameState:
    gs = GameState()
    gs.locations = {1: LocationState(id=1, name="Harbour"), 2: LocationState(id=2, name="Market")}
    gs.npcs = {"mira": NPCInstance(instance_id="mira", name="Mira", current_location_id=1)}
    gs.scenario.current_location_id = 1
    return gs


def add(store: IMemoryStore, *entries: MemoryEntry) -> None:
    with store.transaction() as tx:
        for entry in entries:
            tx.add(entry)


def note(title: str, **fields: object) -> MemoryEntry:
    return MemoryEntry(scope=MemoryScope.LOCATION, location_id=1, title=title, **fields)  # type: ignore[arg-type]


def visible_ids(store: IMemoryStore) -> list[str]:
    return [e.id for e in store.entries(statuses=VISIBLE)]


def saved(service: MemoryService, gs: GameState) -> GameState:
    """Take the checkpoint and load the game state back from its JSON, as from a save file."""
    service.checkpoint(gs)
    assert gs.memory_checkpoint is not None  # outside a unit of work: taken at once
    return GameState.model_validate_json(gs.model_dump_json())


def test_a_restore_brings_back_the_checkpoints_live_view(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    service = service_on(store)
    gs = harbour()
    kept = note("Rope on the pier")
    replaced = note("The pier is empty")
    doubted = note("Gulls steal fish", status=MemoryStatus.TENTATIVE)
    retired = note("Fog at dawn")
    already_hidden = note("A ship left", status=MemoryStatus.SUPERSEDED)
    add(store, kept, replaced, doubted, retired, already_hidden)
    gs.add_message("Mira the harbourmaster waves you over.", npcs_present=["mira"])
    service.on_location_exit(gs)  # a visit and an NPC memory, cursors at message 0
    before = visible_ids(store)
    loaded = saved(service, gs)
    mark = loaded.memory_checkpoint
    assert isinstance(mark, MemoryCheckpoint) and mark.visible == before
    assert mark.tentative == [doubted.id]

    # played on: a quest, Mira met again, a memory replaced, one invalidated, one retired
    gs.add_message("You find the crate.")
    service.on_world_event(gs, WorldEvent.QUEST_COMPLETED, related={"quest_id": "cargo"})
    gs.add_message("Mira thanks you.", npcs_present=["mira"])
    service.on_location_exit(gs)
    newer = note("A crate on the pier")
    add(store, newer)
    with store.transaction() as tx:
        tx.supersede(replaced.id, newer.id)
        tx.supersede(doubted.id, None)
        tx.update(
            retired.model_copy(update={"status": MemoryStatus.SUPERSEDED, "tags": ["pruned"]})
        )
    later = [i for i in visible_ids(store) if i not in before]
    assert len(later) == 4  # the world event, the visit, Mira again, the replacement
    assert gs.scenario.last_world_message_index == 1

    report = service.restore(loaded, mark)

    assert visible_ids(store) == before  # exactly the checkpoint's, in store order
    assert sorted(report.undone) == sorted(later)
    assert sorted(report.revived) == sorted([replaced.id, doubted.id, retired.id])
    assert report.lost == [] and report.from_archive == []
    for memory_id in later:
        undone = store.get(memory_id)
        assert undone is not None and undone.status is MemoryStatus.SUPERSEDED
        assert UNDONE_TAG in undone.tags and undone.superseded_by is None
    assert store.get(doubted.id).status is MemoryStatus.TENTATIVE  # type: ignore[union-attr]
    back = store.get(replaced.id)
    assert back is not None and back.superseded_by is None and back.status is MemoryStatus.ACTIVE
    assert store.get(retired.id).tags == []  # type: ignore[union-attr]
    assert store.get(already_hidden.id).status is MemoryStatus.SUPERSEDED  # type: ignore[union-attr]
    scenario = loaded.scenario
    assert scenario.last_world_message_index == mark.cursors.last_world_message_index == -1
    assert scenario.last_location_message_index == {1: 0}
    assert scenario.last_npc_message_index == {"mira": 0}

    # kept on disk as restored, and the archive step moves the undone ones to the archive
    reopened = store_factory.open() if store_factory.durable else store
    assert visible_ids(reopened) == before
    reopened.checkpoint()
    if store_factory.kind == "inmemory":  # no archive: they stay, SUPERSEDED
        assert all(reopened.get(i) is not None for i in later)
    else:
        archived = {e.id: e for e in reopened.archived()}
        assert set(later) <= set(archived)
        assert all(UNDONE_TAG in archived[i].tags for i in later)
        assert all(reopened.get(i) is None for i in later)
    assert visible_ids(reopened) == before


def test_a_memory_archived_since_the_checkpoint_comes_back_from_the_archive(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    service = service_on(store)
    gs = harbour()
    old = note("The lighthouse is lit", importance=700)
    add(store, old)
    loaded = saved(service, gs)
    newer = note("The lighthouse is dark")
    add(store, newer)
    with store.transaction() as tx:
        tx.supersede(old.id, newer.id)
    store.checkpoint()  # the episode ended: `old` is in the archive (durable stores)
    durable = store_factory.kind != "inmemory"
    assert (store.get(old.id) is None) == durable

    report = service.restore(loaded, loaded.memory_checkpoint)  # type: ignore[arg-type]

    assert report.revived == [old.id]
    assert report.from_archive == ([old.id] if durable else [])
    assert report.undone == [newer.id]
    reopened = store_factory.open() if store_factory.durable else store
    back = reopened.get(old.id)
    assert back is not None and back.status is MemoryStatus.ACTIVE and back.importance == 700
    assert visible_ids(reopened) == [old.id]
    assert old.id not in {e.id for e in reopened.archived()}  # live again, not the archive's
    with reopened.transaction() as tx:  # superseded again, archived again: listed once
        tx.supersede(old.id, None)
    reopened.checkpoint()
    again = [e for e in reopened.archived() if e.id == old.id]
    assert len(again) == (1 if durable else 0)


def test_restoring_twice_and_then_a_later_save_gives_each_saves_view(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    service = service_on(store)
    gs = harbour()
    first = note("First")
    add(store, first)
    early = saved(service, gs)
    second = note("Second")
    add(store, second)
    late = saved(service, gs)
    third = note("Third")
    add(store, third)

    service.restore(early, early.memory_checkpoint)  # type: ignore[arg-type]
    assert visible_ids(store) == [first.id]
    service.restore(late, late.memory_checkpoint)  # type: ignore[arg-type]
    assert visible_ids(store) == [first.id, second.id]
    revived = store.get(second.id)
    assert revived is not None and UNDONE_TAG not in revived.tags
    assert UNDONE_TAG in store.get(third.id).tags  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", ["markdown", "sqlite"])
def test_the_checkpoint_travels_in_the_saved_game_state(tmp_path: Path, kind: str) -> None:
    from tests.contract.conftest import open_store

    name = "Memories.md" if kind == "markdown" else "memories.sqlite3"
    store = open_store(kind, tmp_path / name)
    try:
        service = service_on(store)
        gs = harbour()
        add(store, note("Rope on the pier"))
        gs.add_message("Mira waves.", npcs_present=["mira"])
        service.on_location_exit(gs)
        service.checkpoint(gs)
        text = gs.model_dump_json()
    finally:
        store.close()
    loaded = GameState.model_validate_json(text)
    assert loaded.memory_checkpoint == gs.memory_checkpoint
    assert loaded.memory_checkpoint is not None
    assert loaded.memory_checkpoint.cursors.last_location_message_index == {1: 0}
    assert len(loaded.memory_checkpoint.visible) == 3
