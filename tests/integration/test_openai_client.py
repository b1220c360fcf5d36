"""OpenAIClient through the real `openai` SDK against the loopback FakeChatServer (no network):
answers, tool calls and structured answers, retries, every failure kind, the breaker, the
exchange log and cassette, the key, and `--llm openai`'s configuration."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from click.testing import CliRunner
from pydantic import BaseModel, Field

from cairn.adapters.llm.breaker import CircuitBreaker
from cairn.adapters.llm.cassette import CassetteClient
from cairn.adapters.llm.deadline import DeadlineExceeded
from cairn.adapters.llm.exchange_log import ExchangeLog, request_hash
from cairn.adapters.llm.factory import OPENAI_DEFAULT_MODELS, build_llm_client, circuit_breaker_of
from cairn.adapters.llm.openai_client import OpenAIClient
from cairn.adapters.llm.usage import UsageMeter
from cairn.agents.structured import complete_structured
from cairn.cli import main
from cairn.container import build_container
from cairn.errors import (
    CassetteMissError,
    ConfigError,
    LLMBadResponseError,
    LLMCircuitOpenError,
    LLMRateLimitedError,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
    ModelNotAnsweringError,
)
from cairn.interfaces.llm import ROLES, LLMMessage, LLMRequest, ToolSpec
from cairn.play.runner import run_play
from cairn.settings import load_settings
from cairn.testing.chat_server import FakeChatServer
from cairn.testing.fake_game import FakeGame

MODELS = {role: f"gpt-test-{role}" for role in ROLES}
KEY = "sk-proj-test-SECRET123"


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    with FakeChatServer() as s:
        yield s


@pytest.fixture(autouse=True)
def no_ambient_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK reads OPENAI_* variables; a developer's own must not steer these tests."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_CUSTOM_HEADERS", raising=False)


def make_client(server: FakeChatServer, **overrides: Any) -> OpenAIClient:
    options: dict[str, Any] = {
        "api_key": KEY,
        "models": MODELS,
        "base_url": server.base_url,
        "timeout": 5.0,
        "max_retries": 2,
    }
    options.update(overrides)
    return OpenAIClient(**options)


def ask(text: str = "You are in a white room.", role: str = "adventurer", **kw: Any) -> LLMRequest:
    return LLMRequest(
        role=role,
        system="You play a text game.",
        messages=[LLMMessage(role="user", content=text)],
        **kw,
    )


LOOK = ToolSpec(
    name="look",
    description="Look in a direction.",
    input_schema={
        "type": "object",
        "properties": {"direction": {"type": "string"}},
        "required": ["direction"],
    },
)


class Decision(BaseModel):
    """Decide whether the turn is worth remembering."""

    should_remember: bool
    title: str = Field(min_length=1)
    importance: int = Field(ge=1, le=10)


# --- answers and tool calls --------------------------------------------------------------


def test_a_text_answer_with_usage_cached_tokens_and_the_body_sent(server: FakeChatServer) -> None:
    meter = UsageMeter()
    client = make_client(server, meter=meter)
    server.queue_text("You see a lamp.", usage=(123, 45, 100))

    response = client.complete(ask(max_tokens=300))

    assert (response.text, response.tool_calls, response.stop_reason) == (
        "You see a lamp.",
        [],
        "end_turn",
    )
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (123, 45, 100)
    assert response.latency_ms > 0 and response.model == "gpt-test-adventurer"
    assert server.requests[0] == {
        "model": "gpt-test-adventurer",
        "messages": [
            {"role": "system", "content": "You play a text game."},
            {"role": "user", "content": "You are in a white room."},
        ],
        "max_tokens": 300,  # a compatible server: the name every server knows
        "temperature": 0.0,
    }
    snap = meter.snapshot()
    assert (snap["calls"], snap["failures"], snap["input_tokens"]) == (1, 0, 123)
    assert snap["cached_input_tokens"] == 100
    assert snap["by_role"]["adventurer"]["cached_input_tokens"] == 100


def test_a_server_that_reports_no_cache_or_no_usage_leaves_the_figures_as_before(
    server: FakeChatServer,
) -> None:
    meter = UsageMeter()
    client = make_client(server, meter=meter)
    server.queue_text("plain", usage=(7, 2))
    server.queue_body(
        {"choices": [{"message": {"role": "assistant", "content": "bare"}, "finish_reason": None}]}
    )
    plain, bare = client.complete(ask()), client.complete(ask())
    assert plain.usage.cached_input_tokens is None
    assert plain.usage.model_dump() == {"input_tokens": 7, "output_tokens": 2}
    assert (bare.text, bare.model, bare.stop_reason) == ("bare", "gpt-test-adventurer", None)
    assert (bare.usage.input_tokens, bare.usage.output_tokens) == (0, 0)
    assert "cached_input_tokens" not in meter.snapshot()


def test_openai_itself_gets_max_completion_tokens_and_no_temperature() -> None:
    client = OpenAIClient(api_key=KEY, models=MODELS, base_url="https://api.openai.com/v1")
    body = client.body(ask(max_tokens=99, temperature=0.7), "gpt-test-adventurer")
    assert body["max_completion_tokens"] == 99
    assert "max_tokens" not in body and "temperature" not in body
    assert client.token_limit == "max_completion_tokens" and not client.send_temperature


def test_tool_call_round_trip(server: FakeChatServer) -> None:
    client = make_client(server)
    server.queue_tool_call("look", {"direction": "north"}, text="Let me look.", call_id="call_1")
    server.queue_text("A troll blocks the way.")

    first = client.complete(ask(tools=[LOOK]))
    assert (first.stop_reason, first.text) == ("tool_use", "Let me look.")
    assert [(c.id, c.name, c.input) for c in first.tool_calls] == [
        ("call_1", "look", {"direction": "north"})
    ]
    assert server.requests[0]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "look",
                "description": "Look in a direction.",
                "parameters": LOOK.input_schema,
            },
        }
    ]
    assert "tool_choice" not in server.requests[0]

    follow_up = ask(tools=[LOOK])
    follow_up.messages += [
        LLMMessage(
            role="assistant",
            content=[
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "look",
                    "input": {"direction": "north"},
                },
            ],
        ),
        LLMMessage(
            role="user",
            content=[{"type": "tool_result", "tool_use_id": "call_1", "content": "A troll."}],
        ),
    ]
    second = client.complete(follow_up)
    assert second.text == "A troll blocks the way."
    assert server.requests[1]["messages"][2:] == [
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "look", "arguments": '{"direction": "north"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "A troll."},
    ]


def test_parallel_tool_calls_and_a_server_that_says_stop_with_calls(
    server: FakeChatServer,
) -> None:
    client = make_client(server)
    server.queue_body(
        {
            "model": "local",
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "a",
                                "function": {"name": "look", "arguments": '{"direction":"up"}'},
                            },
                            {"function": {"name": "look", "arguments": ""}},
                        ],
                    },
                    "finish_reason": "stop",
                }
            ],
        }
    )
    response = client.complete(ask(tools=[LOOK]))
    assert response.stop_reason == "tool_use" and response.model == "local"
    assert [(c.id, c.input) for c in response.tool_calls] == [
        ("a", {"direction": "up"}),
        ("call_1", {}),  # no id sent: one made from its place, so a result can answer it
    ]


def test_tool_arguments_that_are_not_a_json_object_are_a_bad_response(
    server: FakeChatServer,
) -> None:
    client = make_client(server)
    server.queue_tool_call("look", '{"direction": "north"')
    server.queue_tool_call("look", "[1, 2]")
    for _ in range(2):
        with pytest.raises(LLMBadResponseError, match="'look': arguments are not a JSON object"):
            client.complete(ask(tools=[LOOK]))
    assert server.request_count == 2  # a 200 is never retried


def test_unknown_role_is_a_config_error(server: FakeChatServer) -> None:
    with pytest.raises(ConfigError, match="'poet'"):
        make_client(server).complete(ask(role="poet"))
    assert server.request_count == 0


# --- structured answers ------------------------------------------------------------------


def test_structured_answer_forces_the_one_tool_as_required(server: FakeChatServer) -> None:
    client = make_client(server)
    server.queue_tool_call("Decision", {"should_remember": True, "title": "Lamp", "importance": 4})

    decision, response = complete_structured(client, ask(role="synthesis"), Decision)

    assert decision == Decision(should_remember=True, title="Lamp", importance=4)
    assert response.stop_reason == "tool_use"
    sent = server.requests[0]
    assert sent["tool_choice"] == "required"  # the one tool offered: what every server accepts
    assert [t["function"]["name"] for t in sent["tools"]] == ["Decision"]
    assert sent["tools"][0]["function"]["parameters"] == Decision.model_json_schema()


def test_a_forced_tool_among_others_is_named(server: FakeChatServer) -> None:
    client = make_client(server)
    other = LOOK.model_copy(update={"name": "listen"})
    request = ask(tools=[LOOK, other], tool_choice={"type": "tool", "name": "look"})
    client.complete(request)
    assert server.requests[0]["tool_choice"] == {"type": "function", "function": {"name": "look"}}
    client.complete(ask(tools=[LOOK], tool_choice={"type": "any"}))
    client.complete(
        ask(tools=[LOOK], tool_choice={"type": "auto", "disable_parallel_tool_use": True})
    )
    assert server.requests[1]["tool_choice"] == "required"
    assert (server.requests[2]["tool_choice"], server.requests[2]["parallel_tool_calls"]) == (
        "auto",
        False,
    )


def test_structured_invalid_then_repaired_through_a_tool_message(server: FakeChatServer) -> None:
    client = make_client(server)
    server.queue_tool_call(
        "Decision", {"should_remember": True, "title": "", "importance": 40}, call_id="t1"
    )
    server.queue_tool_call("Decision", {"should_remember": True, "title": "Lamp", "importance": 9})

    decision, _ = complete_structured(client, ask(role="synthesis"), Decision)

    assert decision.importance == 9 and server.request_count == 2
    repair = server.requests[1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "tool"]
    assert repair[2]["tool_calls"][0]["id"] == "t1" and repair[2]["content"] is None
    assert repair[3]["tool_call_id"] == "t1"
    assert repair[3]["content"].startswith("Error: The input does not match the schema")
    assert "importance" in repair[3]["content"] and "title" in repair[3]["content"]


def test_structured_text_instead_of_a_call_is_repaired_with_a_user_message(
    server: FakeChatServer,
) -> None:
    client = make_client(server)
    server.queue_text("I would remember the lamp.")
    server.queue_tool_call("Decision", {"should_remember": False, "title": "x", "importance": 1})
    complete_structured(client, ask(role="synthesis"), Decision)
    repair = server.requests[1]["messages"]
    assert repair[2] == {"role": "assistant", "content": "I would remember the lamp."}
    assert repair[3]["role"] == "user" and "Call the tool Decision" in repair[3]["content"]


# --- retries and failures ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["429", "500", "503"])
def test_transient_fault_is_retried_then_answered(server: FakeChatServer, kind: str) -> None:
    meter = UsageMeter()
    client = make_client(server, max_retries=2, meter=meter)
    server.queue_fault(kind)
    server.queue_text("second time lucky")

    response = client.complete(ask())

    assert response.text == "second time lucky"
    assert server.request_count == 2 and server.requests[0] == server.requests[1]
    assert meter.snapshot()["failures"] == 0  # one logical call, answered


def test_retry_after_is_honoured(server: FakeChatServer) -> None:
    client = make_client(server, max_retries=1)
    server.queue_fault(429, retry_after=0.3)
    start = time.perf_counter()
    client.complete(ask())
    assert time.perf_counter() - start >= 0.3 and server.request_count == 2


def test_persistent_429_raises_rate_limited(server: FakeChatServer) -> None:
    client = make_client(server, max_retries=1)
    for _ in range(2):
        server.queue_fault(429)
    with pytest.raises(LLMRateLimitedError, match="429 requests rate_limit_exceeded") as info:
        client.complete(ask())
    assert server.request_count == 2
    assert isinstance(info.value.__cause__, openai.RateLimitError)
    assert "request id req_fake_0002" in str(info.value)


@pytest.mark.parametrize("kind", ["500", "503"])
def test_persistent_5xx_raises_unavailable(server: FakeChatServer, kind: str) -> None:
    client = make_client(server, max_retries=2)
    for _ in range(3):
        server.queue_fault(kind, message="the model is overloaded")
    with pytest.raises(LLMUnavailableError, match=f"{kind} server_error: the model is overloaded"):
        client.complete(ask())
    assert server.request_count == 3


def test_timeout_raises_llm_timeout_error(server: FakeChatServer) -> None:
    meter = UsageMeter()
    client = make_client(server, timeout=0.4, max_retries=0, meter=meter)
    server.queue_fault("timeout", delay=1.5)
    start = time.perf_counter()
    with pytest.raises(LLMTimeoutError, match=r"0\.4s") as info:
        client.complete(ask())
    assert time.perf_counter() - start < 1.3
    # the total deadline or the SDK's read timeout, whichever ends first
    assert isinstance(info.value.__cause__, (openai.APITimeoutError, DeadlineExceeded))
    assert meter.snapshot()["failures"] == 1


@pytest.mark.parametrize(
    "queue",
    [
        lambda s: s.queue_fault("malformed"),
        lambda s: s.queue_fault("malformed", shape="wrong"),
        lambda s: s.queue_body({"object": "chat.completion", "choices": []}),
        lambda s: s.queue_body({"error": {"message": "context too long"}}),
    ],
    ids=["not-json", "wrong-shape", "no-choices", "error-with-200"],
)
def test_malformed_body_raises_bad_response(server: FakeChatServer, queue: Any) -> None:
    meter = UsageMeter()
    client = make_client(server, meter=meter)
    queue(server)
    with pytest.raises(LLMBadResponseError, match="malformed answer body"):
        client.complete(ask())
    assert server.request_count == 1 and meter.snapshot()["failures"] == 1


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -5, "completion_tokens": 3},
        {"prompt_tokens": 5, "completion_tokens": -3},
        {
            "prompt_tokens": 5,
            "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": -1},
        },
        {"prompt_tokens": 5.0, "completion_tokens": 3},
        {"prompt_tokens": "5", "completion_tokens": 3},
        {"prompt_tokens": 10**12, "completion_tokens": 3},
    ],
    ids=["negative-in", "negative-out", "negative-cached", "float", "text", "absurd"],
)
def test_token_counts_that_are_not_plain_counts_make_the_answer_unusable(
    server: FakeChatServer, usage: dict[str, Any]
) -> None:
    """Checked at the door: counted once as a bad_response failure, no tokens added."""
    meter = UsageMeter()
    client = make_client(server, meter=meter)
    server.queue_text("north", usage=usage)
    with pytest.raises(LLMBadResponseError, match=r"malformed answer body \(usage\."):
        client.complete(ask())
    snapshot = meter.snapshot()
    assert (snapshot["calls"], snapshot["failures"]) == (1, 1)
    assert snapshot["failures_by_kind"] == {"bad_response": 1}
    assert snapshot["input_tokens"] == 0 and snapshot["output_tokens"] == 0


def test_a_wrong_key_is_a_request_error_and_not_retried() -> None:
    with FakeChatServer(api_key="sk-the-right-one") as server:
        with pytest.raises(LLMRequestError, match="401 invalid_request_error invalid_api_key"):
            make_client(server, max_retries=2).complete(ask())
        assert server.request_count == 1
        right = make_client(server, api_key="sk-the-right-one")
        assert right.complete(ask()).text == "OK"


def test_an_error_that_quotes_the_key_back_is_scrubbed(server: FakeChatServer) -> None:
    server.queue_fault("status", status=400, message=f"bad key {KEY} in request")
    with pytest.raises(LLMRequestError) as info:
        make_client(server).complete(ask())
    assert KEY not in str(info.value) and "[REDACTED]" in str(info.value)


def test_connection_refused_raises_unavailable() -> None:
    with FakeChatServer() as gone:
        url = gone.base_url
    client = OpenAIClient(api_key=KEY, models=MODELS, base_url=url, timeout=2.0, max_retries=0)
    with pytest.raises(LLMUnavailableError, match="connection failed"):
        client.complete(ask())


def test_a_content_block_with_no_chat_form_is_a_counted_request_error(
    server: FakeChatServer,
) -> None:
    meter = UsageMeter()
    client = make_client(server, meter=meter)
    image = LLMMessage(role="user", content=[{"type": "image", "source": {}}])
    with pytest.raises(LLMRequestError, match="'image' content block"):
        client.complete(LLMRequest(role="query", system="", messages=[image]))
    assert server.request_count == 0 and meter.snapshot()["failures"] == 1


# --- the breaker and failures by kind in a run --------------------------------------------


def test_three_failed_calls_open_the_breaker_and_the_fourth_never_reaches_the_server(
    server: FakeChatServer,
) -> None:
    breaker = CircuitBreaker(make_client(server, max_retries=0), threshold=3, cooldown=60)
    for _ in range(3):
        server.queue_fault("500")
    for _ in range(3):
        with pytest.raises(LLMUnavailableError):
            breaker.complete(ask())
    with pytest.raises(LLMCircuitOpenError):
        breaker.complete(ask())
    assert server.request_count == 3
    assert breaker.snapshot() == {"state": "open", "opened": 1, "rejected": 1}


def play_against(
    server: FakeChatServer, tmp_path: Path, turns: int, timeout: float = 5.0
) -> dict[str, Any]:
    """A FakeGame run with `llm=openai` against the local server, built by the container, the
    offline stand-ins chosen to play on; the report of a run that failed for its model too."""
    settings = load_settings(
        workdir=tmp_path,
        llm="openai",
        openai_base_url=server.base_url,
        openai_models=MODELS,
        llm_max_retries=0,
        llm_timeout=timeout,
        llm_fallback="offline",
    )
    try:
        return run_play(settings, game=FakeGame(), episodes=1, max_turns=turns).report
    except ModelNotAnsweringError as exc:
        report: dict[str, Any] = exc.result.report
        return report


def test_failures_are_counted_by_kind_in_the_report(server: FakeChatServer, tmp_path: Path) -> None:
    """Each adventurer call meets another fault; each turn is played by the stand-in, and
    report.json counts it under its kind."""
    plan = iter(["500", "429", "malformed", "503", "timeout-free"])

    def respond(s: FakeChatServer, body: dict[str, Any]) -> None:
        offered = [t["function"]["name"] for t in body.get("tools") or []]
        if body.get("tool_choice") == "required" and "AgentDecision" in offered:
            kind = next(plan, "timeout-free")
            if kind != "timeout-free":
                s.queue_fault(kind)
                return
        usable = {  # the other roles answer usably (words would count as failures)
            "ObjectivesAnswer": {"objectives": ["Find the lamp"]},
            "SynthesisDecision": {"should_remember": False},
        }
        for tool, arguments in usable.items():
            if tool in offered:
                s.queue_tool_call(tool, arguments)
                return
        s.queue_text("nothing to add")

    server.responder = respond
    report = play_against(server, tmp_path, turns=4)
    kinds = report["llm_usage"]["failures_by_kind"]
    assert kinds["fallback:unavailable"] == 2  # the 500 and the 503
    assert kinds["fallback:rate_limited"] == 1
    assert kinds["fallback:bad_response"] == 1 and kinds["bad_response"] == 1
    assert report["episodes"][0]["turns"] == 4
    assert report["llm"] == "openai" and report["llm_usage"]["failures"] >= 4
    assert report["llm_usage"]["circuit"]["opened"] == 0  # never three failures in a row


def test_a_hanging_server_opens_the_circuit_and_play_goes_on_offline(
    server: FakeChatServer, tmp_path: Path
) -> None:
    for _ in range(50):
        server.queue_fault("timeout", delay=1.0)
    report = play_against(server, tmp_path, turns=8, timeout=0.3)
    assert report["episodes"][0]["turns"] == 8
    circuit = report["llm_usage"]["circuit"]
    assert circuit["opened"] >= 1 and circuit["rejected"] >= 8
    assert server.request_count <= 2  # one timeout opened it; the rest never waited
    kinds = report["llm_usage"]["failures_by_kind"]
    assert kinds.get("fallback:timeout", 0) + kinds["fallback:circuit_open"] == 8


# --- exchange log, secrets, cassette ------------------------------------------------------


def test_exchange_log_has_one_line_per_call_including_failures(
    server: FakeChatServer, tmp_path: Path
) -> None:
    log = ExchangeLog(tmp_path / "run" / "llm.jsonl")
    client = make_client(server, log=log, max_retries=0)
    server.queue_text("fine", usage=(7, 2, 3))
    server.queue_fault(500)
    request = ask()

    client.complete(request)
    with pytest.raises(LLMUnavailableError):
        client.complete(request)

    ok, failed = log.read()
    assert ok["request_hash"] == request_hash(request, "gpt-test-adventurer")
    assert ok["response"]["text"] == "fine"
    assert ok["usage"] == {"input_tokens": 7, "output_tokens": 2, "cached_input_tokens": 3}
    assert failed["response"] is None and failed["error"]["type"] == "LLMUnavailableError"


def test_api_key_appears_in_no_file_log_record_or_error(
    server: FakeChatServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    run = tmp_path / "run"
    log = ExchangeLog(run / "llm.jsonl")
    real = make_client(server, log=log, max_retries=1)
    client = CassetteClient(run / "cassette.jsonl", "record", MODELS, inner=real, secrets=[KEY])
    server.queue_text(f"the key is {KEY}")  # a model that repeats what it saw
    server.queue_fault("status", status=401, message=f"Incorrect API key provided: {KEY}")

    client.complete(ask())
    with pytest.raises(LLMRequestError) as info:
        client.complete(ask(role="query"))

    files = [p for p in run.rglob("*") if p.is_file()]
    assert {p.name for p in files} == {"llm.jsonl", "cassette.jsonl"}
    for path in files:
        assert KEY not in path.read_text(encoding="utf-8"), path
    assert caplog.records, "expected the SDK and client to log at DEBUG"
    for record in caplog.records:
        assert KEY not in record.getMessage()
    assert KEY not in f"{info.value!s} {info.value!r} {real!r}"


def test_record_through_the_factory_then_replay_without_a_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = tmp_path / "cassette.jsonl"
    requests = [ask("open mailbox"), ask("read leaflet", role="summary")]
    options = factory_options(tmp_path)
    with FakeChatServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        server.queue_text("Opening the mailbox reveals a leaflet.", usage=(30, 9))
        server.queue_tool_call("look", {"direction": "up"})
        recorder = build_llm_client(f"record:{cassette}", api="openai", **options)
        assert isinstance(circuit_breaker_of(recorder), CircuitBreaker)
        assert recorder is not None
        recorded = [recorder.complete(r) for r in requests]
    player = build_llm_client(f"cassette:{cassette}", api="openai", **options)
    assert player is not None
    replayed = [player.complete(r) for r in requests]
    assert [r.model_dump_json() for r in replayed] == [r.model_dump_json() for r in recorded]
    # replayed with the Anthropic models, the recorded hashes are not found: the map matters
    other = build_llm_client(f"cassette:{cassette}", api="anthropic", **options)
    assert other is not None
    with pytest.raises(CassetteMissError):
        other.complete(requests[0])


# --- configuration -------------------------------------------------------------------------


def factory_options(tmp_path: Path, **kw: Any) -> dict[str, Any]:
    return {
        "models": {role: "claude-x" for role in ROLES},
        "base_url": None,
        "timeout": 5.0,
        "max_retries": 0,
        "log_path": tmp_path / "llm.jsonl",
        "meter": UsageMeter(),
        "openai_models": MODELS,
        **kw,
    }


def test_no_key_and_no_server_is_a_config_error_naming_openai_api_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_llm_client("openai", **factory_options(tmp_path))
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_llm_client("record:x.jsonl", api="openai", **factory_options(tmp_path))
    with pytest.raises(ConfigError, match="llm_api"):
        build_llm_client("record:x.jsonl", api="mistral", **factory_options(tmp_path))


def test_openai_models_without_every_role_fail_at_start_naming_them(tmp_path: Path) -> None:
    local = {"adventurer": "qwen3:8b", "objective": "qwen3:8b"}
    options = factory_options(
        tmp_path, openai_models=local, openai_base_url="http://127.0.0.1:9/v1"
    )
    with pytest.raises(ConfigError, match="no model for synthesis, summary, query"):
        build_llm_client("openai", **options)


def test_a_local_server_needs_its_model_names_openai_gets_its_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No openai_models: a clear error naming the setting for a local server (it was asked for
    gpt-4.1, and priced so); OpenAI's own API gets gpt-4.1 / gpt-4.1-mini."""
    local = factory_options(tmp_path, openai_models={}, openai_base_url="http://127.0.0.1:9/v1")
    needs_names = r"openai_models: the server at http://127.0.0.1:9/v1 needs its model names"
    with pytest.raises(ConfigError, match=needs_names):
        build_llm_client("openai", **local)
    with pytest.raises(ConfigError, match=needs_names):
        build_llm_client("record:x.jsonl", api="openai", **local)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # the SDK's variable too
    result = CliRunner().invoke(main, ["play", "--llm", "openai", "--workdir", str(tmp_path / "w")])
    assert isinstance(result.exception, ConfigError) and "needs its model names" in str(
        result.exception
    )
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    client = build_llm_client("openai", **factory_options(tmp_path, openai_models={}))
    assert client is not None and client.server() == "OpenAI-compatible server at https://api.openai.com/v1"
    assert client._inner.models == OPENAI_DEFAULT_MODELS  # type: ignore[attr-defined]


