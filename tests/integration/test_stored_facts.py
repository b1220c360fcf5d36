"""Every stored fact right (issue 38, item 3): supersession marks name the turn that superseded
(never one before the memory's own), a score's world note carries the turn it happened at, one
world note stands per scoring event across episodes (a later episode confirms it; no model is
asked again), and a visit summary is told which turns of the visit it leaves out (an empty
answer keeps nothing and is not asked again). Model paths go through the local Messages
server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.adapters.storage.markdown_blocks import DISPLAY_RE, display_line
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.agents.summarizer import SummarizerAgent
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.fiction.rules_hint import qualify_hint
from cairn.interfaces.store import IMemoryStore
from cairn.interfaces.summarizer import ISummarizer
from cairn.models.game import GameState, LocationState
from cairn.models.kinds import EventRelated, WorldEvent
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemoryStatus
from cairn.services.clock import DeterministicClock
from cairn.services.map import MapGraph
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.testing import FakeSummarizer
from cairn.testing.llm_server import FakeMessagesServer
from tests.integration.test_llm_first import CELLAR, GUESS, PULL, TOOL, client_for, turn

KITCHEN = 7


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as s:
        yield s


def service(summarizer: ISummarizer, store: IMemoryStore | None = None) -> MemoryService:
    return fiction_memory_service(
        store or InMemoryStore(),
        summarizer,
        EventPublisher(),
        MapGraph(),
        MemoryPolicy(),
        clock=DeterministicClock(seed=1),
    )


def state(episode: int = 1) -> GameState:
    gs = GameState(episode=episode)
    gs.locations[KITCHEN] = LocationState(id=KITCHEN, name="Kitchen")
    gs.scenario.current_location_id = KITCHEN
    return gs


def note(memory_id: str, episode: int, start: int, end: int, title: str = "M") -> MemoryEntry:
    return MemoryEntry(
        id=memory_id,
        scope=MemoryScope.WORLD,
        title=title,
        episode=episode,
        turn_start=start,
        turn_end=end,
    )


# -- supersession marks ------------------------------------------------------------------------


def test_the_mark_names_the_turn_the_successor_was_written_never_an_earlier_one() -> None:
    made = note("m-old", 1, 10, 10).model_copy(
        update={"status": MemoryStatus.SUPERSEDED, "superseded_by": "m-new"}
    )
    procedure = note("m-new", 1, 9, 12, "Open the door")  # its steps began at T9
    assert display_line(made, procedure) == '[Superseded at T12 by "Open the door"]'
    older = note("m-new", 1, 9, 9, "Door")  # an older memory, never stamped again
    assert display_line(made, older) == '[Superseded by "Door"]'
    later = note("m-new", 2, 3, 3, "Door")  # a later episode's turn 3 is after Ep1 T10
    assert display_line(made, later) == '[Superseded at Ep2 T3 by "Door"]'
    assert DISPLAY_RE.match('[Superseded at Ep2 T3 by "Door"]') is not None


def test_a_procedure_that_supersedes_a_guess_is_marked_with_its_own_turn(
    server: FakeMessagesServer, tmp_path: Path
) -> None:
    store = MarkdownMemoryStore(tmp_path / "Memories.md")
    svc = service(SummarizerAgent(client_for(server)), store)
    gs = GameState()
    server.queue_tool_use(TOOL, GUESS)
    svc.record_action_outcome(gs, PULL.model_copy(update={"turn": 10}))
    [guess] = store.entries(location_id=CELLAR)
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "SUCCESS",
            "memory_title": "Open the iron door",
            "memory_text": "Pull the lever, then push the door: it swings open.",
            "multi_step": True,
            "supersedes_memory_ids": [guess.id],
        },
    )
    gs.turns.append(turn(9, "push door", "The door does not move.", world_changed=False))
    svc.record_action_outcome(
        gs, turn(12, "push door", "The iron door swings open.", world_changed=True)
    )
    store.close()
    text = (tmp_path / "Memories.md").read_text()
    assert "*(Ep1, T9-12, +0)*" in text  # the procedure's steps began at T9
    assert '[Superseded at T12 by "Open the iron door"]' in text
    assert "[Superseded at T9" not in text


def test_a_success_the_rules_qualify_supersedes_a_guess_as_of_this_turn(
    server: FakeMessagesServer,
) -> None:
    """The rules qualify a success remembered at T3 ("Later, take leaflet: already held") at
    T11, and the model, agreeing, has it supersede a guess made at T10: the successor is
    stamped T3-11, and the guess's mark says T11 (it said T3 before: a turn before the guess)."""
    store = InMemoryStore()
    got = MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=CELLAR,
        category=MemoryCategory.SUCCESS,
        title="Got leaflet",
        text="'take leaflet' got leaflet.",
        episode=1,
        turn_start=3,
        turn_end=3,
    )
    guess = MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=CELLAR,
        status=MemoryStatus.TENTATIVE,
        title=str(GUESS["memory_title"]),
        text=str(GUESS["memory_text"]),
        episode=1,
        turn_start=10,
        turn_end=10,
    )
    with store.transaction() as tx:
        tx.add(got)
        tx.add(guess)
    svc = service(SummarizerAgent(client_for(server)), store)
    again = turn(
        11,
        "take leaflet",
        "You already have that!",
        inventory_before=["leaflet"],
        inventory_after=["leaflet"],
    )
    hint = qualify_hint(got, again)
    assert hint is not None
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "SUCCESS",
            "memory_title": hint.title,
            "memory_text": hint.text,
            "supersedes_memory_ids": [guess.id],
        },
    )
    svc.record_action_outcome(GameState(), again)
    [truth] = svc.location_memories(CELLAR)
    assert (truth.text, truth.turn_start, truth.turn_end) == (hint.text, 3, 11)
    old = store.get(guess.id)
    assert old is not None and old.superseded_by == truth.id
    assert display_line(old, truth) == '[Superseded at T11 by "Got leaflet"]'


