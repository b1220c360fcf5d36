"""Causes of deaths on generic game texts (a class of phrasing each, no game's sentence): a need,
a timer or an event after a move's own answer, darkness, a light that ran out, an attacker, a trap
or a fall; and what each leaves in memory: a lesson where the cause lies, never a danger of a move
that did not cause the death."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.explorer import remembered_dangers
from cairn.agents.scripted import ScriptedAgent
from cairn.container import build_container
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.game import GameObservation, IGame
from cairn.models.game import GameState, TurnOutcome
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemoryStatus
from cairn.play.objectives import deadly_moves
from cairn.play.runner import run_play
from cairn.services.causes import diagnose, ways_in
from cairn.services.endings import DeathCause
from cairn.services.map import MapGraph
from cairn.services.policy import MemoryPolicy
from cairn.settings import load_settings
from cairn.testing import FakeSummarizer

DIED = "\n\n*** You have died ***"
STUDY = "Study\nA quiet room lined with shelves of old books, and a desk under the window.\n\n"
"""A room's description: the ordinary answer to a move that reached it."""


def turn(
    n: int,
    action: str,
    response: str,
    before: int | None = 1,
    after: int | None = 1,
    *,
    before_name: str = "Hall",
    after_name: str = "Hall",
    died: bool = False,
) -> TurnOutcome:
    return TurnOutcome(
        turn=n,
        action=action,
        response=response,
        location_before=before,
        location_before_name=before_name,
        location_after=after,
        location_after_name=after_name,
        died=died,
    )


CAVE_ENTERED = turn(1, "down", "It is pitch dark. You can't see a thing.", 1, 2, after_name="Cave")


@pytest.mark.parametrize(
    ("final", "cause"),
    [
        # a need: the words name it, whatever the command
        (turn(2, "west", "Desert\nSand.\n\nYou die of thirst." + DIED, 1, 3, after_name="Desert",
              died=True), DeathCause.HUNGER),
        # an event after the move's own answer (the room it reached): the world's, not the move's
        (turn(2, "west", STUDY + "You suddenly collapse." + DIED,
              1, 3, after_name="Study", died=True), DeathCause.PLOT),
        # older games put each message on a line: a refusal, then the event
        (turn(2, "south", "The door is locked.\nThe station explodes around you." + DIED,
              died=True), DeathCause.PLOT),
        # an attacker named in the death text
        (turn(2, "look", "The goblin stabs you with a rusty knife." + DIED, died=True),
         DeathCause.COMBAT),
        # a trap the command set off
        (turn(2, "east", "The rotten boards give way beneath you and you fall into the pit."
              + DIED, died=True), DeathCause.TRAP),
        # a fall in the room the move reached
        (turn(2, "north", "Ledge\nA narrow ledge.\n\nThe ledge crumbles and you plummet." + DIED,
              1, 4, after_name="Ledge", died=True), DeathCause.TRAP),
        # the answer is only the score: the death was told the turn before
        (turn(2, "take basin", "Your score is 0 of a possible 400, in 19 turns.\n\nWould you"
              " like to start over?\n(Type RESTART, RESTORE, or QUIT):", died=True),
         DeathCause.PLOT),
        # the command's own doing, as before
        (turn(2, "eat mushroom", "You eat the mushroom. It was poisonous." + DIED, died=True),
         DeathCause.COMMAND),
    ],
)
def test_each_death_gets_its_cause_from_the_words_and_the_turn(
    final: TurnOutcome, cause: DeathCause
) -> None:
    assert diagnose(final, []).cause is cause


def test_a_death_in_a_room_last_described_as_dark_is_the_rooms() -> None:
    final = turn(2, "west", "You stumble and break your neck." + DIED, 2, 2,
                 before_name="Cave", after_name="Cave", died=True)
    found = diagnose(final, [CAVE_ENTERED])
    assert found.cause is DeathCause.DARKNESS and not found.blames_command
    assert (found.room, found.room_name) == (2, "Cave")
    assert [(w.command, w.source, w.source_name) for w in found.ways_in] == [("down", 1, "Hall")]


def test_a_room_lit_since_it_was_dark_is_not_to_blame() -> None:
    lit = turn(2, "light torch", "Your torch flares up.\n\nCave\nA damp cave.", 2, 2,
               before_name="Cave", after_name="Cave")
    final = turn(3, "west", "You stumble and break your neck." + DIED, 2, 2,
                 before_name="Cave", after_name="Cave", died=True)
    assert diagnose(final, [CAVE_ENTERED, lit]).cause is DeathCause.COMMAND


def test_a_light_that_went_out_before_the_dark_is_a_timer() -> None:
    entered = turn(1, "down", "Cave\nA damp cave, lit by your torch.", 1, 2, after_name="Cave")
    out = turn(2, "wait", "Your torch sputters out. It is pitch dark.", 2, 2,
               before_name="Cave", after_name="Cave")
    final = turn(3, "west", "You stumble and break your neck." + DIED, 2, 2,
                 before_name="Cave", after_name="Cave", died=True)
    found = diagnose(final, [entered, out])
    assert found.cause is DeathCause.LIGHT and found.room == 2 and not found.blames_command


# -- what each cause leaves in memory ---------------------------------------------------------


class StubGame(IGame):
    """Answers each command from a script of observations, in order per command."""

    def __init__(self, start: GameObservation, script: list[tuple[str, GameObservation]]) -> None:
        self._start = start
        self._script = script
        self._left: list[tuple[str, GameObservation]] = []
        self._now = start

    @property
    def name(self) -> str:
        return "stub"

    @property
    def fully_supported(self) -> bool:
        return True

    def reset(self) -> GameObservation:
        self._now, self._left = self._start, list(self._script)
        return self._start

    def step(self, action: str) -> GameObservation:
        expected, self._now = self._left.pop(0)
        assert expected == action, (expected, action)
        return self._now

    def save(self) -> bytes:
        return b""

    def restore(self, state: bytes) -> GameObservation:
        return self._now

    def walkthrough(self) -> list[str]:
        return []

    def close(self) -> None:
        pass