def test_a_local_server_is_not_priced_at_openai_list_prices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local model named like one of OpenAI's costs what `llm_prices` says, else unknown."""
    mine = {"input": 0.0, "cache_read": 0.0, "cache_write": 0.0, "output": 0.0}
    local = load_settings(
        workdir=tmp_path,
        llm="openai",
        openai_base_url="http://127.0.0.1:9/v1",
        openai_models=MODELS,
        llm_prices={"qwen3:8b": mine},
    )
    prices = build_container(local).usage_meter().prices
    assert prices.price("gpt-4.1") is None and prices.price("qwen3:8b") is not None
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1")
    official = load_settings(workdir=tmp_path, llm="openai")
    assert build_container(official).usage_meter().prices.price("gpt-4.1") is not None
    anthropic = load_settings(workdir=tmp_path, llm="anthropic", llm_base_url="http://127.0.0.1:9")
    assert build_container(anthropic).usage_meter().prices.price("claude-haiku-4-5") is not None


def test_a_local_server_from_openai_base_url_needs_no_key(
    server: FakeChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    client = build_llm_client("openai", **factory_options(tmp_path))
    assert client is not None
    assert client.complete(ask()).text == "OK" and server.request_count == 1
    assert json.loads((tmp_path / "llm.jsonl").read_text())["model"] == "gpt-test-adventurer"


def test_settings_override_the_variables_and_the_key_reaches_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeChatServer(api_key="sk-from-settings") as wanted, FakeChatServer() as elsewhere:
        monkeypatch.setenv("OPENAI_BASE_URL", elsewhere.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
        monkeypatch.setenv("CAIRN_OPENAI_API_KEY", "sk-from-settings")
        settings = load_settings(
            workdir=tmp_path, llm="openai", openai_base_url=wanted.base_url, openai_models=MODELS
        )
        client = build_container(settings).llm_client()
        assert client is not None
        assert client.complete(ask()).text == "OK"  # 401 unless the settings' key was sent
        assert (wanted.request_count, elsewhere.request_count) == (1, 0)
        assert "sk-from-settings" not in repr(settings)
        monkeypatch.delenv("CAIRN_OPENAI_API_KEY")
        from_env = build_llm_client(
            "openai", **factory_options(tmp_path, openai_base_url=wanted.base_url)
        )
        assert from_env is not None
        with pytest.raises(LLMRequestError, match="401"):
            from_env.complete(ask())  # OPENAI_API_KEY, the wrong key for this server


def test_the_chat_server_is_a_fixture_for_embedders(fake_chat_server: FakeChatServer) -> None:
    """Installing cairn gives pytest `fake_chat_server`, as it gives `fake_messages_server`."""
    import cairn.testing

    assert cairn.testing.FakeChatServer is FakeChatServer
    assert fake_chat_server.base_url.startswith("http://127.0.0.1:")
