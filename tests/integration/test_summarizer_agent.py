"""SummarizerAgent + MemoryService through the real SDK against the local Messages-API server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.llm.anthropic_client import AnthropicClient
from cairn.adapters.llm.cassette import CassetteClient
from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.memory_toolbox import MemoryToolbox, decide_with_research
from cairn.agents.summarizer import SummarizerAgent
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.agent import AgentDecision
from cairn.interfaces.llm import ROLES, ILLMClient, LLMMessage, LLMRequest, LLMResponse
from cairn.interfaces.store import IMemoryStore
from cairn.models.game import GameState, TurnOutcome
from cairn.models.memory import MemoryCategory, MemoryScope, MemoryStatus
from cairn.services.clock import DeterministicClock
from cairn.services.map import MapGraph
from cairn.services.memory_query import MemoryQueryTools
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.testing.llm_server import FakeMessagesServer

MODELS = {role: f"claude-test-{role}" for role in ROLES}
TOOL = "SynthesisDecision"


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
        max_retries=1,
    )


def service(llm: ILLMClient, store: IMemoryStore | None = None) -> MemoryService:
    return fiction_memory_service(
        store or InMemoryStore(),
        SummarizerAgent(llm),
        EventPublisher(),
        MapGraph(),
        MemoryPolicy(),
        clock=DeterministicClock(seed=1),
    )


def turn(
    n: int, action: str, response: str, before: int, after: int, name: str, **kw: Any
) -> TurnOutcome:
    return TurnOutcome(
        turn=n,
        action=action,
        response=response,
        location_before=before,
        location_before_name=name,
        location_after=after,
        **kw,
    )


WINDOW = [
    turn(
        47,
        "examine window",
        "The window is slightly ajar. Perhaps you could open it further "
        "if you put some effort into it, which seems possible.",
        79,
        79,
        "Behind House",
    ),
    turn(48, "open window", "With some effort, you open the window.", 79, 79, "Behind House"),
    turn(
        49,
        "enter window",
        "You climb through the window. Kitchen: You are in a small kitchen.",
        79,
        203,
        "Behind House",
    ),
]
PROCEDURE = {
    "should_remember": True,
    "category": "SUCCESS",
    "status": "ACTIVE",
    "multi_step": True,
    "memory_title": "Enter kitchen through window",
    "memory_text": "To enter the kitchen from behind the house: (1) examine window, (2) open "
    "window, (3) enter window.",
    "reasoning": "A prerequisite procedure spanning three turns.",
}


def play_window(svc: MemoryService) -> None:
    gs = GameState()
    for t in WINDOW:
        svc.record_action_outcome(gs, t)


def test_window_sequence_yields_one_procedure_memory_at_the_source(
    server: FakeMessagesServer,
) -> None:
    server.queue_tool_use(TOOL, {"should_remember": False, "reasoning": "nothing yet"})
    server.queue_tool_use(TOOL, PROCEDURE)
    svc = service(client_for(server))
    play_window(svc)
    [memory] = svc.location_memories(79)
    assert memory.title == "Enter kitchen through window" and memory.location_id == 79
    assert (memory.turn_start, memory.turn_end) == (47, 49)
    assert svc.location_memories(203) == []
    assert server.request_count == 2  # turn 48 fired no trigger: no call
    prompt = json.dumps(server.requests[-1]["messages"])
    assert "examine window" in prompt and "open window" in prompt  # seed-001 history window


TROLL = [
    turn(
        12,
        "give lunch to troll",
        "The troll graciously accepts the lunch and eats it hungrily.",
        152,
        152,
        "Troll Room",
        inventory_before=["lunch", "sword"],
        inventory_after=["sword"],
    ),
    turn(
        13,
        "north",
        "The troll frowns and blocks your path, snarling. The troll swings his axe "
        "and cleaves you in twain!",
        152,
        152,
        "Troll Room",
        died=True,
    ),
]


def store_kinds() -> list[str]:
    return ["markdown", "sqlite"]


def open_store(kind: str, tmp_path: Path) -> IMemoryStore:
    if kind == "markdown":
        from cairn.adapters.storage.markdown_store import MarkdownMemoryStore

        return MarkdownMemoryStore(tmp_path / "Memories.md")
    from cairn.adapters.storage.sqlite_store import SqliteMemoryStore

    return SqliteMemoryStore(tmp_path / "memories.sqlite3")


@pytest.mark.parametrize("kind", store_kinds())
def test_troll_tentative_is_superseded_by_active_danger_and_link_survives_reload(
    server: FakeMessagesServer, tmp_path: Path, kind: str
) -> None:
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "NOTE",
            "status": "TENTATIVE",
            "memory_title": "Troll accepts lunch gift",
            "memory_text": "Outcome unclear.",
        },
    )
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "category": "DANGER",
            "status": "ACTIVE",
            "memory_title": "Troll attacks after accepting gift",
            "memory_text": "The troll takes the lunch, then kills you going north.",
            "supersedes_memory_titles": ["Troll accepts lunch gift"],
        },
    )
    svc = service(client_for(server), open_store(kind, tmp_path))
    gs = GameState()
    for t in TROLL:
        svc.record_action_outcome(gs, t)
    second_prompt = json.dumps(server.requests[-1]["messages"])
    assert "[TENTATIVE]" in second_prompt  # synthesis is shown the status
    reopened = open_store(kind, tmp_path)
    entries = reopened.entries(scope=MemoryScope.LOCATION, location_id=152)
    old = next(e for e in entries if e.title == "Troll accepts lunch gift")
    new = next(e for e in entries if e.title == "Troll attacks after accepting gift")
    assert old.status is MemoryStatus.SUPERSEDED and old.superseded_by == new.id
    assert new.status is MemoryStatus.ACTIVE and new.category is MemoryCategory.DANGER


def test_four_supersede_names_still_store_the_new_memory(server: FakeMessagesServer) -> None:
    svc = service(client_for(server))
    gs = GameState()
    for n in range(4):
        server.queue_tool_use(
            TOOL, {"should_remember": True, "memory_title": f"Old {n}", "memory_text": "x"}
        )
        svc.record_action_outcome(gs, turn(n, f"look {n}", "y" * 120, 5, 5, "Hall"))
    server.queue_tool_use(
        TOOL,
        {
            "should_remember": True,
            "memory_title": "New",
            "memory_text": "z",
            "supersedes_memory_titles": [f"Old {n}" for n in range(4)],
        },
    )
    new = svc.record_action_outcome(gs, turn(9, "look", "w" * 120, 5, 5, "Hall"))
    assert new is not None
    assert [m.title for m in svc.location_memories(5)] == ["Old 3", "New"]


def test_llm_failure_loses_nothing_and_is_counted(server: FakeMessagesServer) -> None:
    server.queue_tool_use(TOOL, PROCEDURE)
    svc = service(client_for(server))
    svc.record_action_outcome(GameState(), WINDOW[2])
    for _ in range(4):
        server.queue_fault("500")
    assert (
        svc.record_action_outcome(GameState(), turn(50, "look", "v" * 150, 79, 79, "Behind House"))
        is None
    )
    assert len(svc.location_memories(79)) == 1
    assert svc.summary_failures == 1


def test_record_then_replay_without_server_is_byte_identical(tmp_path: Path) -> None:
    from cairn.adapters.storage.markdown_store import MarkdownMemoryStore

    cassette = tmp_path / "cassette.jsonl"
    with FakeMessagesServer() as srv:
        srv.queue_tool_use(TOOL, {"should_remember": False})
        srv.queue_tool_use(TOOL, PROCEDURE)
        recorder = CassetteClient(cassette, "record", MODELS, inner=client_for(srv))
        play_window(service(recorder, MarkdownMemoryStore(tmp_path / "a" / "Memories.md")))
        recorded_prompts = [r["messages"] for r in srv.requests]
    replayer = PromptSpy(CassetteClient(cassette, "replay", MODELS))
    play_window(service(replayer, MarkdownMemoryStore(tmp_path / "b" / "Memories.md")))
    a = (tmp_path / "a" / "Memories.md").read_bytes()
    b = (tmp_path / "b" / "Memories.md").read_bytes()
    assert a == b and b"Enter kitchen through window" in a
    assert len(recorded_prompts) == 2
    replayed = [json.dumps(m, sort_keys=True).encode() for m in replayer.messages]
    assert replayed == [json.dumps(m, sort_keys=True).encode() for m in recorded_prompts]


class PromptSpy(ILLMClient):
    """Passes requests through and keeps their messages as the wire would carry them."""

    def __init__(self, inner: ILLMClient) -> None:
        self.inner = inner
        self.messages: list[Any] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.messages.append([{"role": m.role, "content": m.content} for m in request.messages])
        return self.inner.complete(request)


def test_adventurer_query_tool_call_reaches_the_tool_and_its_result_is_sent_back(
    server: FakeMessagesServer,
) -> None:
    store = InMemoryStore()
    svc = service(client_for(server), store)
    svc.remember(GameState(), "The rusty key is hidden under the doormat", 800, location_id=7)
    toolbox = MemoryToolbox(MemoryQueryTools(svc))
    server.queue_tool_use("query_memories", {"question": "where is the rusty key?"})
    server.queue_tool_use("AgentDecision", {"action": "look under doormat", "reasoning": "key"})
    request = LLMRequest(
        role="adventurer",
        system="You play a text adventure.",
        messages=[LLMMessage(role="user", content="West of House.")],
    )
    answer, _ = decide_with_research(client_for(server), request, AgentDecision, toolbox)
    assert answer.action == "look under doormat"
    assert [c.name for c in toolbox.calls] == ["query_memories"]
    follow_up = server.requests[1]["messages"][-1]["content"][0]
    assert follow_up["type"] == "tool_result" and "doormat" in follow_up["content"]
    offered = {t["name"] for t in server.requests[0]["tools"]}
    assert offered == {
        "get_top_memories",
        "query_memories",
        "get_location_memories",
        "AgentDecision",
    }
