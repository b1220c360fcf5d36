"""Seed-003 memory tools backed by the query model, through the adventurer's tool conversation
and the real SDK against the local Messages-API server: the adventurer calls the tools, the
tools call the model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.llm.anthropic_client import AnthropicClient
from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.memory_retriever import LLMMemoryRetriever
from cairn.agents.memory_toolbox import MemoryToolbox, decide_with_research
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.agent import AgentDecision
from cairn.interfaces.llm import ROLES, LLMMessage, LLMRequest
from cairn.models.game import GameState
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope
from cairn.services.map import MapGraph
from cairn.services.memory_query import MemoryQueryTools
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.settings import load_settings
from cairn.testing import FakeSummarizer
from cairn.testing.llm_server import FakeMessagesServer

MODELS = {role: f"claude-test-{role}" for role in ROLES}
SYSTEM = "You play a text adventure. Research your memories before acting."
CONTEXT = "Forest Path (L10). It is getting dark."


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as s:
        yield s


def client(server: FakeMessagesServer) -> AnthropicClient:
    return AnthropicClient(
        api_key="sk-ant-test", models=MODELS, base_url=server.base_url, timeout=5.0, max_retries=0
    )


def memory(
    loc_id: int,
    name: str,
    title: str,
    text: str,
    importance: int = 500,
    category: MemoryCategory = MemoryCategory.NOTE,
) -> MemoryEntry:
    return MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=loc_id,
        location_name=name,
        category=category,
        title=title,
        text=text,
        importance=importance,
    )


ENTRIES = [
    memory(5, "Living Room", "Lantern", "A brass lantern sits on the trophy case", 400),
    memory(2, "West of House", "Leaflet", "The mailbox holds a leaflet", 900),
    memory(10, "Forest Path", "Tree", "A climbable tree with a nest above", 500),
    memory(11, "Forest Path", "Songbird", "A songbird chirps in the distance", 300),
    memory(
        10,
        "Forest Path",
        "Deadly: jump",
        "Jumping from the tree killed us",
        950,
        MemoryCategory.DANGER,
    ),
]


def service() -> MemoryService:
    store = InMemoryStore()
    with store.transaction() as tx:
        for e in ENTRIES:
            tx.add(e)
        tx.record_visit(10, "Forest Path", 1)
        tx.record_visit(11, "Forest Path", 1)
    return fiction_memory_service(
        store, FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )


def tools_for(server: FakeMessagesServer, svc: MemoryService | None = None) -> MemoryQueryTools:
    return MemoryQueryTools(svc or service(), LLMMemoryRetriever(client(server)))


def consult(server: FakeMessagesServer, toolbox: MemoryToolbox) -> AgentDecision:
    """The adventurer's decision after the research it chose to do."""
    request = LLMRequest(
        role="adventurer", system=SYSTEM, messages=[LLMMessage(role="user", content=CONTEXT)]
    )
    decision, _ = decide_with_research(client(server), request, AgentDecision, toolbox)
    return decision


def decide(server: FakeMessagesServer, reasoning: str = "done") -> None:
    """Queue the adventurer's decision, with `reasoning`."""
    server.queue_tool_use("AgentDecision", {"action": "north", "reasoning": reasoning})


def user_text(request: dict[str, Any]) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


def tool_result(request: dict[str, Any]) -> str:
    """The content of the single tool_result block the research loop sent back."""
    [block] = request["messages"][-1]["content"]
    assert block["type"] == "tool_result"
    return str(block["content"])


SUMMARY = (
    "Location 10 has a climbable tree with a nest, but jumping from it killed us. "
    "Location 11 only has a songbird."
)


