"""Prompt caching without a server: where the planner puts `cache_control` (each model's
minimum prefix), the loopback server's cache simulation, the adventurer's section order,
prices and the meter's cost."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cairn.adapters.llm.cache_minimums import DEFAULT_MINIMUM, min_cacheable_tokens
from cairn.adapters.llm.prices import DEFAULT_PRICES, ModelPrice, PriceTable, price_table
from cairn.adapters.llm.prompt_cache import (
    EPHEMERAL,
    MAX_BREAKPOINTS,
    PromptCachePlanner,
    WireRequest,
    split_paragraphs,
)
from cairn.adapters.llm.usage import UsageMeter
from cairn.agents.prompt_order import reading_order
from cairn.errors import ConfigError
from cairn.interfaces.llm import LLMMessage, LLMRequest, ToolSpec, Usage
from cairn.settings import load_settings
from cairn.testing.cache_sim import PromptCacheSimulator, api_min_cache_tokens, estimate_tokens

SYSTEM = "You play a text adventure and answer with one command.\n" * 80  # ~1100 tokens
TOOL = ToolSpec(name="Decision", description="The decision.", input_schema={"type": "object"})
STABLE = "## Objectives\n- Find the lamp\n\n## Most Important Memories\n- [800] The cellar is dark"


def ask(user: str, *, role: str = "adventurer", system: str = SYSTEM) -> LLMRequest:
    return LLMRequest(
        role=role, system=system, messages=[LLMMessage(role="user", content=user)], tools=[TOOL]
    )


def turn(n: int, stable: str = STABLE) -> LLMRequest:
    return ask(f"{stable}\n\n## Where you are\nRoom {n}.\n\nChoose the next command.")


def marked_texts(wire: WireRequest) -> list[str]:
    """The text of each message block carrying a cache_control mark."""
    return [
        block["text"]
        for message in wire.messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if "cache_control" in block
    ]


def joined(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


# --- the planner --------------------------------------------------------------------------


def test_a_small_request_goes_unmarked_and_unchanged() -> None:
    wire = PromptCachePlanner().plan(ask("Look.", system="Be brief."), "claude-x")
    assert wire.breakpoints == 0
    assert wire.system == "Be brief."
    assert wire.messages == [{"role": "user", "content": "Look."}]
    assert "cache_control" not in json.dumps(wire.tools)


def test_the_system_is_marked_and_the_stable_user_prefix_once_it_repeats() -> None:
    planner = PromptCachePlanner()
    first = planner.plan(turn(1), "claude-x")
    assert "cache_control" not in first.tools[-1]  # the tools alone are under any minimum
    assert first.system == [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]
    assert marked_texts(first) == []  # nothing is known to repeat yet
    assert first.messages[0]["content"] == turn(1).messages[0].content

    second = planner.plan(turn(2), "claude-x")
    # the two sections both requests share, cut at the blank line before "## Where you are"
    assert marked_texts(second) == ["## Most Important Memories\n- [800] The cellar is dark\n\n"]
    assert joined(second.messages[0]) == turn(2).messages[0].content  # the same text
    assert second.breakpoints == 2

    third = planner.plan(turn(3), "claude-x")
    assert marked_texts(third) == marked_texts(second)  # read back: the very same blocks
    first_blocks = second.messages[0]["content"][:2]
    assert [b["text"] for b in third.messages[0]["content"][:2]] == [
        b["text"] for b in first_blocks
    ]


def test_each_lineage_is_its_own_role_tools_and_system() -> None:
    planner = PromptCachePlanner()
    planner.plan(turn(1), "claude-x")
    other_role = planner.plan(ask(str(turn(2).messages[0].content), role="objective"), "claude-x")
    assert marked_texts(other_role) == []  # the adventurer's history says nothing of it


def test_a_repair_reads_back_the_first_message_whole() -> None:
    planner = PromptCachePlanner()
    planner.plan(turn(1), "claude-x")
    planner.plan(turn(2), "claude-x")
    request = turn(3)
    planner.plan(request, "claude-x")
    repair = request.model_copy(
        update={
            "messages": [
                *request.messages,
                LLMMessage(role="assistant", content=[{"type": "text", "text": "north"}]),
                LLMMessage(role="user", content=[{"type": "text", "text": "Call Decision."}]),
            ]
        }
    )
    wire = planner.plan(repair, "claude-x")
    assert wire.breakpoints <= MAX_BREAKPOINTS
    first, assistant, feedback = wire.messages
    assert "cache_control" in first["content"][-1]  # the whole first message: written now
    assert assistant["content"] == [{"type": "text", "text": "north"}]  # after it: as sent
    assert feedback["content"] == [{"type": "text", "text": "Call Decision."}]


def test_a_changed_section_is_written_again_at_once_where_the_stable_prefix_ended() -> None:
    planner = PromptCachePlanner()
    for n in (1, 2):
        planner.plan(turn(n), "claude-x")
    changed = STABLE.replace("- Find the lamp", "- Find the sword")
    wire = planner.plan(turn(3, changed), "claude-x")
    # no read of the old prefix is possible; the block where it ended is written again
    assert marked_texts(wire) == ["## Most Important Memories\n- [800] The cellar is dark\n\n"]
    again = planner.plan(turn(4, changed), "claude-x")
    assert marked_texts(again) == marked_texts(wire)


def test_each_model_has_its_documented_minimum_prefix_in_one_table() -> None:
    expected = {
        "claude-sonnet-4-6": 1024,
        "claude-sonnet-4-5-20250929": 1024,
        "claude-sonnet-4-20250514": 1024,
        "claude-opus-4-1": 1024,
        "claude-haiku-4-5": 4096,
        "claude-haiku-4-5-20251001": 4096,
        "claude-opus-4-5": 4096,
        "claude-opus-4-6": 4096,
        "claude-3-5-haiku-20241022": 2048,
        "claude-3-haiku-20240307": 2048,
        "claude-house-model": DEFAULT_MINIMUM,
    }
    assert {m: min_cacheable_tokens(m) for m in expected} == expected
    # the loopback server's simulator reads the same table as the planner
    assert all(api_min_cache_tokens(m) == n for m, n in expected.items())


def test_a_prefix_is_marked_only_once_it_reaches_the_models_minimum() -> None:
    """A 1,500-token stable section: Sonnet (1,024) caches it; Haiku 4.5 (4,096) would not, so
    nothing is marked for it, until the stable part reaches Haiku's minimum too."""

    def request(n: int, stable_lines: int) -> LLMRequest:
        lines = (f"- [500] Memory {i}: the troll guards the bridge" for i in range(stable_lines))
        stable = "\n".join(lines)
        return ask(f"{stable}\n\n## Where you are\nRoom {n}.", system="Play well.")

    for model, lines, marked in (
        ("claude-sonnet-4-6", 130, True),
        ("claude-haiku-4-5", 130, False),
        ("claude-haiku-4-5", 330, True),
    ):
        planner = PromptCachePlanner()
        wires = [planner.plan(request(n, lines), model) for n in (1, 2, 3)]
        assert all(w.system == "Play well." for w in wires)  # far under any minimum alone
        assert bool(marked_texts(wires[1])) is marked, (model, lines)
        assert bool(marked_texts(wires[2])) is marked, (model, lines)
        if marked:
            assert marked_texts(wires[2])[0].startswith("- [500] Memory 0")


