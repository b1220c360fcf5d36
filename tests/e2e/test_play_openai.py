"""`cairn play --llm openai` on Zork I against a loopback OpenAI-compatible server (the way a
local Ollama or vLLM is used: OPENAI_BASE_URL, no key): 20 turns with memory-tool research and
structured decisions, through a 429, a 503, two 500s, a malformed body, a schema-breaking
answer and a hanging call; the run finishes and report.json counts each failure by kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cairn.cli import main
from cairn.testing.chat_server import FakeChatServer

ZORK = Path(__file__).resolve().parents[2].parent / "shared" / "roms" / "zork1.z5"
TURNS = 20
WALK = [
    "open mailbox",
    "read leaflet",
    "south",
    "east",
    "open window",
    "enter",
    "west",
    "take lamp",
    "move rug",
    "open trap door",
    "turn on lamp",
    "east",
    "north",
    "up",
]
"""The model's commands, in order (a turn played by the stand-in takes none of them)."""
LOCAL_MODELS = {
    "adventurer": "qwen3:8b",
    "objective": "qwen3:8b",
    "synthesis": "qwen3:4b",
    "summary": "qwen3:4b",
    "query": "qwen3:4b",
}
"""What a local server serves (names it knows; no list price)."""


def forced_tool(body: dict[str, Any]) -> str | None:
    """The tool a structured request forces (it offers one, and requires a call)."""
    tools = body.get("tools") or []
    if body.get("tool_choice") == "required" and len(tools) == 1:
        return str(tools[0]["function"]["name"])
    return None


class ScriptedModel:
    """Answers every request of a play as a model would, and injects faults into chosen
    adventurer decisions (numbered from 1, as the server sees them)."""

    def __init__(self, faults: dict[int, list[str]]) -> None:
        self.faults = faults
        self.decisions = 0
        self.research_rounds = 0
        self.walk = iter(WALK)

    def __call__(self, server: FakeChatServer, body: dict[str, Any]) -> None:
        tool = forced_tool(body)
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        researched = any(m["role"] == "tool" for m in body["messages"])
        if tool == "AgentDecision" or ("AgentDecision" in offered and researched):
            self.decisions += 1
            plan = self.faults.get(self.decisions, [])
            for fault in plan:
                if fault == "invalid":  # breaks the schema: repaired by the next answer
                    server.queue_tool_call("AgentDecision", {"action": ""})
                elif fault == "timeout":
                    server.queue_fault("timeout", delay=2.0)
                else:
                    server.queue_fault(fault)
            if plan and plan[-1] in ("500", "timeout", "malformed"):
                return  # the call fails: the stand-in plays this turn
            action = next(self.walk, "look")
            server.queue_tool_call(
                "AgentDecision", {"action": action, "reasoning": f"the walkthrough: {action}"}
            )
        elif tool == "SynthesisDecision":
            server.queue_tool_call("SynthesisDecision", {"should_remember": False})
        elif tool == "ObjectivesAnswer":
            server.queue_tool_call("ObjectivesAnswer", {"objectives": ["Find the lamp"]})
        elif tool == "MemoryRanking":
            server.queue_tool_call("MemoryRanking", {"ids": [], "answer": "Nothing yet."})
        elif "AgentDecision" in offered:
            self.research_rounds += 1  # research first: ask the memory tools, both at once
            server.queue_tool_calls(
                [
                    ("query_memories", {"question": "What do I know about this place?"}),
                    ("get_top_memories", {"limit": 3}),
                ]
            )
        else:
            server.queue_text("Nothing more to look up; I will act.")


@pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file: {ZORK} is absent")
def test_play_zork_with_openai_through_injected_faults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedModel(
        {
            2: ["429"],  # retried by the SDK: answered, no failure
            4: ["500", "500"],  # still failing after the one retry: unavailable
            6: ["malformed"],  # a 200 that is not a completion: bad_response
            8: ["invalid"],  # repaired once: answered, the invalid answer a bad_response
            10: ["503"],  # retried: answered
            14: ["timeout", "timeout"],  # hangs twice: the circuit opens for the rest
        }
    )
    workdir = tmp_path / "zork"
    with FakeChatServer(responder=model) as server:
        for name in ("OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("CAIRN_LLM_TIMEOUT", "0.5")
        monkeypatch.setenv("CAIRN_LLM_MAX_RETRIES", "1")
        monkeypatch.setenv("CAIRN_OPENAI_MODELS", json.dumps(LOCAL_MODELS))
        result = CliRunner().invoke(
            main,
            [
                "play",
                *("--game", str(ZORK), "--llm", "openai", "--workdir", str(workdir)),
                *("--episodes", "1", "--max-turns", str(TURNS), "--llm-fallback", "offline"),
            ],
        )
        requests = list(server.requests)
    assert result.exit_code == 0, result.output
    assert "llm openai" in result.output
    lines = result.output.splitlines()  # the table: the stand-in's turns counted
    head, row = next(lines[i : i + 2] for i, line in enumerate(lines) if "stand-in" in line)
    assert dict(zip(head.split()[-1:], row.split()[-1:], strict=True)) == {"stand-in": "9"}

    report = json.loads((workdir / "report.json").read_text())
    assert report["llm"] == "openai" and report["episodes"][0]["turns"] == TURNS
    kinds = report["llm_usage"]["failures_by_kind"]
    assert kinds["fallback:unavailable"] == 1
    assert kinds["fallback:bad_response"] == 1  # the malformed body; the invalid was repaired
    assert kinds["bad_response"] == 2  # each unusable answer once: malformed, invalid
    assert kinds["fallback:timeout"] == 1
    assert kinds["fallback:circuit_open"] == TURNS - 14  # every turn after the hang
    assert "fallback:rate_limited" not in kinds  # the 429 and the 503 were retried and answered
    circuit = report["llm_usage"]["circuit"]
    assert circuit["opened"] == 1 and circuit["state"] == "open"
    assert report["llm_usage"]["failures"] == report["total"]["llm_failures"] >= 3

    # the model played the turns it answered: its commands, in order, with the game's replies
    transcript = (next(workdir.glob("runs/*/transcript.jsonl"))).read_text().splitlines()
    turns = [json.loads(line) for line in transcript]
    assert len(turns) == TURNS
    assert turns[0]["action"] == "open mailbox" and "leaflet" in turns[0]["response"]
    model_turns = [t for t in turns if t["reasoning"].startswith("the walkthrough: ")]
    assert [t["action"] for t in model_turns] == WALK[: len(model_turns)]
    assert len(model_turns) == 13 - 2  # decisions 1-13, less the two that failed

    # tool use: research called the memory tools, and their answers went back as tool messages
    assert model.research_rounds >= 13
    answered = [r for r in requests if any(m["role"] == "tool" for m in r["messages"])]
    assert len(answered) >= 13
    assert {m["tool_call_id"] for m in answered[0]["messages"] if m["role"] == "tool"} == {
        c["id"] for m in answered[0]["messages"] if m.get("tool_calls") for c in m["tool_calls"]
    }
    log = [json.loads(line) for line in (workdir / "llm.jsonl").read_text().splitlines()]
    errors = {e["error"]["type"] for e in log if e["error"]}
    assert {"LLMUnavailableError", "LLMBadResponseError", "LLMTimeoutError"} <= errors
    assert {e["model"] for e in log} == set(LOCAL_MODELS.values())  # a local server's names
    assert report["episodes"][0]["stand_in_turns"] == 9  # 2 failed calls, 1 hang, 6 open
    assert report["llm_usage"]["cost"]["cost_usd"] is None  # qwen3 has no list price
