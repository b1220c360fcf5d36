"""LLM-first synthesis (issue 29, item 6) through the real SDK against the local Messages server.

With a model configured, the turns the rules used to write alone (a failure, a success that did
nothing this time, a new way between known rooms) go to the summarizer with the rules' verdict
as a hint, and its answer decides; the rules decide alone only offline, when the call fails or
while the circuit is open. And the decision is taken in the research's own tool conversation, so
it sees everything research found.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest

from cairn.adapters.llm.anthropic_client import AnthropicClient
from cairn.adapters.llm.breaker import CircuitBreaker
from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.adventurer import AdventurerAgent
from cairn.agents.memory_toolbox import MemoryToolbox
from cairn.agents.offline_stand_in import StandInWhileDown
from cairn.agents.rule_based_summarizer import RuleBasedSummarizer
from cairn.agents.scripted import ScriptedAgent
from cairn.agents.summarizer import SummarizerAgent
from cairn.container import build_summarizer
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.agent import AgentView
from cairn.interfaces.game import GameObservation
from cairn.interfaces.llm import ROLES, ILLMClient
from cairn.interfaces.summarizer import ISummarizer
from cairn.models.game import GameState, TurnOutcome
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemorySource, MemoryStatus
from cairn.services.clock import DeterministicClock
from cairn.services.map import MapGraph
from cairn.services.memory_query import MemoryQueryTools
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.testing.cache_sim import unmarked
from cairn.testing.llm_server import FakeMessagesServer

MODELS = {role: f"claude-test-{role}" for role in ROLES}
TOOL = "SynthesisDecision"
CELLAR = 40


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as s:
        yield s


def client_for(server: FakeMessagesServer) -> AnthropicClient:
    return AnthropicClient(
        api_key="sk-ant-test-KEY",
        models=MODELS,
        base_url=server.base_url,
        timeout=5.0,
        max_retries=0,
    )


def service(summarizer: ISummarizer, store: InMemoryStore | None = None) -> MemoryService:
    return fiction_memory_service(
        store or InMemoryStore(),
        summarizer,
        EventPublisher(),
        MapGraph(),
        MemoryPolicy(),
        clock=DeterministicClock(seed=1),
    )


def turn(n: int, action: str, response: str, after: int = CELLAR, **kw: Any) -> TurnOutcome:
    return TurnOutcome(
        turn=n,
        action=action,
        response=response,
        location_before=CELLAR,
        location_before_name="Cellar",
        location_after=after,
        **kw,
    )


PULL = turn(
    1,
    "pull lever",
    "You pull the rusty lever. Somewhere behind the iron door you hear a distant click, as "
    "if a bolt had moved; perhaps the door is unlocked now.",
)
OPEN = turn(2, "open door", "The door is locked.")
GUESS = {
    "should_remember": True,
    "category": "NOTE",
    "status": "TENTATIVE",
    "memory_title": "Lever may unlock the door",
    "memory_text": "Pulling the lever clicked behind the iron door; it may be unlocked now.",
}
LEDGER_TITLE = "Open door"
LEDGER_TEXT = "Tried here, did not work: 'open door'. The game said: \"The door is locked.\""


def all_here(store: InMemoryStore) -> list[MemoryEntry]:
    return store.entries(scope=MemoryScope.LOCATION, location_id=CELLAR)


def by_title(entries: list[MemoryEntry], title: str) -> MemoryEntry:
    [entry] = [e for e in entries if e.title == title]
    return entry


def prompt_of(request: dict[str, Any]) -> str:
    return json.dumps(request["messages"])


# -- (a) a failure the summarizer sees supersedes a TENTATIVE memory ----------------------------


def test_a_failure_reaches_the_model_with_the_rules_verdict_and_supersedes_the_guess(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(SummarizerAgent(client_for(server)), store)
    server.queue_tool_use(TOOL, GUESS)
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "FAILURE",
            "status": "ACTIVE",
            "memory_title": "Lever does not unlock the door",
            "memory_text": "The lever clicks, but the iron door stays locked: it needs a key.",
            "supersedes_memory_titles": ["Lever may unlock the door"],
        },
    )
    gs = GameState()
    svc.record_action_outcome(gs, PULL)
    svc.record_action_outcome(gs, OPEN)

    assert server.request_count == 2  # the failure was asked about, not written by rules
    asked = prompt_of(server.requests[1])
    assert "Rules' verdict (a hint; you decide): FAILURE (locked)" in asked
    assert "The rules alone would write:\\n<memories>\\ncategory: FAILURE\\n" in asked
    assert f"\\ntitle: {LEDGER_TITLE}\\ntext: Tried here, did not work: 'open door'." in asked
    assert "[TENTATIVE]" in asked and "Lever may unlock the door" in asked
    entries = all_here(store)
    guess = by_title(entries, "Lever may unlock the door")
    lesson = by_title(entries, "Lever does not unlock the door")
    assert guess.status is MemoryStatus.SUPERSEDED and guess.superseded_by == lesson.id
    assert lesson.status is MemoryStatus.ACTIVE and lesson.category is MemoryCategory.FAILURE
    assert "needs a key" in lesson.text
    visible = [e.title for e in svc.location_memories(CELLAR)]
    assert visible == ["Lever does not unlock the door"]  # the model's memory, no rules' ledger


def test_a_model_that_answers_the_rules_memory_keeps_their_ledger_and_its_supersession(
    server: FakeMessagesServer,
) -> None:
    offline = service(RuleBasedSummarizer())
    offline.record_action_outcome(GameState(), OPEN)
    [rules] = offline.location_memories(CELLAR)

    store = InMemoryStore()
    svc = service(SummarizerAgent(client_for(server)), store)
    server.queue_tool_use(TOOL, GUESS)
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "FAILURE",
            "memory_title": LEDGER_TITLE,
            "memory_text": LEDGER_TEXT,
            "supersedes_memory_titles": ["Lever may unlock the door"],
        },
    )
    gs = GameState()
    svc.record_action_outcome(gs, PULL)
    svc.record_action_outcome(gs, OPEN)

    assert (rules.title, rules.text) == (LEDGER_TITLE, LEDGER_TEXT)  # the hint is the rules' own
    ledger = by_title(all_here(store), LEDGER_TITLE)
    assert (ledger.text, ledger.tags, ledger.source) == (rules.text, rules.tags, rules.source)
    assert ledger.source is MemorySource.FAILURE
    guess = by_title(all_here(store), "Lever may unlock the door")
    assert guess.status is MemoryStatus.SUPERSEDED and guess.superseded_by == ledger.id


def test_a_success_that_later_did_nothing_is_asked_about_and_one_truth_stands(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(SummarizerAgent(client_for(server)), store)
    taken = turn(1, "take leaflet", "Taken.", inventory_before=[], inventory_after=["leaflet"])
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "SUCCESS",
            "memory_title": "Got leaflet",
            "memory_text": "'take leaflet' got leaflet.",
        },
    )
    gs = GameState()
    svc.record_action_outcome(gs, taken)
    [got] = svc.location_memories(CELLAR)
    again = turn(
        2,
        "take leaflet",
        "You already have that!",
        inventory_before=["leaflet"],
        inventory_after=["leaflet"],
    )
    qualified = (
        "'take leaflet' got leaflet. Later, take leaflet: already held "
        '(Ep1, T2: "You already have that!").'
    )
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "SUCCESS",
            "memory_title": "Got leaflet",
            "memory_text": qualified,
        },
    )

    svc.record_action_outcome(gs, again)

    assert server.request_count == 2
    asked = server.requests[1]["messages"][0]["content"]
    assert "Rules' verdict (a hint; you decide): NO-OP (already held)" in asked
    assert f"The rules alone would write (in place of id={got.id}):\n<memories>\n" in asked
    assert f"category: SUCCESS\ntitle: Got leaflet\ntext: {qualified}\n</memories>" in asked
    [truth] = svc.location_memories(CELLAR)
    assert truth.text == qualified and store.get(got.id).superseded_by == truth.id  # type: ignore[union-attr]


def test_when_the_model_fails_on_a_failure_the_rules_write_it(
    server: FakeMessagesServer,
) -> None:
    svc = service(SummarizerAgent(client_for(server)))
    server.queue_fault("500")
    svc.record_action_outcome(GameState(), OPEN)
    assert server.request_count == 1 and svc.summary_failures == 1
    [ledger] = svc.location_memories(CELLAR)
    assert (ledger.title, ledger.text, ledger.source) == (
        LEDGER_TITLE,
        LEDGER_TEXT,
        MemorySource.FAILURE,
    )


def test_while_the_circuit_is_open_the_stand_in_writes_the_rules_ledger(
    server: FakeMessagesServer,
) -> None:
    breaker = CircuitBreaker(client_for(server), threshold=1)
    summarizer = build_summarizer(breaker)
    assert isinstance(summarizer, StandInWhileDown)
    svc = service(summarizer)
    server.queue_fault("529")
    gs = GameState()
    svc.record_action_outcome(gs, OPEN)  # fails: the circuit opens, the rules write
    svc.record_action_outcome(gs, turn(3, "unlock door", "The door is locked."))  # refused
    assert server.request_count == 1 and breaker.state == "open"  # one call, then none
    assert summarizer.stand_in_calls["synthesis"] == 1
    [ledger] = svc.location_memories(CELLAR)
    assert ledger.text.startswith("Tried here, did not work: 'open door', 'unlock door'.")


def test_a_new_way_between_known_rooms_is_asked_about_with_the_map_fact_as_hint(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    with store.transaction() as tx:  # the Cellar was seen twice before
        tx.record_visit(CELLAR, "Cellar", 1)
        tx.record_visit(CELLAR, "Cellar", 1)
    svc = service(SummarizerAgent(client_for(server)), store)
    up = TurnOutcome(
        turn=3,
        action="up",
        response="Cellar",
        location_before=41,
        location_before_name="Hall",
        location_after=CELLAR,
        location_after_name="Cellar",
    )
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "NOTE",
            "memory_title": "'up' leads to Cellar",
            "memory_text": "'up' from here reaches Cellar (L40).",
        },
    )

    svc.record_action_outcome(GameState(), up)

    assert server.request_count == 1  # offline, a map fact with no summarizer call
    asked = prompt_of(server.requests[0])
    assert "Rules' verdict (a hint; you decide): CHANGED (the state changed: location;" in asked
    assert "<memories>\\ncategory: NOTE\\ntitle: 'up' leads to Cellar\\ntext: " in asked
    [fact] = svc.location_memories(41)
    assert fact.source is MemorySource.MOVE and (fact.via, fact.leads_to) == ("up", CELLAR)


# -- (c) deaths reach the model with the rules' danger as the hint -----------------------------

TROLL_ROOM = 102
GIFT = TurnOutcome(
    turn=1,
    action="give lunch to troll",
    response="The troll, who is not overly proud, graciously accepts the gift and not having "
    "the most discriminating tastes, gleefully eats it.",
    location_before=TROLL_ROOM,
    location_before_name="The Troll Room",
    location_after=TROLL_ROOM,
    inventory_before=["lunch"],
    inventory_after=[],
)
KILLED = TurnOutcome(
    turn=2,
    action="east",
    response="The troll's mighty axe hits you squarely in the face. Alas, the troll's axe "
    "removes your head.\n\n    ****  You have died  ****\n",
    location_before=TROLL_ROOM,
    location_before_name="The Troll Room",
    location_after=TROLL_ROOM,
    died=True,
)
GIFT_GUESS = {
    "should_remember": True,
    "category": "NOTE",
    "status": "TENTATIVE",
    "memory_title": "Troll accepts lunch gift",
    "memory_text": "Giving the lunch to the troll: he accepts it; whether it calms him is unclear.",
}


def troll_room(store: InMemoryStore) -> list[MemoryEntry]:
    return store.entries(scope=MemoryScope.LOCATION, location_id=TROLL_ROOM)


def offline_lesson() -> MemoryEntry:
    """What the rules alone leave of the troll's kill (no model): the attacker's lesson."""
    offline = service(RuleBasedSummarizer())
    gs = GameState()
    offline.record_action_outcome(gs, GIFT)
    offline.record_action_outcome(gs, KILLED)
    [lesson] = offline.location_memories(TROLL_ROOM)
    return lesson


def test_a_death_reaches_the_model_with_the_rules_danger_and_supersedes_the_gift_guess(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(SummarizerAgent(client_for(server)), store)
    server.queue_tool_use(TOOL, GIFT_GUESS)
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "DANGER",
            "status": "ACTIVE",
            "memory_title": "Lunch does not appease the troll",
            "memory_text": "The troll eats the lunch and still kills: fight him armed.",
            "supersedes_memory_titles": ["Troll accepts lunch gift"],
        },
    )
    gs = GameState()
    svc.record_action_outcome(gs, GIFT)
    svc.record_action_outcome(gs, KILLED)

    assert server.request_count == 2
    asked = prompt_of(server.requests[1])
    verdict = "Rules' verdict (a hint; you decide): DEATH (cause combat (an attacker: the troll)"
    assert verdict in asked
    rules = offline_lesson()
    guess = by_title(troll_room(store), "Troll accepts lunch gift")
    assert f"The rules alone would write (in place of id={guess.id}):" in asked
    assert f"<memories>\\ncategory: DANGER\\ntitle: {rules.title}\\ntext: " in asked
    lesson = by_title(troll_room(store), "Lunch does not appease the troll")
    assert guess.status is MemoryStatus.SUPERSEDED and guess.superseded_by == lesson.id
    assert [e.title for e in svc.location_memories(TROLL_ROOM)] == [lesson.title]


def test_a_model_that_repeats_the_rules_death_keeps_their_lesson(
    server: FakeMessagesServer,
) -> None:
    rules = offline_lesson()
    assert rules.title == "Attacked here by the troll"
    store = InMemoryStore()
    svc = service(SummarizerAgent(client_for(server)), store)
    server.queue_tool_use(TOOL, GIFT_GUESS)
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "DANGER",
            "memory_title": rules.title,
            "memory_text": rules.text,
            "supersedes_memory_titles": ["Troll accepts lunch gift"],
        },
    )
    gs = GameState()
    svc.record_action_outcome(gs, GIFT)
    svc.record_action_outcome(gs, KILLED)

    lesson = by_title(troll_room(store), rules.title)
    assert (lesson.text, lesson.tags, lesson.source, lesson.importance) == (
        rules.text,
        rules.tags,
        rules.source,
        rules.importance,
    )
    guess = by_title(troll_room(store), "Troll accepts lunch gift")
    assert guess.status is MemoryStatus.SUPERSEDED and guess.superseded_by == lesson.id


def test_when_the_model_fails_on_a_death_the_rules_write_their_lesson(
    server: FakeMessagesServer,
) -> None:
    rules = offline_lesson()
    store = InMemoryStore()
    svc = service(SummarizerAgent(client_for(server)), store)
    server.queue_tool_use(TOOL, GIFT_GUESS)
    server.queue_fault("500")
    gs = GameState()
    svc.record_action_outcome(gs, GIFT)
    svc.record_action_outcome(gs, KILLED)

    assert server.request_count == 2 and svc.summary_failures == 1
    [lesson] = svc.location_memories(TROLL_ROOM)
    assert (lesson.title, lesson.text, lesson.tags, lesson.source) == (
        rules.title,
        rules.text,
        rules.tags,
        rules.source,
    )
    guess = by_title(troll_room(store), "Troll accepts lunch gift")
    assert guess.status is MemoryStatus.SUPERSEDED and guess.superseded_by == lesson.id


THIRST = TurnOutcome(
    turn=30,
    action="north",
    response="You stumble on, but your throat is parched and your strength is gone. You die of"
    " thirst.\n\n    ****  You have died  ****\n",
    location_before=CELLAR,
    location_before_name="Cellar",
    location_after=CELLAR,
    died=True,
)
THIRST_LESSON = {
    "should_remember": True,
    "category": "DANGER",
    "status": "ACTIVE",
    "memory_title": "Thirst kills by turn 30",
    "memory_text": "Without a drink the thirst ends the game near turn 30: fill the flask first.",
}


def test_a_death_the_command_did_not_cause_reaches_the_model_for_a_lesson_here(
    server: FakeMessagesServer,
) -> None:
    """A death by a need (thirst) blames no command: the rules write nothing at the room (the
    world's ending is `record_ending`'s), but with a model the turn goes to it, told the cause,
    and a lesson it draws is kept where it happened. Before, the model was never asked."""
    store = InMemoryStore()
    svc = service(SummarizerAgent(client_for(server)), store)
    server.queue_tool_use(TOOL, THIRST_LESSON)
    svc.record_action_outcome(GameState(), THIRST)

    assert server.request_count == 1
    asked = prompt_of(server.requests[0])
    assert "Rules' verdict (a hint; you decide): DEATH (cause hunger (hunger or thirst)" in asked
    assert "The rules alone would write nothing themselves." in asked
    [lesson] = all_here(store)
    assert (lesson.title, lesson.category) == ("Thirst kills by turn 30", MemoryCategory.DANGER)
    assert "'north'" not in lesson.title


def test_a_death_the_command_did_not_cause_writes_nothing_here_offline_or_when_declined(
    server: FakeMessagesServer,
) -> None:
    offline = InMemoryStore()
    service(RuleBasedSummarizer(), offline).record_action_outcome(GameState(), THIRST)
    assert all_here(offline) == []
    store = InMemoryStore()
    svc = service(SummarizerAgent(client_for(server)), store)
    server.queue_tool_use(TOOL, {"should_remember": False, "reasoning": "nothing to act on"})
    svc.record_action_outcome(GameState(), THIRST)
    assert server.request_count == 1 and all_here(store) == []


# -- (b) a decision after 4 research rounds carries their results -------------------------------


def view() -> AgentView:
    return AgentView(
        episode=1,
        turn=4,
        observation=GameObservation(
            text="A damp cellar.", location_id=CELLAR, location_name="Cellar"
        ),
        prompt="(no memory context)",
        objectives=[],
    )


def adventurer(client: ILLMClient) -> AdventurerAgent:
    svc = service(RuleBasedSummarizer())
    svc.remember(GameState(), "The rusty key is hidden under the doormat", 800, location_id=7)
    svc.remember(
        GameState(), "The iron door in the Cellar needs the rusty key", 700, location_id=40
    )
    toolbox = MemoryToolbox(MemoryQueryTools(svc))
    return AdventurerAgent(client, fallback=ScriptedAgent(["look"]), toolbox=toolbox)


def test_a_decision_after_four_research_rounds_carries_what_they_found(
    server: FakeMessagesServer,
) -> None:
    questions = ["where is the rusty key?", "what opens the iron door?"]
    for i in range(4):  # four research rounds, the last still calling tools
        server.queue_tool_use("query_memories", {"question": questions[i % 2]})
    server.queue_tool_use("AgentDecision", {"action": "west", "reasoning": "fetch the key"})

    decision = adventurer(client_for(server)).decide(view())

    assert decision.action == "west"
    assert server.request_count == 5
    sent_plain = [unmarked(r) for r in server.requests]  # as sent, without cache marks
    *research, last = sent_plain
    assert last["tool_choice"] == {"type": "tool", "name": "AgentDecision"}
    assert all(r["tool_choice"] == {"type": "any"} for r in research)
    assert all(r["tools"] == last["tools"] for r in research)  # one tool list, one cache prefix
    for before, after in itertools.pairwise(sent_plain):
        assert after["messages"][: len(before["messages"])] == before["messages"]
    sent = prompt_of(last)
    assert sent.count('"type": "tool_result"') == 4
    assert "hidden under the doormat" in sent and "needs the rusty key" in sent
    assert "Research is over" in sent


def test_research_that_ends_in_words_carries_the_words_and_the_tool_answers(
    server: FakeMessagesServer,
) -> None:
    server.queue_tool_use("query_memories", {"question": "where is the rusty key?"})
    server.queue_text("The key is under the doormat at Location 7.")
    server.queue_tool_use("AgentDecision", {"action": "west", "reasoning": "fetch the key"})

    decision = adventurer(client_for(server)).decide(view())

    assert decision.action == "west" and server.request_count == 3
    last = server.requests[-1]
    assert last["tool_choice"] == {"type": "tool", "name": "AgentDecision"}
    sent = prompt_of(last)
    assert "The key is under the doormat at Location 7." in sent
    assert "hidden under the doormat" in sent


def test_a_decision_with_nothing_to_look_up_takes_one_request(
    server: FakeMessagesServer,
) -> None:
    server.queue_tool_use("AgentDecision", {"action": "west", "reasoning": "onward"})

    assert adventurer(client_for(server)).decide(view()).action == "west"

    [only] = server.requests
    assert only["tool_choice"] == {"type": "any"}
    assert [t["name"] for t in only["tools"]][-1] == "AgentDecision"
    assert {"query_memories", "get_location_memories"} <= {t["name"] for t in only["tools"]}


def test_an_invalid_decision_among_lookups_is_repaired_in_the_conversation(
    server: FakeMessagesServer,
) -> None:
    server.queue_tool_use("AgentDecision", {"reasoning": "no action given"})
    server.queue_tool_use("AgentDecision", {"action": "west", "reasoning": "fixed"})

    assert adventurer(client_for(server)).decide(view()).action == "west"

    first, repair = server.requests
    assert repair["tool_choice"] == first["tool_choice"] == {"type": "any"}
    [result] = repair["messages"][-1]["content"]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "action" in result["content"]


def test_a_second_invalid_decision_hands_the_turn_to_the_fallback(
    server: FakeMessagesServer,
) -> None:
    server.queue_tool_use("AgentDecision", {"reasoning": "no action"})
    server.queue_tool_use("AgentDecision", {"reasoning": "still none"})

    agent = adventurer(client_for(server))
    assert agent.decide(view()).action == "look"  # the scripted fallback
    assert agent.failures == 1 and server.request_count == 2
