"""What a model sees (issue 38, items 1 and 2), without a model server: the measure of
repeated lines, each thing said once (no memory twice, the last turn once, the room's words
not again in the last turn's answer), the room's words from the game's own `look` on a brief
revisit, top memories clipped between words, the knowledge base's route, "turn N of M", and
when the objectives are discovered again (a score change, a one-way event)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pytest_mock import MockerFixture

from cairn.adapters.storage.knowledge_file import KnowledgeBase
from cairn.agents.adventurer import turn_message
from cairn.agents.scripted import ScriptedAgent
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.interfaces.game import GameObservation
from cairn.interfaces.knowledge import ROUTE_HEADER
from cairn.interfaces.memory_service import IMemoryService
from cairn.models.episode import EpisodeStats
from cairn.models.game import GameState, TurnOutcome
from cairn.models.memory import LocationRecord, MemoryCategory, MemoryEntry, MemoryScope
from cairn.play.objective_refresh import Refresh, RefreshWatch
from cairn.play.room_watch import RoomWatch
from cairn.play.runner import run_play
from cairn.services.context import ContextRequest, ContextService, default_builders
from cairn.services.context.builders import clip_words
from cairn.services.context.context_service import LESSONS_HERE, ROUTE
from cairn.services.context.repetition import (
    repeated_char_share,
    repeated_line_share,
    repeated_lines,
)
from cairn.services.context.room_builders import LastTurnBuilder, RoomNowBuilder
from cairn.services.context.top_notes import TopNotesBuilder
from cairn.services.map import MapGraph
from cairn.settings import load_settings
from cairn.testing.fake_game import FakeGame, default_world

# -- the measure ---------------------------------------------------------------------------


def test_a_repeated_line_says_again_what_an_earlier_line_said() -> None:
    text = (
        "## Other important lessons\n"
        "- [800] Cellar: it is dark without a lit lamp (Ep1, T3)\n"
        "Taken.\n"
        "Taken.\n"
        "\n"
        "## Lessons here\n"
        "[DANGER] Cellar (Ep1, T3)\n"
        "It is dark without a lit lamp!\n"
        "A line that says something else entirely.\n"
    )
    # the memory's text inside the longer top line; "Taken." twice is too short to count
    assert repeated_lines(text) == ["It is dark without a lit lamp!"]
    assert repeated_line_share(text) == pytest.approx(1 / 8)
    assert 0 < repeated_char_share(text) < 0.25
    assert repeated_line_share("") == 0.0 and repeated_lines("one line only, said once") == []


# -- each thing once -------------------------------------------------------------------------


def entry(title: str, scope: MemoryScope = MemoryScope.LOCATION, **kw: Any) -> MemoryEntry:
    fields: dict[str, Any] = {"location_id": 23} if scope is MemoryScope.LOCATION else {}
    fields.update(kw)
    return MemoryEntry(
        scope=scope,
        title=title,
        text=f"what happened there, told at some length ({len(title)})",
        created_at=datetime(2025, 3, 1, tzinfo=UTC),
        **fields,
    )


@pytest.fixture
def memory(mocker: MockerFixture) -> Any:
    here = entry("Lamp lit in the hall", category=MemoryCategory.SUCCESS, importance=900)
    next_door = entry("Grue in the dark", location_id=24, importance=850)
    world = entry("The dam was opened", MemoryScope.WORLD, importance=800)
    m = mocker.create_autospec(IMemoryService, instance=True)
    m.location_record.side_effect = lambda loc: LocationRecord(id=loc, name="Hall", visits=2)
    m.location_memories.side_effect = lambda loc: [here] if loc == 23 else []
    m.adjacent_memories.return_value = {24: [next_door]}
    m.world_memories.return_value = [world]
    m.top_memories.return_value = [here, next_door, world]
    return m


def test_a_top_memory_the_room_or_its_neighbours_show_is_not_printed_again(memory: Any) -> None:
    prompt = ContextService(default_builders(memory)).assemble(
        "adventurer", ContextRequest(game_state=GameState(), location_id=23, location_name="Hall")
    )
    for title in ("Lamp lit in the hall", "Grue in the dark", "The dam was opened"):
        assert prompt.text.count(title) == 1, title
    assert prompt.text.count("told at some length") == 3
    assert prompt.memory_ids["top_notes"] == (memory.world_memories.return_value[0].id,)
    assert repeated_lines(prompt.text) == []


def test_top_memories_are_clipped_between_words() -> None:
    text = "The grating is barred from above, so you cannot open it from below at all."
    assert clip_words(text, 40) == "The grating is barred from above, so..."
    assert clip_words("short", 40) == "short"
    note = entry("Grating", MemoryScope.WORLD, importance=900).model_copy(
        update={"text": text * 5}
    )

    class Top:
        def world_memories(self) -> list[MemoryEntry]:
            return []

        def top_memories(self, limit: int) -> list[MemoryEntry]:
            return [note]

    section = TopNotesBuilder(Top(), max_chars=60).build(  # type: ignore[arg-type]
        ContextRequest(game_state=GameState())
    )
    assert section is not None
    shown = section.text.removeprefix("- [900] Grating: ").removesuffix("...")
    assert section.text.endswith("...") and (text * 5).startswith(shown)
    assert (text * 5)[len(shown)] == " "  # cut where a word ends, never inside one


def test_the_room_now_gives_its_words_exits_and_things() -> None:
    graph = MapGraph()
    graph.set_name(1, "Hall")
    graph.set_name(2, "Study")
    graph.add_connection(1, 2, action="north")
    graph.note_exits(1, ["north", "east"])
    graph.mark_failed_exit(1, "west")
    request = ContextRequest(
        game_state=GameState(),
        location_id=1,
        location_name="Hall",
        room_text="Hall\nA bare hall. A heavy door stands to the east.",
        things=["door", "rug"],
    )
    section = RoomNowBuilder(graph).build(request)
    assert section is not None and section.text == (
        "Hall (Location 1)\nA bare hall. A heavy door stands to the east.\n"
        "Exits: north -> Study (L2); not yet taken: east; refused: west\nThings here: door, rug"
    )
    alone = RoomNowBuilder().build(request)  # no map: the exits its text names
    assert alone is not None and "Exits: east (named in the text)" in alone.text
    study = RoomNowBuilder(graph).build(request.model_copy(update={"location_id": 2}))
    assert study is not None  # the way back of the move into it, not taken yet: assumed
    assert "Exits: south -> Hall (L1, assumed: the way back)" in study.text


def turn(n: int, action: str, response: str, reasoning: str = "") -> TurnOutcome:
    return TurnOutcome(
        turn=n,
        action=action,
        response=response,
        reasoning=reasoning,
        location_before=1,
        location_before_name="Hall",
        location_after=1,
    )


def test_the_last_turn_is_said_once_without_the_rooms_words() -> None:
    request = ContextRequest(
        game_state=GameState(),
        location_id=1,
        room_text="Hall\nA bare hall.",
        recent_turns=[
            turn(1, "xyzzy", "Nothing happens."),
            turn(2, "look", "Hall\nA bare hall.\nThe door creaks.", "Look around first."),
        ],
    )
    section = LastTurnBuilder().build(request)
    assert section is not None and section.text == (
        "You (turn 2, at Hall): look\nWhy: Look around first.\nThe game: The door creaks.\n"
        "Before that:\nT1 @ Hall: xyzzy -> Nothing happens."
    )
    opening = LastTurnBuilder().build(
        request.model_copy(update={"recent_turns": [], "game_text": "A TALE\nHall\nA bare hall."})
    )
    assert opening is not None and opening.text == "The game's opening:\nA TALE"


def test_the_turn_message_reads_in_order_and_says_the_turn_of_all() -> None:
    view = AgentView(
        episode=1,
        turn=23,
        max_turns=25,
        observation=GameObservation(text="Taken.", location_id=1, score=45, max_score=350),
        prompt=f"## {LESSONS_HERE}\n- a lesson\n\n## The room now\nHall (Location 1)",
        objectives=["Open the door"],
    )
    message = turn_message(view)
    heads = [line for line in message.splitlines() if line.startswith("## ")]
    assert heads == ["## The room now", f"## {LESSONS_HERE}", "## Objectives", "## Now"]
    assert "Turn 23 of 25. Score: 45 of 350. You carry: nothing." in message
    assert message.count("Taken.") == 0  # the room's section stands for the game's words


# -- the room's words on a brief revisit -----------------------------------------------------


def brief_game() -> FakeGame:
    return FakeGame(world=dataclasses.replace(default_world(), brief=True))


def test_a_brief_game_prints_only_the_name_on_a_revisit_and_looks_without_a_move() -> None:
    game = brief_game()
    game.reset()
    assert game.step("north").text.startswith("Study\nA dusty study.")
    game.step("south")
    again = game.step("north")
    assert again.text == "Study" and again.moves == 3
    assert game.look() == "Study\nA dusty study. An old chest stands here."
    assert game.step("inventory").moves == 4  # the look spent no move


def test_the_room_watch_asks_the_game_to_look_when_the_turns_text_lacks_the_room() -> None:
    game = brief_game()
    watch = RoomWatch(game)
    game.reset()
    game.step("north")
    saved = game.save()
    game.reset()
    back = game.restore(saved)  # in the Study, and the game said nothing
    assert back.text == "" and back.location_id == 2
    assert watch.text(back) == "Study\nA dusty study. An old chest stands here."
    looks = watch.looks
    refused = game.step("up")  # same room, nothing changed: the words kept, no new look
    assert watch.text(refused).startswith("Study\nA dusty study") and watch.looks == looks == 1
    watch.text(game.step("south"))
    assert watch.looks == 2  # an arrival: the game is asked again


def test_a_game_without_location_ids_is_followed_by_its_rooms_names() -> None:
    class Looking:
        asked = 0

        def look(self) -> str:
            self.asked += 1
            return f"Room look {self.asked}"

    watch = RoomWatch(Looking())  # type: ignore[arg-type]
    attic = GameObservation(text="Attic\nDusty.", location_id=None, location_name="Attic")
    assert watch.text(attic) == "Room look 1"
    taken = GameObservation(text="Taken.", location_id=None)  # no header: still there
    assert watch.text(taken) == "Room look 1"
    cellar = GameObservation(text="Cellar\nDamp.", location_id=None, location_name="Cellar")
    assert watch.text(cellar) == "Room look 2"


class Recording(IAgent):
    def __init__(self, actions: list[str]) -> None:
        self.views: list[AgentView] = []
        self._inner = ScriptedAgent(actions)

    def decide(self, view: AgentView) -> AgentDecision:
        self.views.append(view)
        return self._inner.decide(view)


def test_on_a_revisit_the_prompt_holds_the_rooms_description_and_exits(tmp_path: Path) -> None:
    agent = Recording(["north", "south", "north", "look"])
    settings = load_settings(workdir=tmp_path)
    run_play(settings, game=brief_game(), agent=agent, episodes=1, max_turns=4)
    back = agent.views[3]  # after the revisit: the game said only "Study"
    assert back.observation.text == "Study"
    room = back.prompt.split("## The room now\n", 1)[1].split("\n\n## ", 1)[0]
    assert "A dusty study. An old chest stands here." in room
    assert "Exits: south -> Hall (L1)" in room and "Things here: chest" in room
    assert back.max_turns == 4


# -- the knowledge base's route --------------------------------------------------------------


def test_the_knowledge_base_writes_its_route_in_the_order_first_scored(tmp_path: Path) -> None:
    def scored(
        title: str,
        room: int,
        episode: int,
        at: int,
        points: int,
        category: MemoryCategory = MemoryCategory.SUCCESS,
    ) -> MemoryEntry:
        return entry(
            title,
            category=category,
            location_id=room,
            location_name=f"Room {room}",
            episode=episode,
            turn_start=at,
            score_delta=points,
        )

    class Reader:
        def top_memories(self, limit: int) -> list[MemoryEntry]:
            return [
                scored("Scored 2 by 'take crown'", 3, 1, 9, 2),
                scored("Scored 1 by 'take key'", 2, 1, 3, 1),
                scored("Scored 1 by 'take key'", 2, 2, 4, 1),  # the same move again
                scored("Opened the gate", 4, 1, 6, 5, MemoryCategory.NOTE),  # a model's word
                scored("Fell", 5, 1, 7, 1, MemoryCategory.DANGER),
            ]

    kb = KnowledgeBase(tmp_path / "knowledgebase.md")
    assert kb.route() == ""
    kb.update(Reader(), EpisodeStats(episode=1, turns=9, score=3), "fake")  # type: ignore[arg-type]
    assert kb.route() == (
        "1. Location 2 (Room 2): Scored 1 by 'take key' (+1)\n"
        "2. Location 4 (Room 4): Opened the gate (+5)\n"
        "3. Location 3 (Room 3): Scored 2 by 'take crown' (+2)"
    )
    text = kb.read()
    assert text.index(ROUTE_HEADER) < text.index("## Episodes")


def test_the_next_episodes_prompt_shows_the_route_earlier_games_found(tmp_path: Path) -> None:
    game = FakeGame()
    agent = Recording([*game.walkthrough(), "look"])
    settings = load_settings(workdir=tmp_path)
    run_play(settings, game=game, agent=agent, episodes=2, max_turns=8)
    first, second = agent.views[0], next(v for v in agent.views if v.episode == 2)
    assert ROUTE not in first.prompt
    route = second.prompt.split(f"## {ROUTE}\n", 1)[1]
    assert route.startswith("1. Location 2 (Study): ") and "2. Location 3 (Vault): " in route


# -- when the objectives are discovered again ------------------------------------------------


def outcome(action: str, before: int, after: int, **kw: Any) -> TurnOutcome:
    return TurnOutcome(
        turn=kw.pop("turn", 2),
        action=action,
        response="",
        location_before=before,
        location_after=after,
        **kw,
    )


def test_a_score_change_or_a_one_way_event_asks_for_new_objectives() -> None:
    watch = RefreshWatch(every=20)
    assert watch.due(1) is Refresh.SCHEDULE and watch.due(2) is None
    assert watch.observe(outcome("take key", 2, 2, score_before=0, score_after=1)) is Refresh.SCORE
    assert watch.due(3) is Refresh.SCORE and watch.due(4) is None
    assert watch.observe(outcome("wait", 2, 2, inventory_before=["lamp"])) is Refresh.LOST
    assert watch.observe(outcome("drop lamp", 2, 2, inventory_before=["lamp"])) is None
    assert watch.observe(outcome("put all in case", 2, 2, inventory_before=["lamp"])) is None
    assert watch.observe(outcome("north", 2, 5, died=True)) is Refresh.DEATH
    # down a passage, and the way back up is refused: one-way (said once)
    watch.new_episode()
    assert watch.observe(outcome("down", 1, 4)) is None
    assert watch.observe(outcome("up", 4, 4)) is Refresh.WAY_BACK_SHUT
    assert watch.observe(outcome("up", 4, 4)) is None
    assert watch.observe(outcome("east", 4, 4)) is None  # not the way it came
    assert watch.due(9) is Refresh.WAY_BACK_SHUT and watch.due(21) is Refresh.SCHEDULE
    assert [r for _, r in watch.reasons] == [Refresh.WAY_BACK_SHUT, Refresh.SCHEDULE]
