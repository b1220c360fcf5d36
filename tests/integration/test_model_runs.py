"""A run with a model says what the model did, on both APIs (issue 38, items 10 and 11).

- a model that never answered fails the run: exit 2 and one line naming the server, whether or
  not the offline stand-in was allowed to play on (`--llm-fallback offline`);
- a model that stops answering stops the run after that turn, unless the fallback is chosen;
- the turns the stand-in played are counted in the table and report.json;
- "research stopped after 4 tool rounds" is warned once a run;
- a turn's context is the whole request: system prompt, tools and messages.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from statistics import median
from typing import Any

import pytest
from click.testing import CliRunner

from cairn.agents.memory_toolbox import research_tools
from cairn.agents.prompt_files import render
from cairn.cli import main
from cairn.errors import ModelNotAnsweringError
from cairn.interfaces.agent import AgentDecision
from cairn.interfaces.llm import LLMMessage, LLMRequest
from cairn.play.runner import run_play
from cairn.services.context.tokens import request_tokens
from cairn.testing import FakeGame
from cairn.testing.postgres_server import free_port
from tests.either_api import APIS, OPENAI_MODELS, Request, model_server, model_settings

WALK = ["north", "open chest", "take key", "south", "east", "unlock door with key", "open door"]


def closed_port_env(api: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point `api`'s adapter at a port nothing listens on; its base URL."""
    url = f"http://127.0.0.1:{free_port()}"
    for name in ("OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CAIRN_LLM_MAX_RETRIES", "0")
    if api == "anthropic":
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("CAIRN_LLM_BASE_URL", url)
        return url
    monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
    monkeypatch.setenv("CAIRN_OPENAI_MODELS", json.dumps(OPENAI_MODELS))
    return f"{url}/v1"


def play(workdir: Path, api: str, *extra: str) -> Any:
    args = ["play", "--llm", api, "--workdir", str(workdir), "--episodes", "2"]
    return CliRunner().invoke(main, [*args, "--max-turns", "5", *extra])


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error: ")]


