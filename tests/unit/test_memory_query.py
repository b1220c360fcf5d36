"""Seed-003 query tools: clamping, empty input errors, lexical ranking, location by id or name;
with a fake query model: ranking order, unknown ids ignored, summaries, and lexical fallback."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.memory_retriever import LLMMemoryRetriever, build_memory_retriever
from cairn.agents.memory_toolbox import MemoryToolbox
from cairn.errors import LLMError, LLMUnavailableError, StoreError
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse, ToolCall, Usage
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope
from cairn.services.map import MapGraph
from cairn.services.memory_query import (
    IMemoryRetriever,
    MemoryQueryTools,
    RankedAnswer,
    candidate_pool,
)
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.testing import FakeSummarizer


class FakeLLM(ILLMClient):
    """Answers from a script of responses or LLM errors; records every request."""

    def __init__(self, *script: LLMResponse | LLMError) -> None:
        self.script = list(script)
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        step = self.script.pop(0)
        if isinstance(step, LLMError):
            raise step
        return step


def reply(text: str = "", tool_input: dict[str, Any] | None = None) -> LLMResponse:
    calls = (
        [ToolCall(id="toolu_1", name="MemoryRanking", input=tool_input)]
        if tool_input is not None
        else []
    )
    return LLMResponse(
        text=text,
        tool_calls=calls,
        stop_reason="tool_use" if calls else "end_turn",
        usage=Usage(input_tokens=10, output_tokens=5),
        latency_ms=1.0,
        model="claude-unit-query",
    )


def ranking(*ids: str, answer: str = "It is in the hall.") -> LLMResponse:
    return reply(tool_input={"ids": list(ids), "answer": answer})


def user_text(request: LLMRequest) -> str:
    content = request.messages[0].content
    assert isinstance(content, str)
    return content


def service_with(entries: list[MemoryEntry]) -> MemoryService:
    store = InMemoryStore()
    with store.transaction() as tx:
        for e in entries:
            tx.add(e)
    return fiction_memory_service(
        store, FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )


def tools_with(
    entries: list[MemoryEntry], retriever: IMemoryRetriever | None = None
) -> MemoryQueryTools:
    return MemoryQueryTools(service_with(entries), retriever)


def llm_tools(entries: list[MemoryEntry], llm: FakeLLM) -> MemoryQueryTools:
    return tools_with(entries, LLMMemoryRetriever(llm))


def loc(loc_id: int, name: str, title: str, text: str, importance: int = 500) -> MemoryEntry:
    return MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=loc_id,
        location_name=name,
        title=title,
        text=text,
        importance=importance,
    )


def test_top_memories_limit_is_clamped_to_1_20() -> None:
    tools = tools_with([loc(1, "A", f"M{n}", "t", importance=n + 1) for n in range(25)])
    assert tools.get_top_memories(0).startswith("Top 1 ")
    assert tools.get_top_memories(99).startswith("Top 20 ")
    assert "M24" in tools.get_top_memories(1)


def test_empty_inputs_give_clear_error_strings() -> None:
    tools = tools_with([loc(1, "A", "x", "y")])
    assert tools.query_memories("  ").startswith("Error:")
    assert tools.get_location_memories("").startswith("Error:")


def test_query_ranks_lexically_offline() -> None:
    tools = tools_with(
        [
            loc(1, "Hall", "Lamp", "The brass lantern is in the living room"),
            loc(2, "Yard", "Mailbox", "A leaflet in the mailbox"),
        ]
    )
    answer = tools.query_memories("Where is the brass lantern?")
    assert "Lamp" in answer and "Mailbox" not in answer


class CountingRetriever(IMemoryRetriever):
    def __init__(self) -> None:
        self.seen: list[int] = []

    def rank(self, question: str, candidates: Sequence[MemoryEntry], limit: int) -> RankedAnswer:
        self.seen.append(len(candidates))
        return RankedAnswer(memories=[candidates[0]], answer="ranked")

    def summarize_location(self, label: str, memories: Sequence[MemoryEntry]) -> str:
        return "summary"


def test_query_passes_a_bounded_candidate_set_to_the_retriever() -> None:
    retriever = CountingRetriever()
    tools = tools_with([loc(1, "A", f"key {n}", "rusty key") for n in range(50)], retriever)
    assert tools.query_memories("rusty key").startswith("Answer: ranked\n")
    assert retriever.seen == [30]


def test_location_memories_by_id_or_by_repeated_name() -> None:
    tools = tools_with(
        [
            loc(10, "Forest Path", "North", "a tree"),
            loc(11, "Forest Path", "South", "a bird"),
            loc(12, "Clearing", "Grate", "a grating"),
        ]
    )
    by_name = tools.get_location_memories("forest path")
    assert "Location 10" in by_name and "Location 11" in by_name and "Grate" not in by_name
    assert "Grate" in tools.get_location_memories(12)
    assert "No location named" in tools.get_location_memories("Nowhere")


HALL = [
    loc(1, "Hall", "Lamp", "The brass lantern is on the trophy case", importance=300),
    loc(2, "Yard", "Mailbox", "A leaflet in the mailbox", importance=900),
    loc(3, "Cellar", "Dark", "The cellar is pitch dark without a light", importance=600),
]


def test_the_query_model_ranks_and_its_order_is_kept() -> None:
    llm = FakeLLM(ranking("M3", "M1", answer="Take the lantern from the Hall (Location 1)."))
    tools = llm_tools(HALL, llm)
    answer = tools.query_memories("How do I see in the dark?")
    lines = answer.splitlines()
    assert lines[0] == "Answer: Take the lantern from the Hall (Location 1)."
    assert lines[1] == "Relevant memories (ranked by the query model):"
    assert lines[2].startswith("1. [Location 1 | importance=300] Lamp:")
    assert lines[3].startswith("2. [Location 3 | importance=600] Dark:")
    assert "Mailbox" not in answer and tools.failures == 0
    [request] = llm.requests
    assert request.role == "query"
    assert request.tool_choice == {"type": "tool", "name": "MemoryRanking"}
    assert [t.name for t in request.tools] == ["MemoryRanking"]
    assert set(request.tools[0].input_schema["required"]) == {"ids", "answer"}
    prompt = user_text(request)
    assert "Question: How do I see in the dark?" in prompt
    # lexical matches first ("dark"), then the rest by importance, each with a short id
    assert prompt.index("M1 [Location 3 Cellar") < prompt.index("M2 [Location 2 Yard")
    assert "M3 [Location 1 Hall | NOTE | importance=300] Lamp:" in prompt


def test_unknown_and_repeated_ids_are_ignored_and_lenient_forms_accepted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # candidates: M1 Mailbox (the lexical match), then M2 Dark (600), M3 Lamp (300)
    llm = FakeLLM(ranking("M9", "#2", "m2", "3", "m-nonexistent"))
    tools = llm_tools(HALL, llm)
    with caplog.at_level(logging.WARNING):
        answer = tools.query_memories("what is in the mailbox")
    assert tools.failures == 0
    ranked = [line for line in answer.splitlines() if line[:2] in ("1.", "2.", "3.")]
    assert len(ranked) == 2 and "Dark" in ranked[0] and "Lamp" in ranked[1]
    assert "unknown memory ids ['M9', 'm-nonexistent']; ignored" in caplog.text


def test_at_most_five_memories_are_returned() -> None:
    entries = [loc(n, "Room", f"Note {n}", "a key") for n in range(1, 9)]
    llm = FakeLLM(ranking(*[f"M{n}" for n in range(1, 9)]))
    answer = llm_tools(entries, llm).query_memories("key")
    assert "5. [" in answer and "6. [" not in answer


def lexical(entries: list[MemoryEntry], question: str) -> str:
    return tools_with(entries).query_memories(question)


@pytest.mark.parametrize(
    "script",
    [
        pytest.param([LLMUnavailableError("role 'query': 500")], id="llm-error"),
        pytest.param([ranking("M7", "M8")], id="only-unknown-ids"),
        pytest.param([ranking(answer="No relevant memories.")], id="empty-ids"),
        pytest.param([reply("no tool"), reply("still no tool")], id="malformed-twice"),
    ],
)
def test_a_failed_or_unusable_ranking_falls_back_to_the_lexical_answer(
    script: list[LLMResponse | LLMError], caplog: pytest.LogCaptureFixture
) -> None:
    tools = llm_tools(HALL, FakeLLM(*script))
    with caplog.at_level(logging.WARNING, logger="cairn.services.memory_query"):
        answer = tools.query_memories("Where is the brass lantern?")
    assert answer == lexical(HALL, "Where is the brass lantern?")
    assert answer.startswith("Relevant memories (lexical match):")
    assert tools.failures == 1
    assert "query_memories: the query model failed" in caplog.text


def test_failures_accumulate_and_later_answers_use_the_model_again() -> None:
    llm = FakeLLM(LLMUnavailableError("down"), ranking("M1"))
    tools = llm_tools(HALL, llm)
    assert "lexical match" in tools.query_memories("lantern")
    assert "ranked by the query model" in tools.query_memories("lantern")
    assert tools.failures == 1


def test_the_model_is_asked_even_when_no_word_matches() -> None:
    llm = FakeLLM(ranking("M2", answer="The lantern gives light."))
    tools = llm_tools(HALL, llm)
    answer = tools.query_memories("How can I get illumination?")
    assert answer.startswith("Answer: The lantern gives light.")
    assert lexical(HALL, "How can I get illumination?").startswith("No memories match")


def test_candidate_pool_puts_lexical_matches_first_then_importance() -> None:
    pool = sorted(HALL, key=lambda m: m.importance, reverse=True)
    assert [m.title for m in candidate_pool("brass lantern", pool, 2)] == ["Lamp", "Mailbox"]
    assert [m.title for m in candidate_pool("zzz", pool, 5)] == ["Mailbox", "Dark", "Lamp"]


def test_a_question_two_memories_answer_alike_lists_them_as_the_ranking_does() -> None:
    """The agent asks where the lamp is; two equally important memories name it: the answer
    lists them in the order get_top_memories shows them (the latest in game time first), the
    same in every run, not the other way round."""
    earlier, later = (
        loc(1, "Hall", f"Lamp {n}", "The brass lamp is here", importance=400).model_copy(
            update={"episode": 1, "turn_start": turn, "turn_end": turn}
        )
        for n, turn in ((1, 3), (2, 9))
    )
    tools = tools_with([earlier, later])
    assert tools.get_top_memories(2).splitlines()[1].endswith("Lamp 2: The brass lamp is here")
    answer = tools.query_memories("where is the brass lamp?").splitlines()
    assert answer[1:] == [
        "1. [Location 1 | T9 | importance=400] Lamp 2: The brass lamp is here",
        "2. [Location 1 | T3 | importance=400] Lamp 1: The brass lamp is here",
    ]


FOREST = [
    loc(10, "Forest Path", "Tree", "A climbable tree; a nest with an egg above"),
    loc(11, "Forest Path", "Bird", "A songbird chirps; nothing else here"),
    MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=10,
        location_name="Forest Path",
        category=MemoryCategory.DANGER,
        title="Deadly: jump",
        text="Jumping from the tree killed us",
        importance=900,
    ),
    loc(12, "Clearing", "Grate", "a grating"),
]

SUMMARY = (
    "Location 10 has a climbable tree with a nest and egg, but jumping from it kills. "
    "Location 11 only has a songbird."
)


def test_location_summary_by_repeated_name_says_which_ids_matched_then_titles() -> None:
    llm = FakeLLM(reply(SUMMARY))
    tools = llm_tools(FOREST, llm)
    answer = tools.get_location_memories("forest path")
    assert answer.splitlines()[:3] == [
        "'forest path', which matched location id(s) 10, 11.",
        f"Summary: {SUMMARY}",
        "Memories:",
    ]
    assert "Location 10 (Forest Path):\n- [NOTE] Tree\n- [DANGER] Deadly: jump" in answer
    assert "Location 11 (Forest Path):\n- [NOTE] Bird" in answer
    assert "Grate" not in answer and "songbird chirps" not in answer
    [request] = llm.requests
    assert request.role == "query" and request.tools == [] and request.tool_choice is None
    assert "2-3 plain sentences" in request.system
    prompt = user_text(request)
    assert "Location: 'forest path', which matched location id(s) 10, 11" in prompt
    assert "- [Location 10 Forest Path | DANGER | importance=900] Deadly: jump:" in prompt
    assert "- [Location 11 Forest Path | NOTE | importance=500] Bird:" in prompt
    assert "Grate" not in prompt


def test_location_summary_by_id() -> None:
    llm = FakeLLM(reply("A grating is set in the ground.\n"))
    answer = llm_tools(FOREST, llm).get_location_memories(12)
    assert answer.startswith("Location 12 (Clearing).\nSummary: A grating is set in the ground.")
    assert answer.endswith("Location 12 (Clearing):\n- [NOTE] Grate")


@pytest.mark.parametrize(
    "script",
    [
        pytest.param([LLMUnavailableError("role 'query': 500")], id="llm-error"),
        pytest.param([reply("   ")], id="empty-summary"),
    ],
)
def test_a_failed_location_summary_falls_back_to_the_lexical_answer(
    script: list[LLMResponse | LLMError],
) -> None:
    tools = llm_tools(FOREST, FakeLLM(*script))
    answer = tools.get_location_memories("Forest Path")
    assert answer == tools_with(FOREST).get_location_memories("Forest Path")
    assert tools.failures == 1


def test_no_model_call_without_memories_or_for_an_unknown_name() -> None:
    llm = FakeLLM()
    tools = llm_tools(FOREST, llm)
    assert tools.get_location_memories(99) == "Location 99 ():\n(no memories)"
    assert "No location named" in tools.get_location_memories("Nowhere")
    assert tools.query_memories(" ").startswith("Error:")
    assert llm_tools([], llm).query_memories("key") == "No memories to search yet."
    assert llm.requests == [] and tools.failures == 0


def test_offline_there_is_no_retriever_and_answers_stay_lexical() -> None:
    assert build_memory_retriever(None) is None
    assert isinstance(build_memory_retriever(FakeLLM()), LLMMemoryRetriever)
    answer = tools_with(HALL).query_memories("brass lantern")
    assert answer == "Relevant memories (lexical match):\n1. " + (
        "[Location 1 | importance=300] Lamp: The brass lantern is on the trophy case"
    )


class BrokenService(MemoryService):
    def top_memories(self, limit: int = 10) -> list[MemoryEntry]:
        raise StoreError("Memories.md: unreadable")


def test_a_failing_tool_never_raises_into_the_research_loop() -> None:
    broken = BrokenService(
        InMemoryStore(), FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )
    toolbox = MemoryToolbox(MemoryQueryTools(broken))
    answer = toolbox.run(ToolCall(id="t1", name="query_memories", input={"question": "key"}))
    assert answer == "Error: query_memories failed: Memories.md: unreadable"
