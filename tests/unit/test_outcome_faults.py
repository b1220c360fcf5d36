"""The outcome faults of issue 29, each as the turn that showed it: the state decides whether a turn
did anything (words only what it leaves open), waiting is never a failure, quoted words are not a
refusal, a description of what is absent is not a refusal, a polite "no need" is a failure and no
success, one truth per action (a later different outcome supersedes and says what differed), and
no junk (banners, stock replies, a duplicate) is remembered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.rule_based_summarizer import RuleBasedSummarizer
from cairn.agents.scripted import ScriptedAgent
from cairn.container import build_container
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.game import GameObservation, IGame
from cairn.interfaces.summarizer import SynthesisRequest
from cairn.models.game import GameState, LocationState, Message, TurnOutcome
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryStatus
from cairn.play.runner import run_play
from cairn.services.map import MapGraph
from cairn.services.outcomes import Verdict, failed_commands, verdict, why_not
from cairn.services.policy import MemoryPolicy
from cairn.settings import load_settings

HALL = 1


class Memory:
    """The memory service with the offline summarizer, recording turns at the Hall."""

    def __init__(self) -> None:
        self.store = InMemoryStore()
        self.service = fiction_memory_service(
            self.store, RuleBasedSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
        )
        self.gs = GameState()
        self.gs.locations[HALL] = LocationState(id=HALL, name="Hall")
        self.gs.scenario.current_location_id = HALL
        self.turn = 0

    def play(self, action: str, response: str, **fields: Any) -> TurnOutcome:
        self.turn += 1
        values: dict[str, Any] = {
            "turn": self.turn,
            "action": action,
            "response": response,
            "location_before": HALL,
            "location_before_name": "Hall",
            "location_after": HALL,
            "location_after_name": "Hall",
            "score_before": 0,
            "score_after": 0,
        }
        values.update(fields)
        outcome = TurnOutcome(**values)
        self.service.record_action_outcome(self.gs, outcome)
        return outcome

    def here(self) -> list[MemoryEntry]:
        return self.service.location_memories(HALL)

    def failed(self) -> list[str]:
        return [
            c for e in self.here() if e.category is MemoryCategory.FAILURE
            for c in failed_commands(e.text)
        ]


@pytest.fixture
def memory() -> Memory:
    return Memory()


# -- 1. the state first ---------------------------------------------------------------------------


def test_a_refusal_on_a_turn_that_changed_the_world_is_no_failure(memory: Memory) -> None:
    # the lever moved (the object tree says so) while the game complained about it
    moved = memory.play(
        "pull lever", "You can't pull it any further, but something clicks.", world_changed=True
    )
    # the same words on a turn that changed nothing are a refusal
    stuck = memory.play(
        "pull chain", "You can't pull it any further, but something clicks.", world_changed=False
    )
    assert (verdict(moved), verdict(stuck)) == (Verdict.CHANGED, Verdict.FAILURE)
    assert memory.failed() == ["pull chain"]


# -- 2. word faults -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "response"),
    [
        ("z", "Time passes.\n\nA voice says something wise. It is a pity you can't understand it."),
        ("wait", "Time passes. You can't shake the feeling that you are being watched."),
        ("inventory", "You are empty-handed."),
        ("look", "Hall\nThere is no way up, and the stairs have fallen in."),
        ("score", "Your score is 0 (total of 350 points), in 3 moves. You can't rest yet."),
    ],
)
def test_waiting_looking_and_taking_stock_are_never_failures(
    memory: Memory, action: str, response: str
) -> None:
    outcome = memory.play(action, response, world_changed=False)
    assert verdict(outcome) is Verdict.NEUTRAL
    assert memory.failed() == []


@pytest.mark.parametrize(
    ("action", "response"),
    [
        ("ask guard about key", '"I don\'t know anything about a key," says the guard, shrugging.'),
        ("show badge to clerk", "The clerk squints. \u201cYou can't be serious. That's not a "
         "badge.\u201d She goes back to her ledger."),
        ("unfold letter", "You unfold the letter. It says:\n\n'Dear friend, you cannot imagine how"
         " quiet it is here. There is no one to talk to.'"),
        ("read letter", "The letter reads: Dear friend, you cannot imagine how quiet it is here."),
    ],
)
def test_a_characters_words_or_a_letter_are_no_refusal(
    memory: Memory, action: str, response: str
) -> None:
    outcome = memory.play(action, response)  # the game cannot say whether its world changed
    assert verdict(outcome) is Verdict.NEUTRAL
    assert memory.failed() == []


@pytest.mark.parametrize(
    "response",
    [
        "North of House\nYou face the north side of a house. There is no door here, and all the "
        "windows are boarded up.",
        "Dim Passage\nYou can't see any light ahead, though the walls glisten with damp.",
        "Cellar\nThere is no ladder here, but a rope hangs from the trapdoor.",
    ],
)
def test_a_description_of_what_is_absent_is_no_refusal(memory: Memory, response: str) -> None:
    # a move in a game that cannot say where the player is: the words alone decide
    moved = memory.play("north", response, location_before=None, location_after=None)
    looked = memory.play("look", response, world_changed=False)
    assert verdict(moved) is Verdict.NEUTRAL and verdict(looked) is Verdict.NEUTRAL
    assert memory.failed() == []
    # an absence that is the whole answer still refuses
    for answer in ("You can't see any lamp here!", "There is no tree here suitable for climbing."):
        assert verdict(memory.play("take lamp", answer, world_changed=False)) is Verdict.FAILURE


@pytest.mark.parametrize(
    ("action", "response"),
    [
        ("climb rope", "There's no need to do that."),
        ("north", "You don't need to go that way."),
        ("knock on door", "That isn't necessary."),
        ("dig", "Digging would achieve nothing here."),
        ("burn box", "This dangerous act would achieve little."),
    ],
)
def test_a_polite_refusal_is_a_failure_not_a_success(
    memory: Memory, action: str, response: str
) -> None:
    outcome = memory.play(action, response, world_changed=False)
    assert verdict(outcome) is Verdict.FAILURE
    assert memory.failed() == [action]


class EchoGame(IGame):
    """One room, where every command gets the same answer and changes nothing."""

    def __init__(self, answer: str) -> None:
        self._obs = GameObservation(
            text="Hall\nA bare hall.", location_id=HALL, location_name="Hall", score=0,
            max_score=10,
        )
        self._answer = answer

    @property
    def name(self) -> str:
        return "echo"

    @property
    def fully_supported(self) -> bool:
        return True

    def reset(self) -> GameObservation:
        return self._obs

    def step(self, action: str) -> GameObservation:
        return self._obs.model_copy(update={"text": self._answer, "world_changed": False})

    def save(self) -> bytes:
        return b""

    def restore(self, state: bytes) -> GameObservation:
        return self._obs

    def walkthrough(self) -> list[str]:
        return []

    def close(self) -> None:
        pass


def test_an_exit_politely_refused_is_counted_as_failing_again(tmp_path: Path) -> None:
    settings = load_settings(workdir=tmp_path)
    game = EchoGame("There's no need to go that way.")
    report = run_play(
        settings, game=game, agent=ScriptedAgent(["north", "north"]), episodes=1, max_turns=2
    ).report
    assert report["episodes"][0]["repeated_failed_actions"] == 1
    entries = build_container(settings).store().entries()
    assert any("'north'" in e.text for e in entries if e.category is MemoryCategory.FAILURE)


# -- 3. one truth per action ----------------------------------------------------------------------


def _about_take_leaflet(memory: Memory) -> list[MemoryEntry]:
    return [e for e in memory.here() if "take leaflet" in f"{e.title} {e.text}".lower()]


def test_taking_a_thing_already_held_supersedes_the_success_saying_so(memory: Memory) -> None:
    memory.play("take leaflet", "Taken.", inventory_after=["leaflet"], world_changed=True)
    [got] = _about_take_leaflet(memory)
    memory.play(
        "take leaflet", "You already have that!", inventory_before=["leaflet"],
        inventory_after=["leaflet"], world_changed=False,
    )
    [truth] = _about_take_leaflet(memory)
    assert truth.id != got.id and truth.category is MemoryCategory.SUCCESS
    assert "take leaflet: already held" in truth.text
    old = memory.store.get(got.id)
    assert old is not None and old.status is MemoryStatus.SUPERSEDED


def test_a_later_refusal_of_a_remembered_success_stands_not_beside_it(memory: Memory) -> None:
    memory.play("take leaflet", "Taken.", inventory_after=["leaflet"], world_changed=True)
    memory.gs.episode = 2
    memory.play("take leaflet", "You can't see any leaflet here!", episode=2, world_changed=False)
    [truth] = _about_take_leaflet(memory)
    assert "take leaflet: no leaflet in sight (Ep2" in truth.text
    assert "take leaflet" not in memory.failed()
    # the same difference again changes nothing
    memory.play("take leaflet", "You can't see any leaflet here!", episode=2, world_changed=False)
    assert _about_take_leaflet(memory) == [truth]


@pytest.mark.parametrize(
    "response",
    [
        "Your load is too heavy.",
        "You're carrying too many things already.",
        "Your hands are full.",
        "You can't carry any more.",
    ],
)
def test_a_take_refused_for_the_load_is_about_the_player_not_a_failure(
    memory: Memory, response: str
) -> None:
    """A take the game refuses for what the player carries works once something is dropped:
    no failure in the ledger (so a lighter player tries it again), and the reason says so."""
    held = ["lamp", "sword", "sack"]
    outcome = memory.play(
        "take egg", response, inventory_before=held, inventory_after=held, world_changed=False
    )
    assert verdict(outcome) is Verdict.NO_OP
    assert why_not(outcome) == "too much carried"
    assert "take egg" not in memory.failed()
    pushed = memory.play("push boulder", "The boulder is too heavy.", world_changed=False)
    assert verdict(pushed) is Verdict.FAILURE  # not a take: the thing itself is too heavy


def test_a_remembered_failure_that_now_works_leaves_the_ledger(memory: Memory) -> None:
    memory.play("open door", "The door is locked.", world_changed=False)
    memory.play("take door", "That's fixed in place.", world_changed=False)
    assert memory.failed() == ["open door", "take door"]
    memory.play("unlock door with key", "Unlocked.", inventory_before=["key"],
                inventory_after=["key"], world_changed=True)
    memory.play("open door", "The door swings open.", inventory_before=["key"],
                inventory_after=["key"], world_changed=True)
    assert memory.failed() == ["take door"]
    successes = [e for e in memory.here() if e.category is MemoryCategory.SUCCESS]
    [worked] = [e for e in successes if "'open door'" in e.title]
    assert "'unlock door with key' worked" in [e.title for e in successes]  # the step too
    assert "'open door' had failed here before" in worked.text
    assert worked.lesson is not None and worked.lesson.steps_first == ["unlock door with key"]
    assert worked.text.endswith("Steps first: (1) unlock door with key (observed, untested).")


# -- 4. no junk -----------------------------------------------------------------------------------

BANNER = (
    "MYSTERY MANOR\nAn Interactive Whodunit\nCopyright (c) 2031 by Nobody. All rights reserved.\n"
    "MYSTERY MANOR is a registered trademark of Nobody, Ltd.\n"
    "Release 3 / Serial number 310101 / Inform v6.31 Library 6/11\nStandard interpreter 1.1\n"
    "Revision 12 / Serial number 310102\n\nFoyer\nA dusty foyer with a grand staircase."
)


def test_a_visit_summary_keeps_no_banner_line() -> None:
    gs = GameState()
    message = Message(index=0, role="narrator", text=BANNER, location_id=HALL)
    summary = RuleBasedSummarizer().summarize_location_session(gs, HALL, [message])
    assert summary == "A dusty foyer with a grand staircase."


def test_stock_replies_and_banners_make_no_memory() -> None:
    outcome = TurnOutcome(
        turn=1, action="jump", response="Time passes.\n\nCopyright (c) 2031 by Nobody.\nTaken.",
        location_before=HALL, location_after=HALL,
    )
    decision = RuleBasedSummarizer().synthesize(SynthesisRequest(outcome=outcome, triggers=[]))
    assert not decision.should_remember


def test_the_same_win_again_is_one_memory(memory: Memory) -> None:
    for episode in (1, 2):
        memory.gs.episode = episode
        memory.play("take crown", "You take the crown.\n\n*** You have won ***", episode=episode,
                    won=True, inventory_after=["crown"])
    assert [e.title for e in memory.here()] == ["Won the game by 'take crown'"]


def test_the_same_ending_again_is_one_world_memory(memory: Memory) -> None:
    for episode in (1, 2):
        memory.gs.episode = episode
        final = TurnOutcome(
            episode=episode, turn=200, action="north", location_before=HALL,
            location_before_name="Hall", location_after=HALL, died=True,
            response="You step off the edge and fall.\n\n*** You have died ***",
        )
        memory.service.record_ending(memory.gs, final)
    assert [e.title for e in memory.service.world_memories()] == [
        "Died in Hall at turn 200 by 'north'"
    ]
