"""AnthropicClient through the real SDK against the loopback FakeMessagesServer (no network)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from pydantic import BaseModel, Field

from cairn.adapters.llm.anthropic_client import AnthropicClient
from cairn.adapters.llm.breaker import CircuitBreaker
from cairn.adapters.llm.cassette import CassetteClient
from cairn.adapters.llm.deadline import DeadlineExceeded
from cairn.adapters.llm.exchange_log import ExchangeLog, request_hash
from cairn.adapters.llm.usage import UsageMeter
from cairn.agents.structured import complete_structured
from cairn.errors import (
    CassetteMissError,
    ConfigError,
    LLMAuthError,
    LLMBadResponseError,
    LLMCircuitOpenError,
    LLMRateLimitedError,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from cairn.interfaces.llm import (
    ROLES,
    LLMMessage,
    LLMRequest,
    ToolSpec,
)
from cairn.testing.llm_server import FakeMessagesServer

MODELS = {role: f"claude-test-{role}" for role in ROLES}
KEY = "sk-ant-test-SECRET123"


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as s:
        yield s


def make_client(server: FakeMessagesServer, **overrides: Any) -> AnthropicClient:
    options: dict[str, Any] = {
        "api_key": KEY,
        "models": MODELS,
        "base_url": server.base_url,
        "timeout": 5.0,
        "max_retries": 2,
    }
    options.update(overrides)
    return AnthropicClient(**options)


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


# --- plain calls -------------------------------------------------------------------------


def test_plain_text_answer_records_usage_and_latency(server: FakeMessagesServer) -> None:
    meter = UsageMeter()
    client = make_client(server, meter=meter)
    server.queue_text("You see a lamp.", usage=(123, 45))

    response = client.complete(ask())

    assert response.text == "You see a lamp."
    assert response.tool_calls == []
    assert response.stop_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (123, 45)
    assert response.latency_ms > 0
    assert response.model == "claude-test-adventurer"
    sent = server.requests[0]
    assert sent["model"] == "claude-test-adventurer"
    assert sent["system"] == "You play a text game."
    assert sent["messages"] == [{"role": "user", "content": "You are in a white room."}]
    assert "temperature" not in sent  # deprecated by the API; off unless asked for
    snap = meter.snapshot()
    assert (snap["calls"], snap["failures"]) == (1, 0)
    assert (snap["input_tokens"], snap["output_tokens"]) == (123, 45)
    assert snap["by_role"]["adventurer"]["input_tokens"] == 123


def test_temperature_is_sent_only_when_enabled(server: FakeMessagesServer) -> None:
    client = make_client(server, send_temperature=True)
    client.complete(ask(temperature=0.3))
    assert server.requests[0]["temperature"] == 0.3


def test_tool_use_round_trip(server: FakeMessagesServer) -> None:
    client = make_client(server)
    server.queue_tool_use("look", {"direction": "north"}, text="Let me look.", tool_id="toolu_1")
    server.queue_text("A troll blocks the way.")

    first = client.complete(ask(tools=[LOOK]))
    assert first.stop_reason == "tool_use"
    assert first.text == "Let me look."
    assert [(c.id, c.name, c.input) for c in first.tool_calls] == [
        ("toolu_1", "look", {"direction": "north"})
    ]
    assert server.requests[0]["tools"][0]["name"] == "look"

    follow_up = ask(tools=[LOOK])
    follow_up.messages += [
        LLMMessage(
            role="assistant",
            content=[
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "look",
                    "input": {"direction": "north"},
                }
            ],
        ),
        LLMMessage(
            role="user",
            content=[{"type": "tool_result", "tool_use_id": "toolu_1", "content": "A troll."}],
        ),
    ]
    second = client.complete(follow_up)
    assert second.text == "A troll blocks the way."
    assert server.requests[1]["messages"][2]["content"][0]["type"] == "tool_result"


def test_unknown_role_is_a_config_error(server: FakeMessagesServer) -> None:
    client = make_client(server)
    with pytest.raises(ConfigError, match="'poet'"):
        client.complete(ask(role="poet"))
    assert server.request_count == 0


# --- retries and failures ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["429", "529", "500"])
def test_transient_fault_is_retried_then_answered(server: FakeMessagesServer, kind: str) -> None:
    client = make_client(server, max_retries=2)
    server.queue_fault(kind, retry_after=0.01)
    server.queue_text("second time lucky")

    response = client.complete(ask())

    assert response.text == "second time lucky"
    assert server.request_count == 2
    assert server.requests[0] == server.requests[1]


def test_retry_after_is_honoured(server: FakeMessagesServer) -> None:
    client = make_client(server, max_retries=1)
    server.queue_fault(429, retry_after=0.3)
    start = time.perf_counter()
    client.complete(ask())
    assert time.perf_counter() - start >= 0.3
    assert server.request_count == 2


def test_timeout_raises_llm_timeout_error(server: FakeMessagesServer) -> None:
    meter = UsageMeter()
    client = make_client(server, timeout=0.5, max_retries=0, meter=meter)
    server.queue_fault("slow", delay=1.5)
    start = time.perf_counter()
    with pytest.raises(LLMTimeoutError, match=r"0\.5s") as info:
        client.complete(ask())
    assert time.perf_counter() - start < 1.4
    # the total deadline or the SDK's read timeout, whichever ends first
    assert isinstance(info.value.__cause__, (anthropic.APITimeoutError, DeadlineExceeded))
    assert meter.snapshot()["failures"] == 1


@pytest.mark.parametrize("opts", [{}, {"shape": "wrong"}])
def test_malformed_body_raises_bad_response(
    server: FakeMessagesServer, opts: dict[str, Any]
) -> None:
    client = make_client(server)
    server.queue_fault("malformed", **opts)
    with pytest.raises(LLMBadResponseError, match="malformed answer body"):
        client.complete(ask())
    assert server.request_count == 1


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": -5, "output_tokens": 3},
        {"input_tokens": 5, "output_tokens": -1},
        {"input_tokens": 5, "output_tokens": 3, "cache_read_input_tokens": -100},
        {"input_tokens": 5, "output_tokens": 3, "cache_creation_input_tokens": -1},
        {"input_tokens": 5.0, "output_tokens": 3},
        {"input_tokens": "5", "output_tokens": 3},
        {"input_tokens": True, "output_tokens": 3},
        {"input_tokens": 10**12, "output_tokens": 3},
    ],
    ids=[
        "negative-in",
        "negative-out",
        "negative-read",
        "negative-write",
        "float",
        "text",
        "bool",
        "absurd",
    ],
)
def test_token_counts_that_are_not_plain_counts_make_the_answer_unusable(
    server: FakeMessagesServer, usage: dict[str, Any]
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
    assert snapshot["cost"]["tokens"] == {
        "input": 0,
        "cache_read": 0,
        "cache_write": 0,
        "output": 0,
    }


def test_persistent_529_raises_unavailable(server: FakeMessagesServer) -> None:
    client = make_client(server, max_retries=2)
    for _ in range(3):
        server.queue_fault(529, retry_after=0.01)
    with pytest.raises(LLMUnavailableError, match="529 overloaded_error") as info:
        client.complete(ask())
    assert server.request_count == 3
    assert isinstance(info.value.__cause__, anthropic.APIStatusError)


def test_persistent_429_raises_rate_limited(server: FakeMessagesServer) -> None:
    client = make_client(server, max_retries=1)
    for _ in range(2):
        server.queue_fault(429)
    with pytest.raises(LLMRateLimitedError, match="429 rate_limit_error") as info:
        client.complete(ask())
    assert server.request_count == 2
    assert isinstance(info.value.__cause__, anthropic.RateLimitError)


def test_rejected_request_is_not_retried(server: FakeMessagesServer) -> None:
    client = make_client(server, max_retries=2)
    server.queue_fault("status", status=400, message="messages: field required")
    with pytest.raises(LLMRequestError, match="400 invalid_request_error"):
        client.complete(ask())
    assert server.request_count == 1


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_opens_the_circuit_at_once(server: FakeMessagesServer, status: int) -> None:
    """A bad key will not fix itself: no second request goes out (38 of 38 went before)."""
    breaker = CircuitBreaker(make_client(server, max_retries=2))
    for _ in range(38):
        server.queue_fault("status", status=status, message="invalid x-api-key")
    with pytest.raises(LLMAuthError, match=f"HTTP {status}"):
        breaker.complete(ask())
    for _ in range(37):
        with pytest.raises(LLMCircuitOpenError):
            breaker.complete(ask())
    assert server.request_count == 1 and breaker.snapshot()["opened"] == 1


def test_unusable_structured_answers_open_the_circuit(server: FakeMessagesServer) -> None:
    """200s in words where the tool was forced: each answer counts as a failed call."""
    meter = UsageMeter()
    breaker = CircuitBreaker(make_client(server, meter=meter))
    for _ in range(38):
        server.queue_text("I would go north.")
    with pytest.raises(LLMBadResponseError):
        complete_structured(breaker, ask(), Decision)
    assert breaker.state == "closed"
    with pytest.raises(LLMCircuitOpenError):  # the third unusable answer opened it
        complete_structured(breaker, ask(), Decision)  # and its repair was not sent
    assert breaker.state == "open" and server.request_count == 3
    assert meter.snapshot()["failures_by_kind"] == {"bad_response": 3}
    assert meter.snapshot()["failures"] == 3


def test_connection_refused_raises_unavailable() -> None:
    with FakeMessagesServer() as gone:
        url = gone.base_url
    client = AnthropicClient(api_key=KEY, models=MODELS, base_url=url, timeout=2.0, max_retries=0)
    with pytest.raises(LLMUnavailableError, match="connection failed"):
        client.complete(ask())


# --- structured output -------------------------------------------------------------------


def test_structured_valid_answer(server: FakeMessagesServer) -> None:
    client = make_client(server)
    server.queue_tool_use("Decision", {"should_remember": True, "title": "Lamp", "importance": 4})

    decision, response = complete_structured(client, ask(role="synthesis"), Decision)

    assert decision == Decision(should_remember=True, title="Lamp", importance=4)
    assert response.stop_reason == "tool_use"
    sent = server.requests[0]
    assert sent["tool_choice"] == {"type": "tool", "name": "Decision"}
    assert [t["name"] for t in sent["tools"]] == ["Decision"]
    assert sent["tools"][0]["input_schema"] == Decision.model_json_schema()


def test_structured_invalid_then_repaired(server: FakeMessagesServer) -> None:
    client = make_client(server)
    server.queue_tool_use(
        "Decision", {"should_remember": True, "title": "", "importance": 40}, tool_id="t1"
    )
    server.queue_tool_use("Decision", {"should_remember": True, "title": "Lamp", "importance": 9})

    decision, _ = complete_structured(client, ask(role="synthesis"), Decision)

    assert decision.importance == 9
    assert server.request_count == 2
    repair = server.requests[1]["messages"]
    assert repair[1]["role"] == "assistant"
    assert repair[1]["content"][0]["id"] == "t1"
    result = repair[2]["content"][0]
    assert (result["type"], result["tool_use_id"], result["is_error"]) == (
        "tool_result",
        "t1",
        True,
    )
    assert "importance" in result["content"] and "title" in result["content"]


def test_structured_invalid_twice_raises(server: FakeMessagesServer) -> None:
    client = make_client(server)
    server.queue_tool_use("Decision", {"should_remember": "maybe"})
    server.queue_tool_use("Decision", {"title": "x"})

    with pytest.raises(LLMBadResponseError, match=r"Decision: .*should_remember: Field required"):
        complete_structured(client, ask(role="synthesis"), Decision)
    assert server.request_count == 2


# --- exchange log, secrets, cassette -------------------------------------------------------


def test_exchange_log_has_one_line_per_call_including_failures(
    server: FakeMessagesServer, tmp_path: Path
) -> None:
    log = ExchangeLog(tmp_path / "run" / "llm.jsonl")
    client = make_client(server, log=log, max_retries=0)
    server.queue_text("fine", usage=(7, 2))
    server.queue_fault(500)
    request = ask()

    client.complete(request)
    with pytest.raises(LLMUnavailableError):
        client.complete(request)

    lines = (tmp_path / "run" / "llm.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    ok, failed = (json.loads(line) for line in lines)
    assert ok["role"] == "adventurer" and ok["model"] == "claude-test-adventurer"
    assert ok["request_hash"] == request_hash(request, "claude-test-adventurer")
    assert ok["request"]["messages"][0]["content"] == "You are in a white room."
    assert ok["response"]["text"] == "fine"
    assert ok["usage"] == {"input_tokens": 7, "output_tokens": 2}
    assert ok["error"] is None and ok["latency_ms"] > 0
    assert failed["response"] is None and failed["usage"] is None
    assert failed["error"]["type"] == "LLMUnavailableError"
    assert failed["request_hash"] == ok["request_hash"]


def test_api_key_appears_in_no_file_log_record_or_error(
    server: FakeMessagesServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    run = tmp_path / "run"
    log = ExchangeLog(run / "llm.jsonl")
    meter = UsageMeter()
    real = make_client(server, log=log, meter=meter, max_retries=1)
    client = CassetteClient(run / "cassette.jsonl", "record", MODELS, inner=real, secrets=[KEY])
    server.queue_text("hello")
    server.queue_tool_use("Decision", {"should_remember": False, "title": "t", "importance": 1})
    # an error answer that quotes the key back, as a proxy might
    server.queue_fault("status", status=401, message=f"invalid x-api-key {KEY}")
    server.queue_fault(429, retry_after=0.01)
    server.queue_fault(429, retry_after=0.01)

    client.complete(ask())
    complete_structured(client, ask(role="synthesis"), Decision)
    errors: list[str] = []
    for _ in range(2):
        try:
            client.complete(ask(role="query"))
        except (LLMRequestError, LLMRateLimitedError) as e:
            errors.append(f"{e!s} {e!r}")
    (run / "usage.json").write_text(json.dumps(meter.snapshot()), encoding="utf-8")

    assert len(errors) == 2 and "[REDACTED]" in errors[0]
    files = [p for p in run.rglob("*") if p.is_file()]
    assert {p.name for p in files} == {"llm.jsonl", "cassette.jsonl", "usage.json"}
    for path in files:
        assert KEY not in path.read_text(encoding="utf-8"), path
    assert len(log.read()) == 4
    assert caplog.records, "expected the SDK and client to log at DEBUG"
    for record in caplog.records:
        assert KEY not in record.getMessage()
        assert KEY not in (caplog.handler.format(record) if record.exc_info else "")
    assert KEY not in repr(real)
    for text in errors:
        assert KEY not in text


def test_cassette_records_then_replays_without_server(tmp_path: Path) -> None:
    cassette = tmp_path / "cassette.jsonl"
    requests = [ask("open mailbox"), ask("read leaflet", role="summary"), ask("open mailbox")]
    with FakeMessagesServer() as server:
        server.queue_text("Opening the mailbox reveals a leaflet.", usage=(30, 9))
        server.queue_tool_use("look", {"direction": "up"})
        server.queue_text("It is already open.", usage=(31, 6))
        recorder = CassetteClient(cassette, "record", MODELS, inner=make_client(server))
        recorded = [recorder.complete(r) for r in requests]
        assert server.request_count == 3

    player = CassetteClient(cassette, "replay", MODELS)
    replayed = [player.complete(r) for r in requests]

    assert [r.model_dump_json() for r in replayed] == [r.model_dump_json() for r in recorded]
    assert replayed[0].text != replayed[2].text  # same request, answered in recorded order
    assert replayed[1].tool_calls[0].input == {"direction": "up"}


def test_cassette_miss_names_hash_and_prompt_line(tmp_path: Path) -> None:
    cassette = tmp_path / "cassette.jsonl"
    with FakeMessagesServer() as server:
        CassetteClient(cassette, "record", MODELS, inner=make_client(server)).complete(ask())
    player = CassetteClient(cassette, "replay", MODELS)
    unseen = ask("go west\nthen north")
    with pytest.raises(CassetteMissError) as info:
        player.complete(unseen)
    message = str(info.value)
    assert request_hash(unseen, MODELS["adventurer"]) in message
    assert "'go west'" in message and "north" not in message


def test_fake_server_refuses_unknown_fault_kinds(server: FakeMessagesServer) -> None:
    with pytest.raises(ValueError, match="'418'"):
        server.queue_fault(418)
    assert server.request_count == 0