def test_the_model_calls_both_tools_and_the_tools_call_the_query_model(
    server: FakeMessagesServer,
) -> None:
    tools = tools_for(server)
    toolbox = MemoryToolbox(tools)
    server.queue_tool_use("query_memories", {"question": "How do I get some light?"})
    # candidates: no word matches, so by importance: M1 jump, M2 Leaflet, M3 Tree, M4 Lantern
    server.queue_tool_use(
        "MemoryRanking",
        {"ids": ["M4", "M3"], "answer": "Take the brass lantern in the Living Room (Location 5)."},
    )
    server.queue_tool_use("get_location_memories", {"location": "Forest Path"})
    server.queue_text(SUMMARY)
    decide(server, "Fetch the lantern from Location 5; never jump from the tree.")

    answer = consult(server, toolbox)

    assert answer.reasoning == "Fetch the lantern from Location 5; never jump from the tree."
    assert [c.name for c in toolbox.calls] == ["query_memories", "get_location_memories"]
    assert [r["model"] for r in server.requests] == [
        "claude-test-adventurer",
        "claude-test-query",
        "claude-test-adventurer",
        "claude-test-query",
        "claude-test-adventurer",
    ]
    assert tools.failures == 0

    ranker = server.requests[1]
    assert ranker["tool_choice"] == {"type": "tool", "name": "MemoryRanking"}
    assert [t["name"] for t in ranker["tools"]] == ["MemoryRanking"]
    assert ranker["tools"][0]["input_schema"]["required"] == ["ids", "answer"]
    prompt = user_text(ranker)
    assert "Question: How do I get some light?" in prompt
    assert "M4 [Location 5 Living Room | NOTE | importance=400] Lantern:" in prompt
    assert "one line" in ranker["system"] and "at most 5" in ranker["system"]

    ranked = tool_result(server.requests[2])
    assert ranked.splitlines() == [
        "Answer: Take the brass lantern in the Living Room (Location 5).",
        "Relevant memories (ranked by the query model):",
        "1. [Location 5 | importance=400] Lantern: A brass lantern sits on the trophy case",
        "2. [Location 10 | importance=500] Tree: A climbable tree with a nest above",
    ]

    summariser = server.requests[3]
    assert "tools" not in summariser and "2-3 plain sentences" in summariser["system"]
    prompt = user_text(summariser)
    assert "Location: 'Forest Path', which matched location id(s) 10, 11" in prompt
    assert "Jumping from the tree killed us" in prompt and "songbird" in prompt
    assert "brass lantern" not in prompt

    summary = tool_result(server.requests[4])
    assert summary.splitlines() == [
        "'Forest Path', which matched location id(s) 10, 11.",
        f"Summary: {SUMMARY}",
        "Memories:",
        "Location 10 (Forest Path):",
        "- [NOTE] Tree",
        "- [DANGER] Deadly: jump",
        "Location 11 (Forest Path):",
        "- [NOTE] Songbird",
    ]


def test_unknown_ids_from_the_query_model_are_dropped(server: FakeMessagesServer) -> None:
    tools = tools_for(server)
    server.queue_tool_use("query_memories", {"question": "Where is the lantern?"})
    server.queue_tool_use("MemoryRanking", {"ids": ["M42", "M1"], "answer": "Living Room."})
    decide(server)
    consult(server, MemoryToolbox(tools))
    ranked = tool_result(server.requests[2])
    assert ranked.startswith("Answer: Living Room.\n") and "1. [Location 5 " in ranked
    assert "2. [" not in ranked and tools.failures == 0


def test_a_500_during_the_tools_own_call_gives_the_lexical_answer(
    server: FakeMessagesServer,
) -> None:
    svc = service()
    tools, lexical = tools_for(server, svc), MemoryQueryTools(svc)
    server.queue_tool_use("query_memories", {"question": "Where is the brass lantern?"})
    server.queue_fault("500")
    server.queue_tool_use("get_location_memories", {"location": 10})
    server.queue_fault("500")
    decide(server)

    answer = consult(server, MemoryToolbox(tools))

    assert answer.reasoning == "done" and tools.failures == 2
    assert len(server.requests) == 5
    queried = tool_result(server.requests[2])
    assert queried == lexical.query_memories("Where is the brass lantern?")
    assert queried.startswith("Relevant memories (lexical match):\n1. [Location 5 ")
    located = tool_result(server.requests[4])
    assert located == lexical.get_location_memories(10)
    assert located.startswith("Location 10 (Forest Path):\n1. [Location 10 ")


def test_a_malformed_ranking_is_repaired_once_then_falls_back(
    server: FakeMessagesServer,
) -> None:
    tools = tools_for(server)
    server.queue_tool_use("query_memories", {"question": "Where is the brass lantern?"})
    server.queue_tool_use("MemoryRanking", {"ids": "M4"})
    server.queue_tool_use("MemoryRanking", {"answer": "no ids"})
    decide(server)
    consult(server, MemoryToolbox(tools))
    repair = server.requests[2]["messages"][-1]["content"][0]
    assert repair["type"] == "tool_result" and repair["is_error"] is True
    assert tool_result(server.requests[3]).startswith("Relevant memories (lexical match):")
    assert tools.failures == 1


def test_the_container_wires_the_query_model_into_the_tools(
    server: FakeMessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn.container import build_container

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    settings = load_settings(
        workdir=tmp_path, llm="anthropic", llm_base_url=server.base_url, llm_max_retries=0
    )
    container = build_container(settings)
    memory = container.memory_service()
    memory.remember(GameState(), "The rusty key is under the doormat", 800, location_id=7)
    tools = container.memory_query_tools()
    assert tools is container.memory_query_tools()
    server.queue_tool_use("MemoryRanking", {"ids": ["M1"], "answer": "Under the doormat."})
    assert tools.query_memories("where is the key?").startswith("Answer: Under the doormat.")
    assert server.requests[-1]["model"] == settings.models["query"]

    offline = build_container(load_settings(workdir=tmp_path / "offline"))
    offline.memory_service().remember(GameState(), "The rusty key is under the mat", 800, 7)
    answer = offline.memory_query_tools().query_memories("rusty key")
    assert answer.startswith("Relevant memories (lexical match):\n1. [Location 7 ")
    offline.store().close()
    container.store().close()
