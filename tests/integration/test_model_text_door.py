"""Reasoning tags never reach what cairn stores (issue 38, item 6), on both APIs.

A model that thinks aloud in every answer (`<thinking>`, `<think>`, `<reflection>`,
`<reasoning>`, an unclosed `<think>`) plays two episodes of the fake game through the loopback
server: the memories, visit summaries, knowledgebase.md, objectives and notes hold the answers
only. The exchange log, inside the door, keeps what the model said.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.llm.model_text import ReasoningDoor
from cairn.container import build_container
from cairn.play.runner import run_play
from cairn.testing.fake_game import FakeGame
from tests.either_api import APIS, Request, model_server, model_settings

WALK = ["north", "open chest", "take key", "south", "east", "unlock door with key", "open door"]
TAGS = ("<think", "<thinking", "<reflection", "<reasoning", "</think", "</thinking")


class ThinkingModel:
    """Answers every role usably, each answer wrapped in reasoning; the knowledge base's first
    rewrite is cut off while thinking (no answer at all)."""

    def __init__(self) -> None:
        self.walk = iter(WALK * 3)
        self.rewrites = 0

    def __call__(self, request: Request) -> tuple[str, Any] | str:
        tool = request.forced or ("AgentDecision" if "AgentDecision" in request.offered else None)
        if tool == "AgentDecision":
            action = next(self.walk)
            return tool, {
                "action": action,
                "reasoning": f"<thinking>SECRET-PLAN {action}</thinking>",
                "remember": "<think>SECRET-NOTE</think>Keys open doors in this house.",
            }
        if tool == "SynthesisDecision":
            return tool, {
                "should_remember": True,
                "category": "NOTE",
                "memory_title": "<reasoning>SECRET-TITLE</reasoning>Useful fact",
                "memory_text": "<reflection>SECRET-SYNTHESIS\n</reflection>\nSomething here"
                " matters.",
            }
        if tool == "ObjectivesAnswer":
            return tool, {"objectives": ["<think>SECRET-OBJECTIVE</think> Find the brass key"]}
        if tool == "MemoryRanking":
            return tool, {"ids": [], "answer": "<think>SECRET-QUERY</think>Nothing yet."}
        if "strategic knowledge base" in request.text:
            self.rewrites += 1
            if self.rewrites == 1:
                return "<think>SECRET-KB-CUT the model ran out of tokens while"
            return "<think>SECRET-KB</think>\n# Strategy\n- Take the brass key before the door."
        return "SECRET-SUMMARY thoughts before the answer</think>The Hall joins three rooms."


@pytest.mark.parametrize("api", APIS)
def test_nothing_stored_holds_reasoning(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ThinkingModel()
    with model_server(api, model) as server:
        settings = model_settings(api, server.base_url, monkeypatch, workdir=tmp_path)
        result = run_play(settings, game=FakeGame(), episodes=2, max_turns=7)
    report = result.report
    assert report["total"]["stand_in_turns"] == 0  # the model played every turn

    memories = (tmp_path / "Memories.md").read_text(encoding="utf-8")
    knowledge = (tmp_path / "knowledgebase.md").read_text(encoding="utf-8")
    turns = [json.loads(line) for line in (result.run_dir / "transcript.jsonl").open()]
    objectives = json.dumps([t["objectives"] for t in turns])
    for stored in (memories, knowledge, objectives):
        assert "SECRET" not in stored and not any(tag in stored for tag in TAGS)
    # ... and the answers themselves are there: a memory, a note, the knowledge, objectives
    assert "Something here matters." in memories and "Useful fact" in memories
    assert "Keys open doors in this house." in memories
    assert "- Take the brass key before the door." in knowledge
    assert turns[0]["objectives"] == ["Find the brass key"]
    # a visit summary was written, from the text after the stray closing tag
    assert report["total"]["summarizer_calls_by_kind"].get("location", 0) >= 1
    assert "The Hall joins three rooms." in memories
    # the first rewrite was all thinking (cut off): no answer, the digest was kept
    assert model.rewrites == 2 and knowledge.count("## Episodes") == 1
    # the turn's reasoning is what the model thought (kept for the turn history)
    assert turns[0]["reasoning"] == f"SECRET-PLAN {WALK[0]}\nSECRET-NOTE"
    # the exchange log, inside the door, has the answers as they came
    assert "<thinking>SECRET-PLAN" in (tmp_path / "llm.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("api", APIS)
def test_every_part_that_asks_a_model_asks_through_the_door(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with model_server(api) as server:
        settings = model_settings(api, server.base_url, monkeypatch, workdir=tmp_path)
        container = build_container(settings)
        door = container.model_answers()
        assert isinstance(door, ReasoningDoor) and door.inner is container.llm_client()
        assert container.agent()._client is door
        assert container.knowledge_base()._writer._client is door
        assert container.memory_retriever()._client is door
        assert container.objective_discoverer()._client is door
        assert container.summarizer()._primary._client is door
