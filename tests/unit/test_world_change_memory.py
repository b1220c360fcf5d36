"""A command that changed the world in place (a mailbox opened, a lamp lit) is remembered as a
step that worked, quoting the command: the interpreter's object tree says so, whatever the
length of the game's answer. Before, a short answer fired no trigger, so nothing was written;
each later episode then took the same change for news and retried every failure memory
listed on that thing ("take mailbox" after "open mailbox", episode after episode)."""

from __future__ import annotations

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.explorer.lessons import known_commands
from cairn.agents.rule_based_summarizer import RuleBasedSummarizer
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.models.game import GameState, LocationState, TurnOutcome
from cairn.models.kinds import Trigger
from cairn.models.memory import MemoryCategory
from cairn.services.map import MapGraph
from cairn.services.policy import MemoryPolicy
from cairn.services.triggers import detect_triggers

HOUSE = 180
REVEALS = "Opening the small mailbox reveals a leaflet."


def turn(action: str, response: str, **fields: object) -> TurnOutcome:
    values: dict[str, object] = {
        "turn": 1,
        "action": action,
        "response": response,
        "location_before": HOUSE,
        "location_before_name": "West of House",
        "location_after": HOUSE,
        "location_after_name": "West of House",
        "score_before": 0,
        "score_after": 0,
    }
    values.update(fields)
    return TurnOutcome(**values)  # type: ignore[arg-type]


def test_a_change_in_place_fires_the_world_trigger_and_nothing_else_does() -> None:
    opened = turn("open mailbox", REVEALS, world_changed=True)
    assert detect_triggers(opened, first_visit=False) == [Trigger.WORLD]
    unchanged = turn("open mailbox", "It is already open.", world_changed=False)
    assert detect_triggers(unchanged, first_visit=False) == []
    unknown = turn("open mailbox", "Opened.", world_changed=None)  # the game cannot say
    assert detect_triggers(unknown, first_visit=False) == []
    moved = turn("north", "North of House", world_changed=True, location_after=81)
    assert Trigger.WORLD not in detect_triggers(moved, first_visit=False)


def test_the_change_is_remembered_as_a_step_that_worked_and_is_known_next_time() -> None:
    store = InMemoryStore()
    service = fiction_memory_service(
        store, RuleBasedSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )
    state = GameState()
    state.locations[HOUSE] = LocationState(id=HOUSE, name="West of House")
    state.scenario.current_location_id = HOUSE
    service.record_action_outcome(state, turn("open mailbox", REVEALS, world_changed=True))
    service.record_action_outcome(
        state, turn("take mailbox", "It is securely anchored.", turn=2, world_changed=False)
    )
    here = service.location_memories(HOUSE)
    [worked] = [m for m in here if m.category is MemoryCategory.SUCCESS]
    assert worked.title == "'open mailbox' worked"
    assert "reveals a leaflet" in worked.text
    # a later episode's 'open mailbox' is no news: the failures on the mailbox stand
    assert "open mailbox" in known_commands(here)
    assert any(m.category is MemoryCategory.FAILURE for m in here)
