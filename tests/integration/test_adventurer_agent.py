"""AdventurerAgent and LLM objective discovery through the real SDK against the local server."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.llm.anthropic_client import AnthropicClient
from cairn.adapters.llm.usage import UsageMeter
from cairn.agents.adventurer import AdventurerAgent
from cairn.agents.scripted import ScriptedAgent
from cairn.errors import ModelNotAnsweringError
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.agent import AgentView
from cairn.interfaces.game import GameObservation
from cairn.interfaces.llm import ROLES
from cairn.play.runner import run_play
from cairn.settings import load_settings
from cairn.testing.fake_game import FakeGame
from cairn.testing.llm_server import FakeMessagesServer

MODELS = {role: f"claude-test-{role}" for role in ROLES}


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as s:
        yield s


def client(server: FakeMessagesServer) -> AnthropicClient:
    return AnthropicClient(
        api_key="sk-ant-test", models=MODELS, base_url=server.base_url, timeout=5.0, max_retries=0
    )


def view() -> AgentView:
    return AgentView(
        episode=1,
        turn=4,
        observation=GameObservation(text="A dusty study.", location_id=2, location_name="Study"),
        prompt="## location_memory\n**[SUCCESS] Open chest** the key is inside",
        objectives=["Take the key at Location 2"],
    )


def test_the_adventurer_prompt_carries_the_context_and_the_answer_is_validated(
    server: FakeMessagesServer,
) -> None:
    server.queue_tool_use(
        "AgentDecision",
        {
            "action": "open chest",
            "reasoning": "<thinking>memory says the key is inside</thinking>",
            "remember": "The chest in the Study holds the key",
            "importance": 800,
        },
    )
    agent = AdventurerAgent(client(server), fallback=ScriptedAgent(["look"]))
    decision = agent.decide(view())
    assert decision.action == "open chest" and decision.importance == 800
    [request] = server.requests
    sent = request["messages"][0]["content"]
    text = sent if isinstance(sent, str) else " ".join(b.get("text", "") for b in sent)
    assert "the key is inside" in text and "Take the key at Location 2" in text
    assert "A dusty study." in text and request["model"] == "claude-test-adventurer"


def test_an_llm_failure_falls_back_to_the_offline_player_and_is_counted(
    server: FakeMessagesServer,
) -> None:
    server.queue_fault("500")
    agent = AdventurerAgent(client(server), fallback=ScriptedAgent(["north"]))
    assert agent.decide(view()).action == "north"
    assert agent.failures == 1


def metered(server: FakeMessagesServer, meter: UsageMeter) -> AnthropicClient:
    return AnthropicClient(
        api_key="sk-ant-test",
        models=MODELS,
        base_url=server.base_url,
        timeout=5.0,
        max_retries=0,
        meter=meter,
    )


@pytest.mark.parametrize("shape", ["not json", "wrong"])
def test_a_malformed_answer_is_one_failure_not_two(server: FakeMessagesServer, shape: str) -> None:
    """The client counts the failed call (under bad_response); the agent does not again."""
    server.queue_fault("malformed", shape=shape)
    meter = UsageMeter()
    agent = AdventurerAgent(
        metered(server, meter), fallback=ScriptedAgent(["north"]), failures=meter
    )
    assert agent.decide(view()).action == "north"
    usage = meter.snapshot()
    assert (usage["calls"], usage["failures"]) == (1, 1)
    assert usage["by_role"]["adventurer"]["failures"] == 1
    assert usage["failures_by_kind"] == {"bad_response": 1, "fallback:bad_response": 1}


def test_answers_against_the_schema_are_each_one_failure(
    server: FakeMessagesServer,
) -> None:
    """Answered twice (the repair included), never usable: two calls, each failed once."""
    server.queue_text("north, I think")
    server.queue_text("still north")
    meter = UsageMeter()
    agent = AdventurerAgent(
        metered(server, meter), fallback=ScriptedAgent(["north"]), failures=meter
    )
    assert agent.decide(view()).action == "north"
    usage = meter.snapshot()
    assert (usage["calls"], usage["failures"]) == (2, 2)
    assert usage["failures_by_kind"] == {"bad_response": 2, "fallback:bad_response": 1}


def play_against(
    server: FakeMessagesServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    turns: int,
    timeout: float = 5.0,
) -> dict[str, Any]:
    """A FakeGame run with the Anthropic adapter against the local server (no retries), the
    offline stand-ins chosen to play on (`llm_fallback`); the report of a run that failed for
    its model (ModelNotAnsweringError after the files) too."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    settings = load_settings(
        workdir=tmp_path,
        llm="anthropic",
        llm_base_url=server.base_url,
        llm_max_retries=0,
        llm_timeout=timeout,
        llm_fallback="offline",
    )
    try:
        return run_play(settings, game=FakeGame(), episodes=1, max_turns=turns).report
    except ModelNotAnsweringError as exc:
        report: dict[str, Any] = exc.result.report
        assert report["model_failure"] == str(exc)
        return report