def obs(text: str, loc: int, name: str, **kw: Any) -> GameObservation:
    fields: dict[str, Any] = {"score": 0, "max_score": 10}
    fields.update(kw)
    return GameObservation(text=text, location_id=loc, location_name=name, **fields)


HALL = obs("Hall\nA bare hall. Stairs lead down.", 1, "Hall")


def play(tmp_path: Path, script: list[tuple[str, GameObservation]]) -> list[MemoryEntry]:
    settings = load_settings(workdir=tmp_path)
    run_play(
        settings,
        game=StubGame(HALL, script),
        agent=ScriptedAgent([a for a, _ in script]),
        episodes=1,
        max_turns=len(script),
    )
    entries = build_container(settings).store().entries()
    return [e for e in entries if e.status is MemoryStatus.ACTIVE]


def located(entries: list[MemoryEntry]) -> list[MemoryEntry]:
    return [e for e in entries if e.scope is MemoryScope.LOCATION]


def test_a_timer_after_a_move_is_no_danger_of_the_move(tmp_path: Path) -> None:
    died = obs(STUDY + "You suddenly collapse." + DIED, 3, "Study",
               done=True, died=True)
    entries = play(tmp_path, [("west", died)])
    assert deadly_moves(located(entries)) == set()
    assert not [e for e in located(entries) if e.category is MemoryCategory.DANGER]
    [ending] = [e for e in entries if "ending" in e.tags]
    assert "cause:plot" in ending.tags and "by 'west'" not in ending.title


def test_a_death_in_the_dark_is_a_lesson_of_the_dark_room_with_its_ways_in(
    tmp_path: Path,
) -> None:
    dark = obs("It is pitch dark. You can't see a thing.", 2, "Cave")
    died = obs("You stumble and break your neck." + DIED, 2, "Cave", done=True, died=True)
    entries = play(tmp_path, [("down", dark), ("west", died)])
    assert deadly_moves(located(entries)) == set()
    assert remembered_dangers([e for e in located(entries) if e.location_id == 2]) == set()
    [lesson] = [e for e in located(entries) if "cause:darkness" in e.tags]
    assert lesson.location_id == 2 and lesson.category is MemoryCategory.DANGER
    assert lesson.text.startswith("Cave (L2) is dark: entering without a lit light ends in death")
    assert ways_in(lesson.text) == [("down", 1)]
    assert "break your neck" in lesson.text


def test_a_light_that_ran_out_leaves_the_dark_room_lesson_not_a_danger_of_the_move(
    tmp_path: Path,
) -> None:
    lit = obs("Cave\nA damp cave, lit by your torch.", 2, "Cave")
    out = obs("Your torch sputters out. It is pitch dark.", 2, "Cave")
    died = obs("You stumble and break your neck." + DIED, 2, "Cave", done=True, died=True)
    entries = play(tmp_path, [("down", lit), ("wait", out), ("north", died)])
    assert deadly_moves(located(entries)) == set()
    assert [e.location_id for e in located(entries) if "cause:darkness" in e.tags] == [2]
    [ending] = [e for e in entries if "ending" in e.tags]
    assert "cause:light" in ending.tags and ending.title.endswith("(a light ran out)")


def test_a_second_death_in_the_same_dark_room_adds_its_way_in_to_the_one_lesson() -> None:
    store = InMemoryStore()
    service = fiction_memory_service(
        store, FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )
    for episode, (way, source, name) in enumerate([("down", 1, "Hall"), ("north", 5, "Yard")], 1):
        state = GameState(episode=episode)
        entered = turn(1, way, "It is pitch dark.", source, 2, before_name=name, after_name="Cave")
        final = turn(2, "west", "You stumble and break your neck." + DIED, 2, 2,
                     before_name="Cave", after_name="Cave", died=True)
        for outcome in (entered, final):
            service.record_action_outcome(state, outcome.model_copy(update={"episode": episode}))
    [lesson] = [e for e in store.entries() if "cause:darkness" in e.tags and e.visible]
    assert ways_in(lesson.text) == [("down", 1), ("north", 5)]
    assert "'north' from Yard (L5)" in lesson.text


def test_a_move_into_a_room_described_as_dark_is_remembered_dark_before_any_death(
    tmp_path: Path,
) -> None:
    # the hall found dark by a turn there (a light switched off, a room woken up in) is not
    # remembered so: no way in is known, and a switch may light it
    hall_dark = obs("It is pitch black.", 1, "Hall")
    dark = obs("You have moved into a dark place.\nIt is pitch black.", 2, "Cave")
    back = obs("Hall\nA bare hall. Stairs lead down.", 1, "Hall")
    entries = play(tmp_path, [("look", hall_dark), ("down", dark), ("up", back)])
    [lesson] = [e for e in located(entries) if "cause:darkness" in e.tags]
    # no death, no danger (issue 36): a note of what shows the room
    assert lesson.location_id == 2 and lesson.category is MemoryCategory.NOTE
    assert lesson.title == "Dark: a lit light shows it"
    assert lesson.text.startswith("Cave (L2) is dark: without a lit light nothing can be seen")
    assert ways_in(lesson.text) == [("down", 1)]
    # the ways in are fields; the prose is rendered from them
    assert [(w.command, w.source) for w in lesson.ways_in] == [("down", 1)]
    assert deadly_moves(located(entries)) == set()