# -- score notes -------------------------------------------------------------------------------


def score(svc: MemoryService, gs: GameState, at: int) -> None:
    """What the translator sends for a score at turn `at`, after turns 0.. at of talk."""
    for n in range(at + 1):
        gs.turn = n
        gs.add_message(f"> wait {n}", role="player")
        gs.add_message(f"Time passes ({n}).")
    svc.on_world_event(
        gs,
        WorldEvent.OBJECTIVE_COMPLETED,
        tags=["score:+10"],
        related=EventRelated(quest_id="score", objective_id=f"ep{gs.episode}-t{at}"),
        title="Scored 10 in Kitchen by 'open window'",
        turn=at,
    )


def test_a_score_note_carries_its_turn_and_a_later_episode_confirms_it(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(SummarizerAgent(client_for(server)), store)
    server.queue_text("The window opened, and the way into the house with it.")
    score(svc, state(1), 8)
    [world] = store.entries(scope=MemoryScope.WORLD)
    assert (world.episode, world.turn_start, world.turn_end) == (1, 8, 8)
    assert server.request_count == 1
    for episode, at in ((2, 15), (3, 4)):
        score(svc, state(episode), at)
    assert server.request_count == 1  # the same event again: no model asked, nothing written
    [world] = store.entries(scope=MemoryScope.WORLD)
    assert world.text == "The window opened, and the way into the house with it."
    assert (world.episode, world.turn_start) == (1, 8)
    assert {"episode:1", "episode:2", "episode:3"} <= set(world.tags)


# -- visit summaries ---------------------------------------------------------------------------


def test_a_visit_summary_is_told_the_turns_it_leaves_out() -> None:
    summarizer = FakeSummarizer()
    svc = service(summarizer)
    gs = state()
    said = []
    for n in range(1, 5):
        gs.turn = n
        said.append(gs.add_message(f"> look {n}", role="player"))
        said.append(gs.add_message(f"Something new happens ({n})."))
    for m in said[2:6]:  # turns 2 and 3: the action path read them (its memories hold them)
        svc.core.covered.add((m.episode, m.index))
    svc.on_location_exit(gs)
    assert summarizer.left_out == [[2, 3]]
    assert summarizer.calls == [("location", str(KITCHEN), [m.index for m in said[:2] + said[6:]])]


def test_the_model_is_told_what_is_left_out_and_its_empty_answer_is_final(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(SummarizerAgent(client_for(server)), store)
    gs = state()
    for n in range(1, 5):
        gs.turn = n
        message = gs.add_message(f"The kettle whistles ({n}).")
        if n in (2, 3):
            svc.core.covered.add((message.episode, message.index))
    server.queue_text("")  # nothing beyond the room: nothing to keep
    svc.on_location_exit(gs)
    asked = server.requests[0]["messages"][0]["content"]
    assert asked.startswith("Turns 2-3 of this visit are left out below: other memories hold")
    assert "never that something was not done or not found" in asked
    assert "do not repeat it" in str(server.requests[0]["system"])
    assert store.entries() == []
    assert gs.scenario.last_location_message_index == {KITCHEN: 3}  # read: not asked again
    svc.on_location_exit(gs)
    assert server.request_count == 1
