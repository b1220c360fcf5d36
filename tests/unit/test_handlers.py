"""Handler tests with autospec mocks of IMemoryService (seed 004's test plan)."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from pytest_mock import MockerFixture

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.container import build_container
from cairn.errors import InvalidLocationError, UnknownCommandError
from cairn.events import commands as c
from cairn.events.bus import MessageBus
from cairn.interfaces.memory_service import IMemoryService
from cairn.models.changes import AddOp, TurnChanges
from cairn.models.game import GameState, LocationState, TurnOutcome
from cairn.models.memory import MemoryEntry, MemoryScope, Way
from cairn.settings import load_settings


@pytest.fixture
def memory(mocker: MockerFixture) -> Any:
    return mocker.create_autospec(IMemoryService, instance=True)


@pytest.fixture
def state() -> GameState:
    gs = GameState()
    gs.locations[1] = LocationState(id=1, name="Tavern")
    gs.scenario.current_location_id = 1
    return gs


def make_bus(memory: Any, store: InMemoryStore | None = None) -> MessageBus:
    """The container's real bus and handlers, with the memory service replaced by `memory`
    (an autospec mock) and the store by an in-memory one: the wiring is tested too."""
    container = build_container(load_settings(workdir=Path(tempfile.mkdtemp())))
    container.store.override(providers.Object(store or InMemoryStore()))
    container.memory_service.override(providers.Object(memory))
    bus: MessageBus = container.bus()
    return bus


def test_exit_summary_is_requested_before_the_move(memory: Any, state: GameState) -> None:
    seen: list[int | None] = []
    memory.on_location_exit.side_effect = lambda gs: seen.append(gs.scenario.current_location_id)
    make_bus(memory).handle(c.ChangeLocation(state, 2, "Street"))
    assert seen == [1]
    assert state.scenario.current_location_id == 2
    assert state.locations[2].name == "Street"
    memory.on_location_enter.assert_called_once_with(state, 1, via=None)


def test_the_first_move_summarizes_nothing_and_logs_nothing_above_debug(
    memory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    gs = GameState()
    with caplog.at_level(logging.DEBUG):
        make_bus(memory).handle(c.ChangeLocation(gs, 5, "Cellar"))
    assert gs.scenario.current_location_id == 5
    memory.on_location_exit.assert_not_called()
    assert "the first move" in caplog.text
    assert not [r for r in caplog.records if r.levelno > logging.DEBUG]


def test_move_from_location_missing_in_state_warns_and_moves(
    memory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    gs = GameState()
    gs.scenario.current_location_id = 42
    make_bus(memory).handle(c.ChangeLocation(gs, 5))
    memory.on_location_exit.assert_called_once_with(gs)
    assert gs.scenario.current_location_id == 5
    assert "unknown location 42" in caplog.text


@pytest.mark.parametrize("bad", ["2", 2.0, True, None])
def test_non_integer_location_id_is_rejected(memory: Any, state: GameState, bad: Any) -> None:
    with pytest.raises(InvalidLocationError, match="to_location_id"):
        make_bus(memory).handle(c.ChangeLocation(state, bad))
    assert state.scenario.current_location_id == 1


@pytest.mark.parametrize(
    ("command", "kind", "related"),
    [
        (
            lambda gs: c.CompleteObjective(gs, "q1", "o1"),
            "objective_completed",
            {"quest_id": "q1", "objective_id": "o1"},
        ),
        (lambda gs: c.CompleteQuest(gs, "q1"), "quest_completed", {"quest_id": "q1"}),
        (lambda gs: c.ProgressAct(gs, "act2"), "act_progressed", {"act_id": "act2"}),
        (
            lambda gs: c.UpdateLocationState(gs, 1, danger_level="CLEARED"),
            "location_cleared",
            {"location_id": "1"},
        ),
        (
            lambda gs: c.UpdateLocationState(gs, 1, complete_encounter="rats"),
            "encounter_completed",
            {"location_id": "1", "encounter_id": "rats"},
        ),
    ],
)
def test_each_story_command_creates_a_world_event(
    memory: Any, state: GameState, command: Any, kind: str, related: dict[str, str]
) -> None:
    make_bus(memory).handle(command(state))
    memory.on_world_event.assert_called_once()
    args, kwargs = memory.on_world_event.call_args
    assert args[0] is state and args[1] == kind
    assert kwargs["related"].as_mapping() == related  # typed: the location id is an int
    if "location_id" in related:
        assert kwargs["related"].location_id == 1


def test_danger_level_other_than_cleared_is_no_world_event(memory: Any, state: GameState) -> None:
    make_bus(memory).handle(c.UpdateLocationState(state, 1, danger_level="HIGH"))
    memory.on_world_event.assert_not_called()
    assert state.locations[1].danger_level == "HIGH"


def test_quest_commands_record_progress(memory: Any, state: GameState) -> None:
    bus = make_bus(memory)
    bus.handle(c.CompleteObjective(state, "q1", "o1"))
    bus.handle(c.CompleteQuest(state, "q1"))
    bus.handle(c.ProgressAct(state, "act2"))
    assert state.scenario.completed_objectives == ["q1:o1"]
    assert state.scenario.completed_quests == ["q1"]
    assert state.scenario.current_act == "act2"


def test_record_turn_applies_the_turn_rules_changes_in_the_commands_unit(
    memory: Any, state: GameState
) -> None:
    outcome = TurnOutcome(
        turn=7, action="open door", response="Opened.", location_before=1, location_after=1
    )
    learned = MemoryEntry(
        id="m1",
        title="Door opens",
        text="'open door' opened it.",
        scope=MemoryScope.LOCATION,
        location_id=1,
    )
    rules = memory.interpreter.return_value
    rules.interpret.return_value = TurnChanges(ops=(AddOp(learned),), entry=learned)
    store = InMemoryStore()
    assert make_bus(memory, store).handle(c.RecordTurn(state, outcome)) == learned
    rules.interpret.assert_called_once_with(state, outcome)
    assert [e.id for e in store.entries()] == ["m1"]  # the changes, applied and committed
    assert store.commits == 1
    assert state.turn == 7


def test_remember_note_defaults_to_current_location(memory: Any, state: GameState) -> None:
    make_bus(memory).handle(c.RememberNote(state, "Key under mat", 700))
    memory.remember.assert_called_once_with(
        state, "Key under mat", 700, location_id=1, tags=[], ways_in=[]
    )


def test_remember_note_for_the_world_has_no_location(memory: Any, state: GameState) -> None:
    make_bus(memory).handle(c.RememberNote(state, "No word 'canyon'", 400, world=True))
    memory.remember.assert_called_once_with(
        state, "No word 'canyon'", 400, location_id=None, tags=[], ways_in=[]
    )


def test_end_episode_with_death_is_a_world_event_then_prune(memory: Any, state: GameState) -> None:
    make_bus(memory).handle(c.EndEpisode(state, died=True))
    assert memory.on_world_event.call_args.args[1] == "player_died"
    memory.end_episode.assert_called_once_with(state)


def test_unknown_command_raises_typed_error(memory: Any, state: GameState) -> None:
    bus = MessageBus({}, InMemoryStore())
    with pytest.raises(UnknownCommandError, match="ChangeLocation"):
        bus.handle(c.ChangeLocation(state, 2))


def test_bus_commits_once_per_command(state: GameState) -> None:
    store = InMemoryStore()

    def handler(cmd: c.ChangeLocation) -> None:
        for n in range(3):
            with store.transaction() as tx:
                tx.record_visit(n, f"Room {n}", 1)

    MessageBus({c.ChangeLocation: handler}, store).handle(c.ChangeLocation(state, 2))
    assert store.commits == 1
    assert sorted(store.locations()) == [0, 1, 2]


def test_a_bus_unit_writes_its_commands_once_and_sends_their_events_after(
    state: GameState,
) -> None:
    """Commands inside `bus.unit()` are one unit of work: the second reads what the first
    staged, one commit, events after it; an exception inside keeps nothing and sends nothing."""
    from cairn.events import events
    from cairn.events.publisher import EventPublisher

    store, publisher = InMemoryStore(), EventPublisher()
    log: list[str] = []

    def move(cmd: c.ChangeLocation) -> None:
        with store.transaction() as tx:
            tx.record_visit(cmd.to_location_id, "", 1)
        publisher.publish(events.location_entered, None, location_id=cmd.to_location_id)
        log.append(f"visits {cmd.to_location_id}: {store.location(cmd.to_location_id).visits}")  # type: ignore[union-attr]

    bus = MessageBus({c.ChangeLocation: move}, store, publisher)
    sent: list[int] = []

    def on_enter(sender: object, location_id: int, **_: object) -> None:
        sent.append(location_id)

    with events.location_entered.connected_to(on_enter):
        with bus.unit():
            bus.handle(c.ChangeLocation(state, 2))
            bus.handle(c.ChangeLocation(state, 2))
            assert sent == [] and store.commits == 0
        assert log == ["visits 2: 1", "visits 2: 2"] and sent == [2, 2] and store.commits == 1
        with pytest.raises(RuntimeError), bus.unit():
            bus.handle(c.ChangeLocation(state, 3))
            raise RuntimeError("the turn fails")
    assert store.location(3) is None and sent == [2, 2] and store.commits == 1


def test_every_signal_s_receivers_see_the_committed_state(tmp_path: Any) -> None:
    """location_exited is sent after the visit summary is stored, not inside the unit of work."""
    from cairn.container import build_container
    from cairn.events import events
    from cairn.settings import load_settings

    container = build_container(load_settings(workdir=tmp_path))
    store = container.store()
    seen: dict[str, int] = {}

    def on_exit(sender: object, location_id: int, **_: object) -> None:
        fresh = type(store)(store.path)  # another reader: only what is on disk
        seen["exited"] = len(fresh.entries(location_id=location_id))
        fresh.close()

    def on_recorded(sender: object, entry: Any, **_: object) -> None:
        fresh = type(store)(store.path)
        seen["recorded"] = int(fresh.get(entry.id) is not None)
        fresh.close()

    gs = GameState()
    bus = container.bus()
    bus.handle(c.ChangeLocation(gs, 1, "Harbour"))
    gs.add_message("Mira the harbourmaster warns of a storm tonight.")
    with (
        events.location_exited.connected_to(on_exit),
        events.memory_recorded.connected_to(on_recorded),
    ):
        bus.handle(c.ChangeLocation(gs, 2, "Lighthouse", via_action="north"))
    assert seen == {"exited": 1, "recorded": 1}


def test_a_note_keeps_what_it_says_as_fields(tmp_path: Path) -> None:
    """The offline player's trap note: its tags and ways in are the memory's fields."""
    container = build_container(load_settings(workdir=tmp_path))
    store = InMemoryStore()
    container.store.override(providers.Object(store))
    state = GameState()
    way = Way(command="down", source=24, source_name="Lakeside")
    container.bus().handle(
        c.RememberNote(state, "No way out.", 900, 30, tags=("trap:30",), ways_in=(way,))
    )
    (note,) = store.entries()
    assert note.tags == ["note", "trap:30"] and note.ways_in == [way]