def test_paragraphs_join_back_and_hold_visible_text() -> None:
    text = "\n\nA\n\n\n\nB\nC\n\n  D\n\n"
    pieces = split_paragraphs(text)
    assert "".join(pieces) == text
    assert all(p.strip() for p in pieces)
    assert split_paragraphs("one") == ["one"]


# --- the loopback server's cache ----------------------------------------------------------


def body(user: str, *, model: str = "claude-x", mark: bool = True) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": SYSTEM}
    if mark:
        block["cache_control"] = dict(EPHEMERAL)
    return {
        "model": model,
        "max_tokens": 100,
        "system": [block],
        "messages": [{"role": "user", "content": user}],
    }


def test_the_simulator_writes_a_new_prefix_and_reads_it_back_per_model() -> None:
    sim = PromptCacheSimulator()
    first = body("Look.")
    total = estimate_tokens(first)
    written = sim.usage(first, total)
    assert written is not None and written["cache_read_input_tokens"] == 0
    assert written["cache_creation_input_tokens"] > 0.9 * total  # the system prompt
    read = sim.usage(body("North."), total)
    assert read is not None
    assert read["cache_read_input_tokens"] == written["cache_creation_input_tokens"]
    assert read["cache_creation_input_tokens"] == 0
    assert sum(read.values()) == total
    other = sim.usage(body("Look.", model="claude-y"), total)
    assert other is not None and other["cache_read_input_tokens"] == 0


