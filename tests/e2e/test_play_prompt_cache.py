"""`cairn play --llm anthropic` on Zork I against the loopback Messages API with its prompt
cache, which caches only prefixes as long as each model's documented minimum (as the API
does): the requests mark their repeating prefix, the cache serves most of the adventurer's
input (its tools and system prompt come first), nothing is marked for Haiku 4.5's shorter
prompts, and report.json and report.html give tokens and dollars in total, per role and per
episode (unknown, not guessed, for a model without a price)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cairn.cli import main
from cairn.testing.cache_sim import api_min_cache_tokens
from cairn.testing.llm_server import FakeMessagesServer

ZORK = Path(__file__).resolve().parents[2].parent / "shared" / "roms" / "zork1.z5"
WALK = ["open mailbox", "read leaflet", "south", "east", "open window", "enter", "west"]


def offered(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body.get("tools") or []}


def answer(server: FakeMessagesServer, body: dict[str, Any]) -> None:
    """A model that walks the first rooms, remembers nothing and looks nothing up."""
    forced = (body.get("tool_choice") or {}).get("name")
    if "AgentDecision" in offered(body):
        turn = sum(1 for r in server.requests if "AgentDecision" in offered(r))
        action = WALK[(turn - 1) % len(WALK)]
        server.queue_tool_use("AgentDecision", {"action": action, "reasoning": "the route"})
    elif forced == "SynthesisDecision":
        server.queue_tool_use(forced, {"should_remember": False})
    elif forced == "ObjectivesAnswer":
        server.queue_tool_use(forced, {"objectives": ["Get into the house"]})
    else:
        server.queue_text("Nothing to look up.")


def play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> dict[str, Any]:
    with FakeMessagesServer(responder=answer, cache_min_tokens=api_min_cache_tokens) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("CAIRN_LLM_BASE_URL", server.base_url)
        result = CliRunner().invoke(
            main,
            [
                "play",
                *("--game", str(ZORK), "--llm", "anthropic", "--workdir", str(tmp_path)),
                *("--episodes", "2", "--max-turns", "12"),
                *extra,
            ],
        )
        requests = list(server.requests)
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads((tmp_path / "report.json").read_text())
    report["_requests"] = requests
    report["_html"] = (tmp_path / "report.html").read_text()
    return report


@pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file: {ZORK} is absent")
def test_a_run_reads_from_the_cache_and_reports_what_it_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = play(tmp_path, monkeypatch)

    assert any("cache_control" in json.dumps(r) for r in report["_requests"])
    cost = report["llm_usage"]["cost"]
    tokens = cost["tokens"]
    assert tokens["input"] == report["llm_usage"]["input_tokens"] > 0
    adventurer = cost["by_role"]["adventurer"]["tokens"]
    assert adventurer["cache_read"] / adventurer["input"] > 0.5
    # Haiku 4.5 caches nothing under 4,096 tokens: its requests go unmarked, nothing is written
    synthesis = [r for r in report["_requests"] if r["model"] == "claude-haiku-4-5"]
    assert synthesis and not any("cache_control" in json.dumps(r) for r in synthesis)
    assert cost["by_role"]["synthesis"]["tokens"]["cache_write"] == 0
    assert cost["cost_usd"] > 0 and "unpriced_models" not in cost
    assert set(cost["by_role"]) >= {"adventurer", "synthesis"}
    roles = sum(part["cost_usd"] for part in cost["by_role"].values())
    assert roles == pytest.approx(cost["cost_usd"])
    episodes = report["episodes"]
    assert [e["episode"] for e in episodes] == [1, 2]
    assert all(e["cost_usd"] > 0 and e["tokens"]["input"] > 0 for e in episodes)
    assert sum(e["cost_usd"] for e in episodes) == pytest.approx(cost["cost_usd"])
    assert sum(e["tokens"]["cache_read"] for e in episodes) == tokens["cache_read"]

    html = report["_html"]
    assert 'id="llm-cost"' in html
    assert f"<td>total</td><td>{tokens['input']}</td><td>{tokens['cache_read']}</td>" in html
    assert f"${cost['cost_usd']:,.4f}" in html and "<td>episode 2</td>" in html


@pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file: {ZORK} is absent")
def test_a_model_without_a_price_has_an_unknown_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = {
        "adventurer": "claude-house-model",
        "synthesis": "claude-haiku-4-5",
        "summary": "claude-haiku-4-5",
        "objective": "claude-sonnet-4-6",
        "query": "claude-haiku-4-5",
    }
    monkeypatch.setenv("CAIRN_MODELS", json.dumps(models))
    report = play(tmp_path, monkeypatch)

    cost = report["llm_usage"]["cost"]
    assert cost["cost_usd"] is None and cost["unpriced_models"] == ["claude-house-model"]
    assert cost["by_role"]["adventurer"]["cost_usd"] is None
    assert cost["by_role"]["synthesis"]["cost_usd"] > 0  # the priced roles keep their cost
    assert all(e["cost_usd"] is None for e in report["episodes"])
    assert "No price for claude-house-model" in report["_html"]

    monkeypatch.setenv(
        "CAIRN_LLM_PRICES",
        json.dumps(
            {"claude-house-model": {"input": 1, "cache_read": 0.1, "cache_write": 1, "output": 2}}
        ),
    )
    priced = play(tmp_path / "priced", monkeypatch)
    assert priced["llm_usage"]["cost"]["by_role"]["adventurer"]["cost_usd"] > 0
