"""Prompt caching through the real SDKs against the loopback servers: the marks sent, the cache
figures read back into Usage by both adapters, their price, and old cassettes replaying."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.llm.anthropic_client import AnthropicClient
from cairn.adapters.llm.cassette import CassetteClient
from cairn.adapters.llm.exchange_log import ExchangeLog, request_hash
from cairn.adapters.llm.openai_client import OpenAIClient
from cairn.adapters.llm.usage import UsageMeter
from cairn.interfaces.llm import ROLES, LLMMessage, LLMRequest, ToolSpec
from cairn.report.cost import cost_table
from cairn.testing.cache_sim import api_min_cache_tokens
from cairn.testing.chat_server import FakeChatServer
from cairn.testing.llm_server import FakeMessagesServer

ROOT = Path(__file__).resolve().parents[2]
TROLL_CASSETTE = ROOT / "scenarios" / "cassettes" / "zork1_troll.jsonl"
MODELS = {role: "claude-haiku-4-5" for role in ROLES}
SONNET = {role: "claude-sonnet-4-6" for role in ROLES}
"""A model whose minimum cacheable prefix (1,024 tokens) these requests reach; Haiku 4.5's
(4,096) they do not."""
SYSTEM = "You play a text adventure. Send one short command a turn.\n" * 60
TOOL = ToolSpec(name="Decision", description="The decision.", input_schema={"type": "object"})
MEMORY = "## Most Important Memories\n" + "\n".join(
    f"- [{900 - n}] Memory {n}: the troll guards the passage east" for n in range(12)
)


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as s:
        yield s


def client(
    server: FakeMessagesServer, models: dict[str, str] = MODELS, **options: Any
) -> AnthropicClient:
    return AnthropicClient(
        api_key="sk-ant-test",
        models=models,
        base_url=server.base_url,
        timeout=5.0,
        max_retries=0,
        **options,
    )


def turn(n: int) -> LLMRequest:
    user = f"{MEMORY}\n\n## Where you are\nRoom {n}, turn {n}.\n\nChoose the next command."
    return LLMRequest(
        role="adventurer",
        system=SYSTEM,
        messages=[LLMMessage(role="user", content=user)],
        tools=[TOOL],
    )


def marks(body: dict[str, Any]) -> list[str]:
    """Where a request body carries cache_control: "tools", "system" or the marked text."""
    found = ["tools" for t in body.get("tools") or [] if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        found += ["system" for b in system if "cache_control" in b]
    for message in body["messages"]:
        if isinstance(message["content"], list):
            found += [b["text"] for b in message["content"] if "cache_control" in b]
    return found


def test_requests_mark_the_system_and_the_user_sections_that_repeat(
    server: FakeMessagesServer, tmp_path: Path
) -> None:
    meter = UsageMeter()
    log = ExchangeLog(tmp_path / "llm.jsonl")
    llm = client(server, SONNET, meter=meter, log=log)
    usages = [llm.complete(turn(n)).usage for n in (1, 2, 3)]

    first, second, third = server.requests
    assert marks(first) == ["system"]  # the tools alone are under the model's minimum
    assert marks(second) == marks(third) == ["system", MEMORY + "\n\n"]
    # the server billed them as the API's cache does: written once, then read
    assert usages[0].cache_write_input_tokens and not usages[0].cached_input_tokens
    assert usages[1].cached_input_tokens == usages[0].cache_write_input_tokens
    assert usages[1].cache_write_input_tokens  # the memory section, first seen twice
    assert usages[2].cached_input_tokens == (
        usages[1].cached_input_tokens + usages[1].cache_write_input_tokens
    )
    assert usages[2].cache_write_input_tokens == 0
    assert usages[2].cached_input_tokens / usages[2].input_tokens > 0.8
    snap = meter.snapshot()
    assert snap["cost"]["tokens"]["cache_read"] == sum(u.cached_input_tokens or 0 for u in usages)
    # the exchange log keeps the request as cairn made it: no marks, the same hash as before
    entries = log.read()
    assert "cache_control" not in json.dumps(entries)
    assert entries[2]["request_hash"] == request_hash(turn(3), "claude-sonnet-4-6")


def test_a_prefix_under_the_models_minimum_goes_unmarked(server: FakeMessagesServer) -> None:
    """Haiku 4.5 caches no prefix under 4,096 tokens: the same requests carry no mark, and the
    server (with the API's minimums) bills them whole."""
    server.cache.min_tokens = api_min_cache_tokens
    llm = client(server)
    usages = [llm.complete(turn(n)).usage for n in (1, 2, 3)]
    assert all(marks(body) == [] for body in server.requests)
    assert all(not u.cached_input_tokens and not u.cache_write_input_tokens for u in usages)


def test_prompt_caching_off_sends_the_request_as_it_is(server: FakeMessagesServer) -> None:
    llm = client(server, prompt_caching=False)
    for n in (1, 2, 3):
        llm.complete(turn(n))
    assert all(marks(body) == [] for body in server.requests)
    assert server.requests[2]["system"] == SYSTEM


def test_anthropic_cache_figures_become_usage_and_are_priced(server: FakeMessagesServer) -> None:
    meter = UsageMeter()
    llm = client(server, meter=meter)
    server.queue_text(
        "north",
        usage={
            "input_tokens": 100,
            "output_tokens": 10,
            "cache_read_input_tokens": 900,
            "cache_creation_input_tokens": 50,
        },
    )
    server.queue_text("south", usage=(100, 10))

    cached = llm.complete(turn(1)).usage
    plain = llm.complete(turn(2)).usage

    assert (cached.input_tokens, cached.cached_input_tokens) == (1050, 900)
    assert (cached.cache_write_input_tokens, cached.uncached_input_tokens) == (50, 100)
    assert cached.model_dump()["cache_write_input_tokens"] == 50
    assert plain.model_dump() == {"input_tokens": 100, "output_tokens": 10}
    haiku = (100 * 1.0 + 900 * 0.1 + 50 * 1.25 + 10 * 5.0) / 1e6
    assert meter.snapshot()["cost"]["by_role"]["adventurer"]["cost_usd"] == pytest.approx(
        haiku + (100 * 1.0 + 10 * 5.0) / 1e6
    )


def test_openai_cached_tokens_are_priced_at_the_cached_rate() -> None:
    meter = UsageMeter()
    with FakeChatServer() as chat:
        llm = OpenAIClient(
            api_key=None,
            models={role: "gpt-4.1" for role in ROLES},
            base_url=chat.base_url,
            meter=meter,
            max_retries=0,
        )
        chat.queue_text("north", usage=(1000, 10, 400))
        usage = llm.complete(turn(1)).usage
    assert (usage.input_tokens, usage.cached_input_tokens) == (1000, 400)
    assert usage.cache_write_input_tokens is None and usage.uncached_input_tokens == 600
    cost = meter.snapshot()["cost"]
    assert cost["tokens"] == {"input": 1000, "cache_read": 400, "cache_write": 0, "output": 10}
    assert cost["cost_usd"] == pytest.approx((600 * 2.0 + 400 * 0.5 + 10 * 8.0) / 1e6)


def test_the_troll_scenarios_recorded_cassette_still_replays() -> None:
    """A cassette recorded before prompt caching: every request hashes as it did, and the
    replay answers it."""
    lines = [json.loads(line) for line in TROLL_CASSETTE.read_text().splitlines() if line]
    assert lines
    for line in lines:
        payload = line["request"]
        request = LLMRequest(
            role=line["role"],
            system=payload["system"],
            messages=payload["messages"],
            tools=payload["tools"],
            max_tokens=payload["max_tokens"],
            temperature=payload["temperature"],
            tool_choice=payload["tool_choice"],
        )
        assert request_hash(request, line["model"]) == line["request_hash"]
        replay = CassetteClient(TROLL_CASSETTE, "replay", {line["role"]: line["model"]})
        assert replay.complete(request).model_dump(mode="json") == line["response"]


def test_a_cassette_recorded_with_caching_replays_and_holds_no_marks(
    server: FakeMessagesServer, tmp_path: Path
) -> None:
    path = tmp_path / "cassette.jsonl"
    recorder = CassetteClient(path, "record", MODELS, inner=client(server, SONNET))
    recorded = [recorder.complete(turn(n)) for n in (1, 2, 3)]
    assert "cache_control" in json.dumps(server.requests)
    assert "cache_control" not in path.read_text()
    replayer = CassetteClient(path, "replay", MODELS)
    assert [replayer.complete(turn(n)) for n in (1, 2, 3)] == recorded


def test_the_cost_table_shows_dollars_or_unknown_never_a_guess() -> None:
    part = {"tokens": {"input": 1000, "cache_read": 600, "cache_write": 0, "output": 5}}
    report: dict[str, Any] = {
        "llm_usage": {
            "calls": 2,
            "cost": {
                **part,
                "cost_usd": None,
                "unpriced_models": ["qwen3:8b"],
                "by_role": {
                    "adventurer": {**part, "cost_usd": None},
                    "summary": {**part, "cost_usd": 0.0012345},
                },
            }
        },
        "episodes": [{"episode": 1, **part, "cost_usd": None}],
    }
    html = cost_table(report)
    rows = html.split("<tr>")[2:]
    assert [r.split("</td>")[0].removeprefix("<td>") for r in rows] == [
        "total",
        "adventurer",
        "summary",
        "episode 1",
    ]
    assert "$0.0012" in rows[2] and rows[0].count("unknown") == 1 and "unknown" in rows[1]
    assert "No price for qwen3:8b" in html
    assert cost_table({"llm_usage": {"calls": 3}, "episodes": []}) == ""  # an older report
    offline = {"llm_usage": {"calls": 0, "cost": {**part, "cost_usd": 0.0}}, "episodes": []}
    assert cost_table(offline) == ""


def test_the_adventurer_sends_its_stable_part_first_and_its_sections_in_reading_order(
    server: FakeMessagesServer,
) -> None:
    from cairn.agents.adventurer import AdventurerAgent
    from cairn.agents.scripted import ScriptedAgent
    from cairn.interfaces.agent import AgentView
    from cairn.interfaces.game import GameObservation

    context = (
        "## Lessons here\nA damp cellar.\n\n"
        "## Last turn\nYou (turn 7, at Hall): down\n\n"
        "## Other important lessons\n- [800] The troll guards the east passage\n\n"
        "## The room now\nCellar (Location 3)\nIt is dark.\nExits: up -> Hall (L2)"
    )
    view = AgentView(
        episode=1,
        turn=8,
        max_turns=30,
        observation=GameObservation(text="It is dark.", location_id=3, location_name="Cellar"),
        prompt=context,
        objectives=["Light the lamp"],
    )
    server.queue_tool_use("AgentDecision", {"action": "light lamp", "reasoning": "dark"})
    AdventurerAgent(client(server), fallback=ScriptedAgent(["look"])).decide(view)

    body = server.requests[0]
    sent = body["messages"][0]["content"]
    text = sent if isinstance(sent, str) else "".join(b["text"] for b in sent)
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## The room now",
        "## Last turn",
        "## Lessons here",
        "## Other important lessons",
        "## Objectives",
        "## Now",
    ]
    assert "Turn 8 of 30." in text
    # the stable part (tools, system prompt) holds nothing of the turn: a cache can serve it
    assert "Cellar" not in json.dumps([body.get("tools"), body["system"]])