def test_the_simulator_leaves_unmarked_and_too_short_prefixes_uncached() -> None:
    sim = PromptCacheSimulator(min_tokens=api_min_cache_tokens)
    assert sim.usage(body("Look.", mark=False), 100) is None
    short = sim.usage(body("Look.", model="claude-haiku-4-5"), 1500)  # under Haiku's 4096
    assert short == {
        "input_tokens": 1500,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }


def test_a_changed_tool_choice_keeps_tools_and_system_but_not_the_messages() -> None:
    """The API's rule: tool_choice sits between the system prompt and the messages."""
    sim = PromptCacheSimulator()
    user = [{"type": "text", "text": "Room 1. " * 200, "cache_control": {"type": "ephemeral"}}]
    first = {**body("Look."), "messages": [{"role": "user", "content": user}]}
    total = estimate_tokens(first)
    written = sim.usage({**first, "tool_choice": {"type": "any"}}, total)
    assert written is not None and written["cache_read_input_tokens"] == 0
    again = sim.usage({**first, "tool_choice": {"type": "any"}}, total)
    assert again is not None and again["cache_read_input_tokens"] == written[
        "cache_creation_input_tokens"
    ]
    forced = sim.usage({**first, "tool_choice": {"type": "tool", "name": "Decision"}}, total)
    assert forced is not None
    # the system prompt is read; the messages after it are written again
    assert 0 < forced["cache_read_input_tokens"] < again["cache_read_input_tokens"]
    assert forced["cache_creation_input_tokens"] > 0
    marked = forced["cache_read_input_tokens"] + forced["cache_creation_input_tokens"]
    assert marked == again["cache_read_input_tokens"]


def test_a_new_tool_choice_is_a_lineage_of_its_own() -> None:
    planner = PromptCachePlanner()
    planner.plan(turn(1), "claude-x")
    planner.plan(turn(2), "claude-x")
    forced = turn(3).model_copy(update={"tool_choice": {"type": "tool", "name": "Decision"}})
    assert marked_texts(planner.plan(forced, "claude-x")) == []  # no read of a dead prefix


# --- the adventurer's section order -------------------------------------------------------


def test_sections_come_in_reading_order_with_their_text_unchanged() -> None:
    context = (
        "## Lessons here\nA dark cellar.\n\n[FAILURE] north\n\n"
        "## Other important lessons\n- [800] Bring a lamp\n\n"
        "## Last turn\nYou: look\n\n"
        "## Something of a library's own\nx\n\n"
        "## The room now\nCellar (Location 3)\nExits: up"
    )
    ordered = reading_order(context)
    assert [line for line in ordered.splitlines() if line.startswith("## ")] == [
        "## The room now",
        "## Last turn",
        "## Lessons here",
        "## Other important lessons",
        "## Something of a library's own",
    ]
    assert sorted(ordered.split("\n")) == sorted(context.split("\n"))
    assert reading_order("no sections here\n\n## A\nx") == "no sections here\n\n## A\nx"


