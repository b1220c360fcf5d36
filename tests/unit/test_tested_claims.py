"""The game disposes (issue 36): a lesson's claims are put to the game (`ClaimTester`, through
`IGame.probe`) before it is kept; refuted claims are not written, untested ones say so. On the
fake game, whose probes answer from a copy of an earlier state."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cairn.agents.explorer.words import remembered_dangers
from cairn.agents.scripted import ScriptedAgent
from cairn.container import build_container
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.claims import NoClaimTests
from cairn.lessons.build import lesson_of
from cairn.models.game import TurnOutcome
from cairn.models.lesson import DeathBy, DeathCause, EffectKind, Evidence, TurnTests
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemoryStatus
from cairn.play.runner import run_play
from cairn.settings import load_settings
from cairn.testing.claims import followed
from cairn.testing.fake_game import FakeGame, FakeItem, FakeRoom, FakeWorld, default_world

TO_THE_VAULT = [
    "north",
    "open chest",
    "take key",
    "south",
    "east",  # the door is closed: a failure here
    "unlock door with key",
    "open door",
    "east",
]


def test_a_way_that_failed_keeps_only_the_steps_the_game_needs() -> None:
    tester, turns = followed(FakeGame(), TO_THE_VAULT)
    proposed = ["north", "open chest", "take key", "east", "unlock door with key", "open door"]
    tests = tester.test(turns[-1], ["brass key"], proposed)
    assert tests is not None and tests.reproduced
    # without the unlock or the opening the door stays shut; the first failed try of the
    # same command is no step of its own, and what was done in other rooms is not asked
    assert tests.steps_needed == ["unlock door with key", "open door"]
    assert tests.steps_not_needed == []
    # the door open, the key in hand is no longer needed to go east
    assert tests.not_needed == ["brass key"] and tests.needed == []


def test_a_score_keeps_the_step_that_opened_the_way_and_drops_the_one_that_did_nothing() -> None:
    tester, turns = followed(FakeGame(), ["north", "look", "open chest", "take key"])
    tests = tester.test(turns[-1], [], ["look", "open chest"])
    assert tests is not None and tests.reproduced
    assert tests.steps_needed == ["open chest"] and tests.steps_not_needed == ["look"]
    lesson = lesson_of(turns[-1], steps=["look", "open chest"], claims=tester)
    assert lesson is not None and lesson.effect.kind is EffectKind.SCORED
    assert lesson.steps_first == ["open chest"] and lesson.evidence is Evidence.TESTED


def test_an_item_held_that_the_action_needs_is_confirmed() -> None:
    world = default_world()
    # the key is taken elsewhere; in the hall, unlocking needs it (the fake cannot say the
    # world changed, so the unlocking is asked about as the step of the way east)
    tester, turns = followed(FakeGame(world=world), TO_THE_VAULT)
    unlock_turn = turns[5]
    assert unlock_turn.action == "unlock door with key"
    tests = tester.test(turns[-1], ["brass key"], ["unlock door with key"])
    assert tests is not None and tests.steps_needed == ["unlock door with key"]
    # a question about an earlier turn cannot be answered: its state is gone
    assert tester.test(unlock_turn, ["brass key"], []) is None


def test_a_death_that_comes_whatever_is_sent_is_the_worlds() -> None:
    world = FakeWorld(
        rooms={1: FakeRoom("Cell", "A cell.", {"north": 2}), 2: FakeRoom("Yard", "A yard.")},
        start=1,
        items={"coin": FakeItem(room=1)},
        doom_at=3,
    )
    tester, turns = followed(FakeGame(world=world), ["take coin", "north", "south"])
    assert turns[-1].died
    assert tester.blame(turns[-1]) is DeathBy.EVENT


def test_a_death_a_harmless_command_avoids_is_the_commands() -> None:
    tester, turns = followed(FakeGame(), ["west"])  # into the pit
    assert turns[-1].died
    assert tester.blame(turns[-1]) is DeathBy.ACTION
    lesson = lesson_of(turns[-1], claims=tester)
    assert lesson is not None and lesson.death_cause is not None
    assert lesson.death_cause.by is DeathBy.ACTION and lesson.death_cause.action == "west"
    assert lesson.evidence is Evidence.TESTED


def test_a_refuted_item_is_never_written_and_an_untested_one_says_so() -> None:
    outcome = TurnOutcome(
        turn=5,
        action="take egg",
        response="Taken.",
        location_before=3,
        location_after=3,
        score_before=0,
        score_after=5,
        inventory_before=["lamp", "sword"],
        inventory_after=["lamp", "sword", "egg"],
    )
    refuted = outcome.model_copy(
        update={"tests": TurnTests(reproduced=True, not_needed=["lamp", "sword"])}
    )
    lesson = lesson_of(refuted, needs=["lamp"], steps=["open egg"])
    assert lesson is not None and lesson.needs_held == [] and lesson.steps_first == []
    assert lesson.evidence is Evidence.TESTED
    untested = lesson_of(outcome, needs=["lamp"], by_model=True)
    assert untested is not None and untested.needs_held == ["lamp"]
    assert untested.evidence is Evidence.CLAIMED
    not_held = lesson_of(outcome, needs=["rope"], by_model=True)
    assert not_held is not None and not_held.needs_held == []  # not held: no precondition


def played(tmp_path: Path, world: FakeWorld, commands: list[str]) -> list[MemoryEntry]:
    """The memories one scripted episode of `commands` on `world` leaves in a new workdir."""
    settings = load_settings(workdir=tmp_path)
    run_play(
        settings,
        game=FakeGame(world=world),
        agent=ScriptedAgent(commands),
        episodes=1,
        max_turns=len(commands),
    )
    return build_container(settings).store().entries()


def _active(entries: list[MemoryEntry]) -> list[MemoryEntry]:
    return [
        e for e in entries if e.status is not MemoryStatus.SUPERSEDED and e.lesson is not None
    ]


def test_play_writes_tested_lessons_and_no_danger_for_a_death_by_the_clock(
    tmp_path: Path,
) -> None:
    world = FakeWorld(
        rooms={
            1: FakeRoom("Cell", "A cell. A chest stands here.", {"north": 2}),
            2: FakeRoom("Yard", "A yard.", {"south": 1}),
        },
        start=1,
        items={"coin": FakeItem(room=1, container="chest", points=2)},
        containers={"chest": 1},
        doom_at=6,
    )
    commands = ["open chest", "look", "take coin", "north", "south", "north"]
    entries = played(tmp_path, world, commands)
    [scored] = [e for e in _active(entries) if e.lesson and e.lesson.effect.points == 2]
    assert scored.lesson is not None
    assert scored.lesson.steps_first == ["open chest"] and scored.lesson.needs_held == []
    assert scored.lesson.evidence is Evidence.TESTED
    assert "Steps first: (1) open chest." in scored.text
    dangers = [
        e
        for e in entries
        if e.category is MemoryCategory.DANGER and e.scope is MemoryScope.LOCATION
    ]
    assert dangers == []  # the clock killed, not 'north'


def test_points_lost_whatever_is_sent_leave_no_danger_of_the_command(tmp_path: Path) -> None:
    world = FakeWorld(
        rooms={1: FakeRoom("Cell", "A cell.", {"north": 2}), 2: FakeRoom("Yard", "A yard.")},
        start=1,
        items={"coin": FakeItem(room=1, points=3)},
        penalties={"kick wall": 1},
        toll_at=3,
    )
    kicked, turns = followed(FakeGame(world=world), ["take coin", "kick wall"])
    assert kicked.blame(turns[-1]) is DeathBy.ACTION
    tolled, turns = followed(FakeGame(world=world), ["take coin", "kick wall", "look"])
    assert tolled.blame(turns[-1]) is DeathBy.EVENT
    entries = played(tmp_path, world, ["take coin", "kick wall", "look"])
    dangers = [e for e in entries if e.category is MemoryCategory.DANGER]
    # the kick costs a point (a danger of the command); the toll comes whatever is sent
    assert [d.title for d in dangers] == ["Penalty: kick wall"]
    assert dangers[0].lesson is not None and dangers[0].lesson.effect.kind is EffectKind.LOST
    assert dangers[0].lesson.evidence is Evidence.TESTED


def test_one_fatal_move_teaches_every_way_of_making_it() -> None:
    world = FakeWorld(
        rooms={
            1: FakeRoom("Ledge", "A narrow ledge.", {"down": 2, "north": 3}),
            2: FakeRoom("Chasm", "You fall into the chasm.", deadly=True),
            3: FakeRoom("Path", "A path."),
        },
        start=1,
    )
    tester, turns = followed(FakeGame(world=world), ["down"])
    assert tester.blame(turns[-1]) is DeathBy.ACTION
    assert tester.fatal_too(turns[-1]) == ["climb down", "jump"]  # north leads on, safely
    lesson = lesson_of(turns[-1], claims=tester)
    assert lesson is not None and lesson.fatal_too == ["climb down", "jump"]
    danger = MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=1,
        category=MemoryCategory.DANGER,
        title="Died by 'down'",
        text="'down' here was fatal.",
        lesson=lesson,
    )
    assert remembered_dangers([danger]) == {"down", "climb down", "jump"}
    # a death the world brought blames no command
    by_the_clock = lesson.model_copy(
        update={"death_cause": DeathCause(by=DeathBy.EVENT), "fatal_too": []}
    )
    assert remembered_dangers([danger.model_copy(update={"lesson": by_the_clock})]) == set()


def test_export_jsonl_gives_each_lesson_as_an_object(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from cairn.cli import main

    played(tmp_path, default_world(), ["north", "look", "open chest", "take key"])
    exported = CliRunner().invoke(
        main, ["memories", "export", "--format", "jsonl", "--workdir", str(tmp_path)]
    )
    assert exported.exit_code == 0, exported.output
    records = [json.loads(line) for line in exported.output.splitlines()]
    lessons = [r["memory"]["lesson"] for r in records if r.get("memory", {}).get("lesson")]
    [scored] = [lesson for lesson in lessons if lesson["effect"]["kind"] == "scored"]
    assert scored["action"] == "take key" and scored["effect"]["points"] == 1
    assert scored["steps_first"] == ["open chest"] and scored["evidence"] == "tested"
    assert scored["death_cause"] is None and scored["needs_held"] == []


class _NotAgain(NoClaimTests):
    """A game that, asked again, does not make the change (a timed event did it)."""

    def test(
        self, outcome: TurnOutcome, needs: Sequence[str], steps: Sequence[str]
    ) -> TurnTests | None:
        return TurnTests(reproduced=False)


def test_a_change_the_game_does_not_make_again_is_no_success() -> None:
    from cairn.adapters.storage.in_memory_store import InMemoryStore
    from cairn.agents.rule_based_summarizer import RuleBasedSummarizer
    from cairn.events.publisher import EventPublisher
    from cairn.models.game import GameState
    from cairn.services.map import MapGraph
    from cairn.services.policy import MemoryPolicy

    refused = TurnOutcome(
        turn=3,
        action="east",
        response="You can't go east from here! A bell tolls in the distance.",
        location_before=5,
        location_after=5,
        world_changed=True,  # the bell's clock moved the world, not 'east'
    )

    def worked(claims: NoClaimTests | None) -> list[str]:
        store = InMemoryStore()
        service = fiction_memory_service(
            store, RuleBasedSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy(),
            claims=claims,
        )
        service.record_action_outcome(GameState(), refused)
        return [e.title for e in store.entries() if e.category is MemoryCategory.SUCCESS]

    assert worked(None) == ["'east' worked"]  # the game could not be asked: kept, untested
    assert worked(_NotAgain()) == []


def test_a_fatal_climb_or_jump_teaches_the_plain_move_too() -> None:
    from cairn.lessons.tester import ways_of

    compass = ["north", "south", "east", "west", "northeast", "northwest", "southeast"]
    compass += ["southwest", "up"]
    assert ways_of("down") == ["climb down", "jump", *compass]
    assert ways_of("climb down") == ["down", "jump", *compass]
    assert ways_of("jump") == ["down", "climb down", *compass]
    assert ways_of("north")[:2] == ["south", "east"]  # only the other compass moves
    assert ways_of("open door") == []
    world = FakeWorld(
        rooms={
            1: FakeRoom("Ledge", "A narrow ledge.", {"down": 2}),
            2: FakeRoom("Chasm", "You fall into the chasm.", deadly=True),
        },
        start=1,
    )
    tester, turns = followed(FakeGame(world=world), ["jump"])
    assert tester.fatal_too(turns[-1]) == ["down", "climb down"]