def test_play_with_an_llm_that_always_fails_still_completes_and_counts(
    server: FakeMessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for _ in range(200):
        server.queue_fault("500")
    report = play_against(server, tmp_path, monkeypatch, turns=6)
    assert report["episodes"][0]["turns"] == 6
    assert report["episodes"][0]["stand_in_turns"] == report["total"]["stand_in_turns"] == 6
    assert report["model_failure"].startswith(
        f"the model at Anthropic Messages API at {server.base_url} never gave a usable answer"
    )
    # three 500s open the circuit; every turn's fallback is counted by kind
    assert report["total"]["llm_failures"] >= 3
    assert report["llm_usage"]["failures"] == report["total"]["llm_failures"]
    assert sum(
        n for k, n in report["llm_usage"]["failures_by_kind"].items() if k.startswith("fallback:")
    ) >= 6
    assert (tmp_path / "Memories.md").exists()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"sk-ant-test" not in path.read_bytes(), path


def test_report_json_is_strict_json_whatever_token_counts_the_server_reports(
    server: FakeMessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server reporting 10**308 prompt tokens made `cost_usd` Infinity in report.json."""
    huge = {"input_tokens": 10**308, "output_tokens": 1}

    def respond(s: FakeMessagesServer, body: dict[str, Any]) -> None:
        s.queue_text("I would go north.", usage=huge)

    server.responder = respond
    play_against(server, tmp_path, monkeypatch, turns=2)
    text = (tmp_path / "report.json").read_text()
    assert "Infinity" not in text and "NaN" not in text
    report = json.loads(text, parse_constant=lambda name: pytest.fail(f"not JSON: {name}"))
    assert report["llm_usage"]["cost"]["cost_usd"] is None or math.isfinite(
        report["llm_usage"]["cost"]["cost_usd"]
    )


def test_the_knowledge_base_is_rewritten_by_the_model_and_falls_back_on_failure(
    server: FakeMessagesServer, tmp_path: Path
) -> None:
    from cairn.adapters.storage.in_memory_store import InMemoryStore
    from cairn.adapters.storage.knowledge_file import KnowledgeBase
    from cairn.agents.knowledge_writer import KnowledgeWriter
    from cairn.events.publisher import EventPublisher
    from cairn.models.episode import EpisodeStats
    from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope
    from cairn.services.map import MapGraph
    from cairn.services.policy import MemoryPolicy
    from cairn.testing import FakeSummarizer

    store = InMemoryStore()
    memory = fiction_memory_service(
        store, FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )
    with store.transaction() as tx:
        tx.add(
            MemoryEntry(
                scope=MemoryScope.LOCATION,
                location_id=46,
                category=MemoryCategory.DANGER,
                title="Deadly: west",
                text="'west' here led to death: the sinkhole.",
            )
        )
    writer = KnowledgeWriter(client(server))
    kb = KnowledgeBase(tmp_path / "knowledgebase.md", writer=writer)
    server.queue_text(
        "# Strategy\n- Never go west from the Garden (Location 46).\n## Episodes\n- x"
    )
    kb.update(memory, EpisodeStats(episode=1, turns=30, score=1, died=True), "demo")
    text = kb.read()
    assert text.startswith("# Strategy\n- Never go west from the Garden (Location 46).")
    assert text.count("## Episodes") == 1 and "- Episode 1: 30 turns, score 1, died." in text
    sent = server.requests[0]["messages"][0]["content"]
    prompt = sent if isinstance(sent, str) else " ".join(b.get("text", "") for b in sent)
    assert "Deadly: west" in prompt and server.requests[0]["model"] == "claude-test-summary"

    server.queue_fault("500")
    kb.update(memory, EpisodeStats(episode=2, turns=20, score=4, won=True), "demo")
    text = kb.read()
    assert writer.failures == 1 and "## Dangers\n- Location 46: Deadly: west." in text
    assert "- Episode 1: 30 turns" in text and "- Episode 2: 20 turns, score 4, won." in text


def test_answers_that_cannot_be_used_are_counted_failures_by_kind(
    server: FakeMessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 200 with text where a tool call was required: the agent falls back, it counts, and
    unusable answers open the circuit like any other failures (not 38 of 38 asked)."""
    for _ in range(300):
        server.queue_text("I think I would go north, probably.")
    report = play_against(server, tmp_path, monkeypatch, turns=6)
    kinds = report["llm_usage"]["failures_by_kind"]
    assert kinds.get("fallback:bad_response", 0) + kinds["fallback:circuit_open"] == 6
    assert kinds["bad_response"] == 3  # each unusable answer counted once, whatever its role
    assert report["llm_usage"]["failures"] == 3
    circuit = report["llm_usage"]["circuit"]
    assert circuit["opened"] >= 1 and circuit["rejected"] >= 5
    assert len(server.requests) <= 6  # three unusable answers opened it


def test_a_hanging_api_opens_the_circuit_and_play_goes_on_offline(
    server: FakeMessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for _ in range(50):
        server.queue_fault("slow", delay=1.0)
    report = play_against(server, tmp_path, monkeypatch, turns=10, timeout=0.3)
    assert report["episodes"][0]["turns"] == 10
    circuit = report["llm_usage"]["circuit"]
    assert circuit["opened"] >= 1 and circuit["rejected"] >= 10
    assert len(server.requests) <= 2  # one timeout opened it; the rest never waited
    assert report["llm_usage"]["failures_by_kind"]["fallback:circuit_open"] >= 9
    # the rule-based stand-in summarized while the circuit was open: memories were made
    assert sum(circuit["stand_in_summaries"].values()) >= 1
    assert (tmp_path / "Memories.md").read_text().count("<!-- cairn ") >= 3


def test_the_circuit_closes_again_after_its_cooldown() -> None:
    from cairn.adapters.llm.breaker import CircuitBreaker
    from cairn.errors import LLMTimeoutError, LLMUnavailableError
    from cairn.interfaces.llm import LLMRequest, LLMResponse, Usage

    now = [0.0]
    answers: list[object] = [LLMTimeoutError("hung"), "ok"]

    class Scripted:
        def complete(self, request: LLMRequest) -> LLMResponse:
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return LLMResponse(
                text="ok",
                tool_calls=[],
                stop_reason="end_turn",
                usage=Usage(input_tokens=1, output_tokens=1),
                latency_ms=1.0,
                model="m",
            )

    breaker = CircuitBreaker(Scripted(), cooldown=60, clock=lambda: now[0])  # type: ignore[arg-type]
    request = LLMRequest(role="adventurer", system="s", messages=[])
    with pytest.raises(LLMTimeoutError):
        breaker.complete(request)
    assert breaker.state == "open"
    with pytest.raises(LLMUnavailableError, match="circuit open"):
        breaker.complete(request)
    now[0] = 61.0
    assert breaker.state == "half-open"
    assert breaker.complete(request).text == "ok"
    assert breaker.snapshot() == {"state": "closed", "opened": 1, "rejected": 1}