# --- prices and the meter -----------------------------------------------------------------


def test_a_call_costs_each_kind_of_token_at_its_price() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        cached_input_tokens=600_000,
        cache_write_input_tokens=100_000,
        output_tokens=10_000,
    )
    sonnet = PriceTable().cost("claude-sonnet-4-6", usage)
    # 300k plain at $3, 600k read at $0.30, 100k written at $3.75, 10k out at $15
    assert sonnet == pytest.approx(0.9 + 0.18 + 0.375 + 0.15)
    assert PriceTable().cost("claude-sonnet-4-5-20250929", usage) == pytest.approx(1.605)
    gpt = PriceTable().cost(
        "gpt-4.1", Usage(input_tokens=1000, cached_input_tokens=400, output_tokens=0)
    )
    assert gpt == pytest.approx((600 * 2.0 + 400 * 0.5) / 1e6)


def test_an_unknown_model_has_no_price_rather_than_a_neighbours() -> None:
    table = PriceTable()
    assert table.price("gpt-4.1-nano") is not None
    for model in ("gpt-4.1-huge", "claude-sonnet-9", "qwen3:8b", "claude-test-adventurer"):
        assert table.price(model) is None, model
    meter = UsageMeter(table)
    meter.record_success("adventurer", Usage(input_tokens=10, output_tokens=5), 1.0, "qwen3:8b")
    meter.record_success("summary", Usage(input_tokens=10, output_tokens=5), 1.0, "gpt-4.1")
    cost = meter.snapshot()["cost"]
    assert cost["cost_usd"] is None and cost["unpriced_models"] == ["qwen3:8b"]
    assert cost["by_role"]["adventurer"]["cost_usd"] is None
    assert cost["by_role"]["summary"]["cost_usd"] == pytest.approx((10 * 2 + 5 * 8) / 1e6)


def test_llm_prices_in_settings_override_and_add_models() -> None:
    mine = {"input": 1.0, "cache_read": 0.5, "cache_write": 1.0, "output": 2.0}
    settings = load_settings(llm_prices={"qwen3:8b": mine, "gpt-4.1": mine})
    table = price_table(settings.model_dump()["llm_prices"])
    assert table.price("qwen3:8b") == ModelPrice(**mine)
    assert table.price("gpt-4.1") == ModelPrice(**mine)
    assert table.price("claude-haiku-4-5") == DEFAULT_PRICES["claude-haiku-4-5"]
    with pytest.raises(ConfigError, match="llm_prices"):
        load_settings(llm_prices={"qwen3:8b": {"input": 1.0}})


def test_the_meter_counts_tokens_and_dollars_per_episode() -> None:
    meter = UsageMeter()
    call = Usage(input_tokens=2000, cached_input_tokens=1500, output_tokens=100)
    meter.start_episode(1)
    meter.record_success("adventurer", call, 1.0, "claude-haiku-4-5")
    meter.start_episode(2)
    meter.record_success("adventurer", call, 1.0, "claude-haiku-4-5")
    meter.record_success("adventurer", call, 1.0, "claude-haiku-4-5")
    meter.record_failure("adventurer", 1.0)
    one = (500 * 1.0 + 1500 * 0.1 + 100 * 5.0) / 1e6
    assert meter.episode_cost(1) == {
        "tokens": {"input": 2000, "cache_read": 1500, "cache_write": 0, "output": 100},
        "cost_usd": pytest.approx(one),
    }
    assert meter.episode_cost(2)["cost_usd"] == pytest.approx(2 * one)
    snap = meter.snapshot()
    assert snap["cost"]["cost_usd"] == pytest.approx(3 * one)
    assert snap["cost"]["by_episode"]["2"]["tokens"]["input"] == 4000
    assert snap["cached_input_tokens"] == 4500