@pytest.mark.parametrize("api", APIS)
def test_a_model_that_never_answered_fails_the_run_naming_the_server(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = closed_port_env(api, monkeypatch)
    result = play(tmp_path / "w", api)
    assert result.exit_code == 2, result.output
    [line] = error_lines(result.output)
    assert f" at {url} never gave a usable answer (3 calls; the last failure: " in line
    assert "connection failed" in line and "--llm-fallback offline" in line
    # it stopped after the turn the circuit opened; the files are written, the stand-in counted
    report = json.loads((tmp_path / "w" / "report.json").read_text())
    assert report["model_failure"] == line.removeprefix("error: ")
    assert [(e["turns"], e["stand_in_turns"]) for e in report["episodes"]] == [(1, 1)]
    assert "stand-in" in result.output and (tmp_path / "w" / "report.html").is_file()


@pytest.mark.parametrize("api", APIS)
def test_falling_back_is_a_choice_and_a_model_that_never_answered_still_fails(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed_port_env(api, monkeypatch)
    result = play(tmp_path / "w", api, "--llm-fallback", "offline")
    assert result.exit_code == 2, result.output
    [line] = error_lines(result.output)
    assert "never gave a usable answer" in line and "the run stopped" not in line
    report = json.loads((tmp_path / "w" / "report.json").read_text())
    assert [(e["turns"], e["stand_in_turns"]) for e in report["episodes"]] == [(5, 5), (5, 5)]
    assert report["total"]["stand_in_turns"] == 10


class GoesDown:
    """Plays the walk for `answers` adventurer decisions, then every call fails with a 500."""

    def __init__(self, api: str, server: Any, answers: int) -> None:
        self.api, self.server, self.left = api, server, answers
        self.walk = iter(WALK * 4)

    def __call__(self, request: Request) -> tuple[str, Any] | str:
        tool = request.forced or ("AgentDecision" if "AgentDecision" in request.offered else None)
        if tool == "AgentDecision":
            self.left -= 1
        if self.left < 0:
            self.server.queue_fault("500")  # the answer queued: the script's own is not used
            return "unused"
        if tool == "AgentDecision":
            return tool, {"action": next(self.walk), "reasoning": "the walk"}
        if tool == "SynthesisDecision":
            return tool, {"should_remember": False}
        if tool == "ObjectivesAnswer":
            return tool, {"objectives": ["Find the key"]}
        if tool == "MemoryRanking":
            return tool, {"ids": [], "answer": "Nothing."}
        return "A summary."


def run_going_down(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fallback: str
) -> tuple[dict[str, Any], ModelNotAnsweringError | None]:
    with model_server(api) as server:
        model = GoesDown(api, server, answers=3)

        def respond(s: Any, body: dict[str, Any]) -> None:
            answer = model(Request(api, body))
            if answer == "unused":
                return
            if isinstance(answer, str):
                s.queue_text(answer)
            elif api == "anthropic":
                s.queue_tool_use(*answer)
            else:
                s.queue_tool_call(*answer)

        server.responder = respond
        settings = model_settings(
            api, server.base_url, monkeypatch, workdir=tmp_path, llm_fallback=fallback
        )
        try:
            return run_play(settings, game=FakeGame(), episodes=2, max_turns=8).report, None
        except ModelNotAnsweringError as exc:
            return exc.result.report, exc


@pytest.mark.parametrize("api", APIS)
def test_a_model_that_stops_answering_stops_the_run_unless_the_fallback_is_chosen(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, error = run_going_down(api, tmp_path / "none", monkeypatch, "none")
    assert error is not None
    assert "failed repeatedly, so its circuit opened" in str(error)
    [episode] = report["episodes"]  # stopped in episode 1, after the turn the circuit opened
    assert f"the run stopped after episode 1, turn {episode['turns']}" in str(error)
    assert 3 < episode["turns"] < 8 and episode["stand_in_turns"] == episode["turns"] - 3

    report, error = run_going_down(api, tmp_path / "offline", monkeypatch, "offline")
    assert error is None and "model_failure" not in report  # the model did answer
    assert [e["turns"] for e in report["episodes"]] == [8, 8]
    assert report["total"]["stand_in_turns"] == 16 - 3  # all but the three it answered


class Researcher:
    """Looks a memory up every time it may, so each decision's research hits the limit."""

    def __call__(self, request: Request) -> tuple[str, Any] | str:
        if request.forced == "AgentDecision":
            return "AgentDecision", {"action": "look", "reasoning": "enough research"}
        if "AgentDecision" in request.offered:
            return "query_memories", {"question": "Where is the key?"}
        if request.forced == "SynthesisDecision":
            return "SynthesisDecision", {"should_remember": False}
        if request.forced == "ObjectivesAnswer":
            return "ObjectivesAnswer", {"objectives": ["Find the key"]}
        if request.forced == "MemoryRanking":
            return "MemoryRanking", {"ids": [], "answer": "Nothing."}
        return "A summary."


@pytest.mark.parametrize("api", APIS)
def test_research_stopped_is_warned_once_a_run(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    with model_server(api, Researcher()) as server:
        settings = model_settings(api, server.base_url, monkeypatch, workdir=tmp_path)
        run_play(settings, game=FakeGame(), episodes=1, max_turns=3)
    warned = [r for r in caplog.records if "research stopped" in r.getMessage()]
    assert len(warned) == 1  # three turns hit the limit; said once


def sent_request(api: str, body: dict[str, Any]) -> LLMRequest:
    """The adventurer's first request of a turn as cairn built it, read back from the wire."""
    if api == "anthropic":
        system = body["system"]
        if not isinstance(system, str):
            system = "".join(block["text"] for block in system)
        content = body["messages"][0]["content"]
    else:
        system = body["messages"][0]["content"]
        content = body["messages"][1]["content"]
    if not isinstance(content, str):
        content = "".join(block["text"] for block in content)
    return LLMRequest(
        role="adventurer",
        system=system,
        messages=[LLMMessage(role="user", content=content)],
        tools=research_tools_for_play(),
    )


def research_tools_for_play() -> Any:
    from cairn.agents.memory_toolbox import MEMORY_TOOL_SPECS  # the play's toolbox offers these

    class Specs:
        specs = MEMORY_TOOL_SPECS

    return research_tools(Specs(), AgentDecision)  # type: ignore[arg-type]


class Walker:
    def __init__(self) -> None:
        self.walk = iter(WALK)

    def __call__(self, request: Request) -> tuple[str, Any] | str:
        tool = request.forced or ("AgentDecision" if "AgentDecision" in request.offered else None)
        if tool == "AgentDecision":
            return tool, {"action": next(self.walk), "reasoning": "walk"}
        return Researcher()(request)


@pytest.mark.parametrize("api", APIS)
def test_a_turns_context_counts_the_whole_request(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with model_server(api, Walker()) as server:
        settings = model_settings(api, server.base_url, monkeypatch, workdir=tmp_path)
        result = run_play(settings, game=FakeGame(), episodes=1, max_turns=5)
        bodies = [
            b
            for b in server.requests
            if "AgentDecision" in Request(api, b).offered and len(b["messages"]) <= 2
        ]
    turns = [json.loads(line) for line in (result.run_dir / "transcript.jsonl").open()]
    expected = [request_tokens(sent_request(api, body)) for body in bodies]
    assert [t["context_tokens"] for t in turns] == expected
    assert result.report["episodes"][0]["context_tokens_p50"] == int(median(expected))
    system = request_tokens(
        LLMRequest(role="adventurer", system=render("adventurer_system"), messages=[])
    )
    for turn, tokens in zip(turns, expected, strict=True):
        prompt = sum(tokens for _, tokens in turn["context_sections"])
        assert tokens > prompt + system  # the prompt, the system prompt and the tools
