"""The model proposes, the game disposes (issue 36, item 3): a model's synthesis answer carries
typed claims (`needs_held`, `steps_first`); cairn keeps them only as far as the game confirms
them, and never adds its own guesses to a model's memory. Through the real SDK against the
local Messages server, with the fake game's probes as the game's answers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cairn.adapters.llm.anthropic_client import AnthropicClient
from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.summarizer import SummarizerAgent
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.llm import ROLES
from cairn.lessons.tester import ClaimTester
from cairn.models.game import GameState, TurnOutcome
from cairn.models.lesson import Evidence
from cairn.models.memory import MemoryEntry, MemoryScope
from cairn.services.clock import DeterministicClock
from cairn.services.map import MapGraph
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.testing.claims import followed
from cairn.testing.fake_game import FakeGame
from cairn.testing.llm_server import FakeMessagesServer

TOOL = "SynthesisDecision"
HALL = 1


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as s:
        yield s


def service(
    server: FakeMessagesServer, store: InMemoryStore, claims: ClaimTester | None
) -> MemoryService:
    client = AnthropicClient(
        api_key="sk-ant-test-KEY",
        models={role: f"claude-test-{role}" for role in ROLES},
        base_url=server.base_url,
        timeout=5.0,
        max_retries=0,
    )
    return fiction_memory_service(
        store,
        SummarizerAgent(client),
        EventPublisher(),
        MapGraph(),
        MemoryPolicy(),
        clock=DeterministicClock(seed=1),
        claims=claims,
    )


def the_way_east() -> tuple[ClaimTester, list[TurnOutcome]]:
    """The fake game's way into the vault (the door unlocked and opened, after one failed try),
    each step followed by a ClaimTester as play does."""
    commands = ["north", "open chest", "take key", "south", "east"]
    return followed(FakeGame(), [*commands, "unlock door with key", "open door", "east"])


def the_way_in(store: InMemoryStore) -> MemoryEntry:
    [entry] = [
        e
        for e in store.entries(scope=MemoryScope.LOCATION, location_id=HALL)
        if e.title == "The vault door"
    ]
    return entry


ANSWER = {
    "should_remember": True,
    "category": "SUCCESS",
    "status": "ACTIVE",
    "memory_title": "The vault door",
    "memory_text": "Unlocking and opening the door lets you go east into the vault.",
    "needs_held": ["brass key"],  # the model's guess: the key in hand (the door is open)
    "steps_first": ["unlock door with key", "open door", "east"],
    "importance": 700,
}


def play(
    server: FakeMessagesServer, turns: list[TurnOutcome], claims: ClaimTester | None
) -> InMemoryStore:
    """The turns before the last one as the episode's history; the last one asked about."""
    store = InMemoryStore()
    svc = service(server, store, claims)
    gs = GameState()
    for outcome in turns[:-1]:
        gs.record_turn(outcome)
    server.queue_tool_use(TOOL, ANSWER)
    svc.record_action_outcome(gs, turns[-1])
    assert server.request_count == 1
    return store


def test_a_needed_item_the_model_claims_and_the_game_refutes_is_not_stored(
    server: FakeMessagesServer,
) -> None:
    tester, turns = the_way_east()
    entry = the_way_in(play(server, turns, tester))
    assert entry.lesson is not None
    assert entry.lesson.needs_held == []  # the game: east works with the key put down
    # the steps the game needs, in order; the first failed try is no step
    assert entry.lesson.steps_first == ["unlock door with key", "open door"]
    assert entry.lesson.evidence is Evidence.TESTED
    assert "Needs held" not in entry.text and "brass key" not in entry.text
    assert entry.text.endswith("Steps first: (1) unlock door with key, (2) open door.")


def test_an_untested_claim_of_the_model_is_kept_as_claimed_and_nothing_is_added(
    server: FakeMessagesServer,
) -> None:
    _tester, turns = the_way_east()
    entry = the_way_in(play(server, turns, None))  # no game to ask
    assert entry.lesson is not None
    assert entry.lesson.needs_held == ["brass key"]  # the model's own, untested
    assert entry.lesson.evidence is Evidence.CLAIMED
    assert "Needs held: brass key (claimed, untested)." in entry.text
