"""With a model configured, the model writes every memory it is asked about; the rules propose,
never overwrite (issue 38, item 12), through the real SDK against the local Messages server:
a dark room's lesson, the episode's ending and an attacker's lesson are the rules' proposals
the model answers; and a move already remembered whose answer says something new on arrival
still reaches the model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.summarizer import SummarizerAgent
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.models.game import GameState, TurnOutcome
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemorySource
from cairn.services.causes import DARK_TAG
from cairn.services.clock import DeterministicClock
from cairn.services.map import MapGraph
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.testing.llm_server import FakeMessagesServer
from tests.integration.test_llm_first import GIFT, KILLED, TOOL, TROLL_ROOM, client_for

HALL, CAVE = 1, 2
DIED = "\n\n*** You have died ***"


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as s:
        yield s


def service(server: FakeMessagesServer, store: InMemoryStore) -> MemoryService:
    return fiction_memory_service(
        store,
        SummarizerAgent(client_for(server)),
        EventPublisher(),
        MapGraph(),
        MemoryPolicy(),
        clock=DeterministicClock(seed=1),
    )


def move(n: int, action: str, response: str, before: int, after: int) -> TurnOutcome:
    names = {HALL: "Hall", CAVE: "Cave"}
    return TurnOutcome(
        turn=n,
        action=action,
        response=response,
        location_before=before,
        location_before_name=names[before],
        location_after=after,
        location_after_name=names[after],
    )


def proposal(request: dict[str, Any]) -> tuple[str, str, str]:
    """The category, title and text the rules propose in a synthesis request."""
    content = request["messages"][0]["content"]
    if isinstance(content, list):  # (blocks, when a cache mark was set)
        content = "".join(block["text"] for block in content)
    fenced = content.split("The rules alone would write", 1)[1].split("<memories>\n", 1)[1]
    category, title, text = fenced.split("\n</memories>", 1)[0].split("\n", 2)
    return (
        category.removeprefix("category: "),
        title.removeprefix("title: "),
        text.removeprefix("text: "),
    )


ENTER_DARK = move(1, "down", "It is pitch dark. You can't see a thing.", HALL, CAVE)
MODEL_DARK = {
    "should_remember": True,
    "category": "DANGER",
    "memory_title": "Cave below the Hall is unlit",
    "memory_text": "Going down from the Hall leads into a pitch-dark cave: bring a lit lamp.",
}


def test_a_dark_room_found_is_proposed_to_the_model_and_its_answer_is_the_memory(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(server, store)
    server.queue_tool_use(TOOL, MODEL_DARK)
    svc.record_action_outcome(GameState(), ENTER_DARK)

    assert server.request_count == 1  # one request: the proposal and the turn together
    category, title, text = proposal(server.requests[0])
    assert (category, title) == ("NOTE", "Dark: a lit light shows it")
    assert text.startswith("Cave (L2) is dark")
    [memory] = store.entries()
    assert (memory.title, memory.text) == (MODEL_DARK["memory_title"], MODEL_DARK["memory_text"])
    assert memory.location_id == HALL  # the model's memory, at the source, not the rules'
    assert not [e for e in store.entries() if DARK_TAG in e.tags]


def test_a_model_that_repeats_the_dark_lesson_keeps_the_rules_lesson_at_the_room(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(server, store)

    def agree(s: FakeMessagesServer, body: dict[str, Any]) -> None:
        category, title, text = proposal(body)
        s.queue_tool_use(
            TOOL,
            {
                "should_remember": True,
                "category": category,
                "memory_title": title,
                "memory_text": text,
            },
        )

    server.responder = agree
    svc.record_action_outcome(GameState(), ENTER_DARK)
    assert server.request_count == 1  # asked, with the lesson proposed
    sent = json.dumps(server.requests[0]["messages"])
    assert "The rules alone would write:\\n<memories>\\ncategory: NOTE\\n" in sent
    [lesson] = store.entries()
    assert lesson.location_id == CAVE and DARK_TAG in lesson.tags
    assert [(w.command, w.source) for w in lesson.ways_in] == [("down", HALL)]


def ending_world(store: InMemoryStore) -> list[MemoryEntry]:
    return [e for e in store.entries(scope=MemoryScope.WORLD) if "ending" in e.tags]


FALL = move(
    4,
    "jump",
    "You jump off the ledge and fall a long way onto the rocks below." + DIED,
    HALL,
    HALL,
).model_copy(update={"died": True})


def test_the_episodes_ending_is_proposed_to_the_model_and_written_in_its_words(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(server, store)
    gs = GameState()
    server.queue_tool_use(
        TOOL, {"should_remember": False, "reasoning": "the ending says it (the room's lesson)"}
    )
    svc.record_action_outcome(gs, FALL)  # the room: the model keeps nothing here
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "DANGER",
            "memory_title": "Jumping off the Hall ledge is fatal",
            "memory_text": "Episode 1 ended at turn 4: jumping from the ledge in the Hall.",
            "importance": 980,
            "persistence": "core",
        },
    )
    svc.record_ending(gs, FALL)

    asked = server.requests[-1]
    category, title, _ = proposal(asked)
    assert (category, title) == ("DANGER", "Died in Hall at turn 4 by 'jump'")
    assert "the rules keep its ending in the world scope" in json.dumps(asked["messages"])
    [ending] = ending_world(store)
    assert ending.title == "Jumping off the Hall ledge is fatal"
    assert ending.text.startswith("Episode 1 ended at turn 4: jumping from the ledge")
    assert "fall a long way onto the rocks" in ending.text  # the game's words kept
    assert (ending.importance, ending.persistence, ending.source) == (
        980,
        "core",
        MemorySource.ENDING,
    )
    assert {"ending", "episode:1", "world:player_died"} <= set(ending.tags)
    assert ending.lesson is not None and (ending.turn_start, ending.episode) == (4, 1)


def test_an_ending_the_model_declines_is_not_written_and_a_failed_call_falls_back(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(server, store)
    server.queue_tool_use(TOOL, {"should_remember": False})
    svc.record_ending(GameState(), FALL)
    assert ending_world(store) == []
    server.queue_fault("500")
    server.queue_fault("500")
    svc.record_ending(GameState(episode=2), FALL.model_copy(update={"episode": 2}))
    [ending] = ending_world(store)
    assert ending.title == "Died in Hall at turn 4 by 'jump'"  # the rules', the model down


def test_an_attackers_death_keeps_the_models_words(server: FakeMessagesServer) -> None:
    store = InMemoryStore()
    svc = service(server, store)
    server.queue_tool_use(TOOL, {"should_remember": False})
    answer = {
        "should_remember": True,
        "category": "DANGER",
        "memory_title": "Died by 'east' past the troll",
        "memory_text": "Going east while the troll stands here got me killed: fight it first.",
    }
    server.queue_tool_use(TOOL, answer)
    gs = GameState()
    svc.record_action_outcome(gs, GIFT)
    svc.record_action_outcome(gs, KILLED)
    [danger] = svc.location_memories(TROLL_ROOM)
    assert (danger.title, danger.text.split(" The game said")[0]) == (
        answer["memory_title"],
        answer["memory_text"],
    )  # before: rewritten into the rules' "Attacked here by the troll"
    assert danger.category is MemoryCategory.DANGER


HALL_TEXT = "Hall\nA long hall with a staircase going up."
UP = move(1, "up", "Landing\nA dusty landing under the roof.", HALL, CAVE)


def test_a_remembered_move_with_a_new_outcome_reaches_the_model(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    with store.transaction() as tx:  # both rooms were seen before: no first visit
        for room, name in ((CAVE, "Cave"), (HALL, "Hall")):
            tx.record_visit(room, name, 1)
            tx.record_visit(room, name, 1)
    svc = service(server, store)
    server.responder = lambda s, body: s.queue_tool_use(TOOL, {"should_remember": False})
    gs = GameState()
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "NOTE",
            "memory_title": "'up' leads to Cave",
            "memory_text": "'up' from here reaches Cave (L2).",
        },
    )
    svc.record_action_outcome(gs, UP)  # a new way: asked, the map fact stored
    back = move(2, "down", HALL_TEXT, CAVE, HALL)
    svc.record_action_outcome(gs, back)
    asked = server.request_count
    svc.record_action_outcome(gs, UP.model_copy(update={"turn": 3}))  # the same answer
    assert server.request_count == asked  # old news: no request
    svc.record_action_outcome(gs, back.model_copy(update={"turn": 4}))
    news = UP.model_copy(
        update={
            "turn": 5,
            "response": UP.response + "\nA hooded figure blocks the stairs down.",
        }
    )
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "DANGER",
            "memory_title": "Hooded figure on the landing",
            "memory_text": "Going up now meets a hooded figure blocking the stairs.",
        },
    )
    before = server.request_count
    svc.record_action_outcome(gs, news)
    assert server.request_count == before + 1
    sent = json.dumps(server.requests[-1]["messages"])
    assert "is remembered already, but on arrival the game said 1 sentence" in sent
    titles = {e.title for e in svc.location_memories(HALL)}
    assert "Hooded figure on the landing" in titles


def test_the_same_ending_in_a_later_episode_is_the_models_memory_again_not_a_new_one(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(server, store)
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "DANGER",
            "memory_title": "The Hall ledge kills",
            "memory_text": "Jumping from the ledge in the Hall ends the game.",
        },
    )
    svc.record_ending(GameState(), FALL)
    asked = server.request_count
    svc.record_ending(GameState(episode=2), FALL.model_copy(update={"episode": 2}))
    assert server.request_count == asked  # the same ending (room, turn, words): not asked
    [ending] = ending_world(store)
    assert ending.title == "The Hall ledge kills"
