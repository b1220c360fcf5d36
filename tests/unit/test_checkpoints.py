"""Saving and loading a game: SaveGame / RestoreGame through the bus, the GameHandler with an
autospec IMemoryCheckpoints, the service's own record of what it read (forgotten after the
checkpoint), the events, `cairn.Memory.checkpoint/restore` and the scenario steps."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from pytest_mock import MockerFixture

from cairn import Memory
from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.container import build_container
from cairn.errors import CheckpointError, ScenarioError
from cairn.events import commands as c
from cairn.events import events
from cairn.events.bus import MessageBus
from cairn.events.handlers import GameHandler
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.memory_service import IMemoryCheckpoints
from cairn.models.checkpoint import UNDONE_TAG, MemoryCheckpoint, RestoreReport
from cairn.models.game import GameState, LocationState, NPCInstance, QuestState, TurnOutcome
from cairn.models.memory import MemoryEntry, MemoryScope
from cairn.replay import parse_scenario
from cairn.services.clock import DeterministicClock
from cairn.services.map import MapGraph
from cairn.services.policy import MemoryPolicy
from cairn.settings import load_settings
from cairn.testing import FakeSummarizer


class Env:
    """A memory service on an in-memory store with a fake summarizer, at the Harbour."""

    def __init__(self) -> None:
        self.store = InMemoryStore()
        self.summarizer = FakeSummarizer()
        self.publisher = EventPublisher()
        self.clock = DeterministicClock(5)
        self.service = fiction_memory_service(
            self.store,
            self.summarizer,
            self.publisher,
            MapGraph(),
            MemoryPolicy(),
            clock=self.clock,
        )
        self.gs = GameState()
        self.gs.locations = {
            1: LocationState(id=1, name="Harbour"),
            2: LocationState(id=2, name="Market"),
        }
        self.gs.npcs = {"mira": NPCInstance(instance_id="mira", name="Mira", current_location_id=1)}
        self.gs.scenario.current_location_id = 1

    def save(self) -> GameState:
        """SaveGame, then the state as loaded back from its JSON."""
        self.service.checkpoint(self.gs)
        return GameState.model_validate_json(self.gs.model_dump_json())

    def load(self, loaded: GameState) -> RestoreReport:
        assert loaded.memory_checkpoint is not None
        report = self.service.restore(loaded, loaded.memory_checkpoint)
        self.gs = loaded
        return report

    def location_calls(self) -> list[list[int]]:
        return [idx for scope, _, idx in self.summarizer.calls if scope == "location"]


@pytest.fixture
def env() -> Env:
    return Env()


# -- the service's own record of what it read ------------------------------------------------


def test_a_text_first_read_after_the_checkpoint_is_news_again_after_a_restore(env: Env) -> None:
    """A game prints the same words again after a load (a room's description): the visit
    summary read them in the undone timeline only, so they are news in this one. Before, the
    service still counted them as read and the visit was never summarized."""
    env.gs.add_message("The pier creaks.")
    env.service.on_location_exit(env.gs)  # the harbour has a memory: later visits need news
    loaded = env.save()
    env.gs.add_message("A gull cries over the nets.")
    env.service.on_location_exit(env.gs)
    assert env.location_calls() == [[0], [1]]

    env.load(loaded)
    env.gs.add_message("A gull cries over the nets.")
    env.service.on_location_exit(env.gs)

    assert env.location_calls() == [[0], [1], [1]]
    [visit] = [e for e in env.service.location_memories(1) if "[1]" in e.text]
    assert UNDONE_TAG not in visit.tags and visit.id not in loaded.memory_checkpoint.visible  # type: ignore[union-attr]


def test_messages_a_turn_read_after_the_checkpoint_are_not_taken_as_read_after_a_restore(
    env: Env,
) -> None:
    """The action-outcome path marks its turn's messages read by (episode, index); after a
    restore those indexes are new messages. Before, they were left out of the visit summary."""
    env.gs.add_message("The pier creaks.")
    env.service.on_location_exit(env.gs)
    loaded = env.save()
    env.gs.turn = 1
    env.gs.add_message("> open crate", role="player")
    env.gs.add_message("The crate is empty.")
    outcome = TurnOutcome(
        turn=1,
        action="open crate",
        response="The crate is empty.",
        location_before=1,
        location_after=1,
    )
    env.service.record_action_outcome(env.gs, outcome)

    env.load(loaded)
    env.gs.add_message("Mira arrives with a lantern.", npcs_present=["mira"])
    env.gs.add_message("The lantern lights the pier.")
    env.service.on_location_exit(env.gs)

    assert env.location_calls()[-1] == [1, 2]


def test_a_restore_into_the_state_that_played_on_puts_back_every_cursor(env: Env) -> None:
    """In play the save slot restores into the live state, whose cursors moved on after the
    checkpoint (here: the harbour's, Mira's and the world's); each is the checkpoint's again.
    (Restoring a state loaded from the save's JSON could not tell: its cursors were the
    checkpoint's already, and a restore that kept the location cursors passed every test.)"""
    env.gs.add_message("Mira waves.", npcs_present=["mira"])
    env.service.on_location_exit(env.gs)
    env.service.checkpoint(env.gs)
    mark = env.gs.memory_checkpoint
    assert mark is not None
    env.gs.add_message("Mira thanks you.", npcs_present=["mira"])
    env.gs.add_message("The tide turns.")
    env.service.on_world_event(env.gs, "quest_completed")
    env.service.on_location_exit(env.gs)
    moved = env.gs.scenario.model_copy(deep=True)
    assert moved.last_location_message_index != mark.cursors.last_location_message_index
    assert moved.last_npc_message_index != mark.cursors.last_npc_message_index
    assert moved.last_world_message_index != mark.cursors.last_world_message_index

    env.service.restore(env.gs, mark)

    scenario = env.gs.scenario
    assert scenario.last_location_message_index == mark.cursors.last_location_message_index
    assert scenario.last_npc_message_index == mark.cursors.last_npc_message_index
    assert scenario.last_world_message_index == mark.cursors.last_world_message_index


def test_an_ephemeral_memory_of_the_checkpoints_episode_is_shown_again(env: Env) -> None:
    add = MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=1,
        title="Tide is low",
        persistence="ephemeral",
        created_at=env.clock.now(),
    )
    with env.store.transaction() as tx:
        tx.add(add)
    loaded = env.save()
    env.service.end_episode(env.gs)  # the next episode: the ephemeral memory is over
    assert env.service.location_memories(1) == []
    env.load(loaded)
    assert [e.id for e in env.service.location_memories(1)] == [add.id]


def test_the_restore_announces_each_undone_memory_then_the_restore(env: Env) -> None:
    loaded = env.save()
    env.gs.add_message("Mira waves.", npcs_present=["mira"])
    env.service.on_location_exit(env.gs)
    later = [e.id for e in env.store.entries()]
    heard: list[tuple[str, Any]] = []

    def on_superseded(sender: Any, **kw: Any) -> None:
        heard.append(("superseded", (kw["old_id"], kw["new_id"])))

    def on_restored(sender: Any, **kw: Any) -> None:
        heard.append(("restored", kw["report"]))

    with (
        events.memory_superseded.connected_to(on_superseded),
        events.game_restored.connected_to(on_restored),
    ):
        report = env.load(loaded)
    assert sorted(report.undone) == sorted(later) and len(later) == 2
    assert heard == [*(("superseded", (i, None)) for i in report.undone), ("restored", report)]


# -- through the bus ---------------------------------------------------------------------------


def bus_and_store() -> tuple[MessageBus, InMemoryStore, Any]:
    container = build_container(store=InMemoryStore(), llm="offline", deterministic_seed=3)
    return container.bus(), container.store(), container


def harbour_state() -> GameState:
    gs = Env().gs
    gs.scenario.current_location_id = None
    gs.quests = {"cargo": QuestState(id="cargo", name="Lost cargo")}
    return gs


def test_loading_a_save_no_longer_keeps_the_quest_or_summarizes_mira_twice() -> None:
    """The issue's case through the bus: Mira summarized before the save, a quest completed
    after it; the save is loaded (RestoreGame) and the player moves on. Before, "Mira at
    Harbour" was stored twice (the same message summarized again) and "Completed quest"
    stayed in the world memory."""
    bus, store, _ = bus_and_store()
    gs = harbour_state()
    bus.handle(c.ChangeLocation(gs, 1, "Harbour"))
    gs.add_message("Mira says a crate went missing.", role="npc", npcs_present=["mira"])
    bus.handle(c.SaveGame(gs))
    save = gs.model_dump_json()
    bus.handle(c.ChangeLocation(gs, 2, "Market"))
    gs.add_message("You find the crate.")
    bus.handle(c.CompleteQuest(gs, "cargo"))
    bus.handle(c.ChangeLocation(gs, 1, "Harbour"))

    gs = GameState.model_validate_json(save)
    report = bus.handle(c.RestoreGame(gs))
    bus.handle(c.ChangeLocation(gs, 2, "Market"))

    visible = [e for e in store.entries() if e.visible]
    assert [e.title for e in visible if e.scope is MemoryScope.NPC] == ["Mira at Harbour"]
    assert not [e for e in visible if e.scope is MemoryScope.WORLD]
    assert isinstance(report, RestoreReport) and len(report.undone) == 4
    assert gs.scenario.last_npc_message_index == {"mira": 0}


def test_save_game_inside_a_unit_is_taken_when_the_unit_commits() -> None:
    """Cursors move after commit: a checkpoint taken inside the unit would hold the visit's
    memory with its cursor unmoved (its messages summarized again after a restore)."""
    bus, store, container = bus_and_store()
    gs = harbour_state()
    bus.handle(c.ChangeLocation(gs, 1, "Harbour"))
    gs.add_message("Mira waves.", npcs_present=["mira"])
    older = MemoryCheckpoint(taken_at=DeterministicClock().now(), episode=1, turn=0, messages=0)
    gs.memory_checkpoint = older
    with bus.unit():
        bus.handle(c.ChangeLocation(gs, 2, "Market"))
        bus.handle(c.SaveGame(gs))
        assert gs.memory_checkpoint is None  # never the stale one while the unit is open
        with pytest.raises(CheckpointError, match="inside a unit of work"):
            Memory(container).checkpoint(gs)
    mark = gs.memory_checkpoint
    assert mark is not None
    assert mark.cursors.last_location_message_index == {1: 0}
    assert set(mark.visible) == {e.id for e in store.entries()} and len(mark.visible) == 2


def test_restore_game_without_a_checkpoint_fails_loudly() -> None:
    bus, _, _ = bus_and_store()
    with pytest.raises(CheckpointError, match="memory_checkpoint is None"):
        bus.handle(c.RestoreGame(GameState()))


def test_the_library_saves_and_loads_a_game() -> None:
    _, _, container = bus_and_store()
    memory = Memory(container)
    gs = harbour_state()
    kept = memory.add("Rope on the pier", location_id=1)
    mark = memory.checkpoint(gs)
    assert gs.memory_checkpoint is mark and mark.visible == [kept.id]
    later = memory.add("A crate on the pier", location_id=1)
    memory.forget(kept.id)

    report = memory.restore(GameState.model_validate_json(gs.model_dump_json()))

    assert report.undone == [later.id] and report.revived == [kept.id]
    assert [e.id for e in memory.list()] == [kept.id]
    assert [e.id for e in memory.list(include_superseded=True)] == [kept.id, later.id]


# -- the handler, on an autospec port ------------------------------------------------------------


@pytest.fixture
def checkpoints(mocker: MockerFixture) -> Any:
    return mocker.create_autospec(IMemoryCheckpoints, instance=True)


def wired_bus(checkpoints: Any) -> MessageBus:
    """The container's real bus and handlers, the memory service replaced by `checkpoints`."""
    container = build_container(load_settings(workdir=Path(tempfile.mkdtemp())))
    container.store.override(providers.Object(InMemoryStore()))
    container.memory_service.override(providers.Object(checkpoints))
    bus: MessageBus = container.bus()
    return bus


def test_the_commands_reach_the_checkpoint_port(checkpoints: Any) -> None:
    gs = GameState()
    mark = MemoryCheckpoint(taken_at=DeterministicClock().now(), episode=1, turn=3, messages=0)
    given = mark.model_copy(update={"turn": 9})
    gs.memory_checkpoint = mark
    checkpoints.restore.return_value = RestoreReport(undone=["m-1"])
    bus = wired_bus(checkpoints)

    bus.handle(c.SaveGame(gs))
    assert bus.handle(c.RestoreGame(gs)) == RestoreReport(undone=["m-1"])
    bus.handle(c.RestoreGame(gs, given))  # the command's checkpoint before the state's

    checkpoints.checkpoint.assert_called_once_with(gs)
    assert checkpoints.restore.call_args_list == [((gs, mark),), ((gs, given),)]


def test_the_game_handler_refuses_a_restore_without_checkpoint(checkpoints: Any) -> None:
    with pytest.raises(CheckpointError):
        GameHandler(checkpoints).restore_game(c.RestoreGame(GameState()))
    checkpoints.restore.assert_not_called()


# -- scenario steps ------------------------------------------------------------------------------


HEAD = """kind: narrative
name: s
locations: [{id: 1, name: Hall}]
steps:
  - move: 1
"""


def test_a_restore_step_needs_a_save_before_it(tmp_path: Path) -> None:
    parse_scenario(HEAD + "  - save: a\n  - restore: a\n", tmp_path / "ok.yaml")
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(HEAD + "  - restore: b\n  - save: b\n  - restore: a\n", tmp_path / "x.yaml")
    assert str(caught.value).splitlines() == [
        f"{tmp_path / 'x.yaml'}:6: steps[1].restore: no step before it saves 'b'",
        f"{tmp_path / 'x.yaml'}:8: steps[3].restore: no step before it saves 'a'",
    ]


def test_a_memory_gone_from_store_and_archive_is_reported_lost(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    """The in-memory store has no archive: pruning removes old SUPERSEDED memories for good."""
    gone = MemoryEntry(scope=MemoryScope.WORLD, title="The bell rang")
    with env.store.transaction() as tx:
        tx.add(gone)
    loaded = env.save()
    with env.store.transaction() as tx:
        tx.supersede(gone.id, None)
        tx.delete(gone.id)  # as pruning removes the oldest SUPERSEDED beyond its bound
    report = env.load(loaded)
    assert report.lost == [gone.id] and report.revived == []
    assert gone.id in caplog.text
