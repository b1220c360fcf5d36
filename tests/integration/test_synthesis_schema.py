"""The synthesis call speaks of ids and sets persistence levels (issue 38, items 4 and 5),
through the real SDK against the local Messages server.

The tool's schema offers `supersedes_memory_ids`, `invalidate_memory_ids` and `persistence`
(the older title fields are still read, no longer offered); the instructions name the same
fields and do not contradict each other (a turn that only confirms an ACTIVE memory writes
nothing and supersedes nothing); the prompt lists the id of every memory it shows; an answer's
ids and level are what is stored, and the level has its effect.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.rule_based_summarizer import RuleBasedSummarizer
from cairn.agents.summarizer import SummarizerAgent
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.models.game import GameState
from cairn.models.memory import MemoryEntry, MemoryScope, MemoryStatus
from cairn.services.clock import DeterministicClock
from cairn.services.map import MapGraph
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.testing.llm_server import FakeMessagesServer
from tests.integration.test_llm_first import (
    CELLAR,
    GUESS,
    OPEN,
    PULL,
    TOOL,
    by_title,
    client_for,
    turn,
)


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as s:
        yield s


def service(server: FakeMessagesServer, store: InMemoryStore, **policy: int) -> MemoryService:
    return fiction_memory_service(
        store,
        SummarizerAgent(client_for(server)),
        EventPublisher(),
        MapGraph(),
        MemoryPolicy(**policy),
        clock=DeterministicClock(seed=1),
    )


def here(store: InMemoryStore) -> list[MemoryEntry]:
    return store.entries(scope=MemoryScope.LOCATION, location_id=CELLAR)


def test_the_schema_and_the_instructions_speak_of_ids_and_levels(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(server, store)
    server.queue_tool_use(TOOL, GUESS)
    server.queue_tool_use(TOOL, {"should_remember": False})
    gs = GameState()
    svc.record_action_outcome(gs, PULL)
    svc.record_action_outcome(gs, OPEN)

    sent: dict[str, Any] = server.requests[1]
    [tool] = sent["tools"]
    fields = set(tool["input_schema"]["properties"])
    assert {"supersedes_memory_ids", "invalidate_memory_ids", "persistence"} <= fields
    assert not {f for f in fields if f.endswith("_titles")}
    levels = json.dumps(tool["input_schema"])
    assert all(f'"{level}"' in levels for level in ("core", "permanent", "ephemeral"))
    system = " ".join(block["text"] for block in sent["system"]) if isinstance(
        sent["system"], list
    ) else sent["system"]
    assert "supersedes_memory_ids" in system and "invalidate_memory_ids" in system
    assert "_titles" not in system and "persistence:" in system
    [guess] = here(store)
    assert f"id={guess.id}" in sent["messages"][0]["content"]
    # one rule for a turn that confirms: an ACTIVE memory it only confirms is neither
    # remembered again nor superseded; only what changes a memory is listed to supersede it
    for sentence in re.split(r"(?<=[.:])\s+", " ".join(system.split())):
        if "confirm" in sentence and "supersedes_memory_ids" in sentence:
            assert "ACTIVE memor" not in sentence, sentence
    assert "answer should_remember false: that memory stands as it is" in " ".join(system.split())


def test_an_answers_ids_supersede_and_invalidate_the_memories_it_names(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    guess, stiff = (
        MemoryEntry(
            scope=MemoryScope.LOCATION,
            location_id=CELLAR,
            title=title,
            text=text,
            status=status,
        )
        for title, text, status in (
            (GUESS["memory_title"], GUESS["memory_text"], MemoryStatus.TENTATIVE),
            ("Lever is stiff", "The lever will not move.", MemoryStatus.ACTIVE),
        )
    )
    with store.transaction() as tx:
        tx.add(guess)
        tx.add(stiff)
    svc = service(server, store)
    gs = GameState()
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "FAILURE",
            "memory_title": "Door stays locked",
            "memory_text": "The lever does not unlock the iron door: it needs a key.",
            "supersedes_memory_ids": [guess.id],
            "invalidate_memory_ids": [stiff.id],
        },
    )
    svc.record_action_outcome(gs, OPEN)

    lesson = by_title(here(store), "Door stays locked")
    assert store.get(guess.id).superseded_by == lesson.id  # type: ignore[union-attr]
    invalid = store.get(stiff.id)
    assert invalid is not None and invalid.status is MemoryStatus.SUPERSEDED
    assert invalid.superseded_by is None  # invalidated: nothing takes its place
    assert [e.title for e in svc.location_memories(CELLAR)] == ["Door stays locked"]


def test_the_level_an_answer_gives_is_stored_and_has_its_effect(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(server, store, cap_per_location=1)
    server.queue_tool_use(TOOL, {**GUESS, "persistence": "Ephemeral"})
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "SUCCESS",
            "memory_title": "Lamp lit",
            "memory_text": "Turning on the lamp lights the cellar.",
            "importance": 10,
            "persistence": "core",
        },
    )
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "NOTE",
            "memory_title": "Cold here",
            "memory_text": "The cellar is cold and damp, and smells of old wine.",
            "importance": 900,
        },
    )
    gs = GameState()
    svc.record_action_outcome(gs, PULL)
    svc.record_action_outcome(
        gs, turn(2, "turn on lamp", "The brass lantern is now on.", world_changed=True)
    )
    svc.record_action_outcome(
        gs, turn(3, "smell", "The cellar is cold and damp, and smells of old wine barrels "
                 "long since emptied; water drips somewhere in the dark.")
    )
    levels = {e.title: e.persistence for e in here(store)}
    assert levels == {GUESS["memory_title"]: "ephemeral", "Lamp lit": "core", "Cold here": None}
    svc.end_episode(gs)  # the cap of 1: the core one stays whatever its importance
    visible = [e.title for e in svc.location_memories(CELLAR)]
    assert visible == ["Lamp lit"]
    [ephemeral] = [e for e in here(store) if e.title == GUESS["memory_title"]]
    assert ephemeral.persistence == "ephemeral"  # kept in the store, out of the prompts


def test_a_model_that_repeats_the_rules_memory_gives_it_its_level(
    server: FakeMessagesServer,
) -> None:
    offline = fiction_memory_service(
        InMemoryStore(), RuleBasedSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )
    offline.record_action_outcome(GameState(), OPEN)
    [rules] = offline.location_memories(CELLAR)
    store = InMemoryStore()
    svc = service(server, store)
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "FAILURE",
            "memory_title": rules.title,
            "memory_text": rules.text,
            "persistence": "permanent",
        },
    )
    svc.record_action_outcome(GameState(), OPEN)
    [ledger] = here(store)
    assert (ledger.text, ledger.source, ledger.persistence) == (
        rules.text,
        rules.source,
        "permanent",
    )
