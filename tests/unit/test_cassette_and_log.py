"""Unit tests: request hash, ExchangeLog, UsageMeter, CassetteClient and complete_structured."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from cairn.adapters.llm.cassette import CassetteClient
from cairn.adapters.llm.exchange_log import ExchangeLog, Redactor, request_hash
from cairn.adapters.llm.requests import first_prompt_line, model_for_role
from cairn.adapters.llm.usage import UsageMeter
from cairn.agents.structured import complete_structured
from cairn.errors import (
    CassetteMissError,
    ConfigError,
    LLMBadResponseError,
    LLMError,
    LLMUnavailableError,
)
from cairn.interfaces.llm import (
    ROLES,
    ILLMClient,
    LLMMessage,
    LLMRequest,
    LLMResponse,
    ToolCall,
    Usage,
)

MODELS = {role: "claude-unit" for role in ROLES}
SECRET = "sk-ant-test-SECRET123"


def ask(
    text: str = "You are in a white room.", role: str = "adventurer", **kw: object
) -> LLMRequest:
    return LLMRequest.model_validate(
        {"role": role, "system": "sys", "messages": [{"role": "user", "content": text}], **kw}
    )


def answer(
    text: str = "ok", calls: list[ToolCall] | None = None, latency: float = 12.345
) -> LLMResponse:
    return LLMResponse(
        text=text,
        tool_calls=calls or [],
        stop_reason="tool_use" if calls else "end_turn",
        usage=Usage(input_tokens=11, output_tokens=3),
        latency_ms=latency,
        model="claude-unit",
    )


class ScriptedLLM(ILLMClient):
    """Answers from a script of responses or exceptions; records every request."""

    def __init__(self, *script: LLMResponse | LLMError) -> None:
        self.script = list(script)
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        step = self.script.pop(0)
        if isinstance(step, LLMError):
            raise step
        return step


# --- request hash and prompt helpers ------------------------------------------------------


def test_request_hash_is_canonical_and_covers_every_answer_deciding_field() -> None:
    base = ask(tool_choice={"type": "tool", "name": "a"})
    same = LLMRequest.model_validate(json.loads(base.model_dump_json()))
    reordered = ask(tool_choice={"name": "a", "type": "tool"})
    assert request_hash(base, "m") == request_hash(same, "m") == request_hash(reordered, "m")
    variants = [
        (base, "other-model"),
        (base.model_copy(update={"system": "sys2"}), "m"),
        (base.model_copy(update={"temperature": 0.5}), "m"),
        (base.model_copy(update={"max_tokens": 5}), "m"),
        (base.model_copy(update={"tool_choice": None}), "m"),
        (ask("another room", tool_choice={"type": "tool", "name": "a"}), "m"),
    ]
    hashes = {request_hash(r, model) for r, model in variants}
    assert len(hashes) == len(variants)
    assert request_hash(base, "m") not in hashes
    assert len(request_hash(base, "m")) == 64


def test_role_is_not_part_of_the_hash_but_selects_the_model() -> None:
    assert request_hash(ask(role="summary"), "m") == request_hash(ask(role="query"), "m")
    with pytest.raises(ConfigError, match="'bard'"):
        model_for_role(MODELS, "bard")


def test_first_prompt_line_reads_the_first_user_text() -> None:
    blocks = [
        {"type": "tool_result", "tool_use_id": "x"},
        {"type": "text", "text": "\n look\nmore"},
    ]
    request = LLMRequest(
        role="query",
        system="s",
        messages=[
            LLMMessage(role="assistant", content="hi"),
            LLMMessage(role="user", content=blocks),
        ],
    )
    assert first_prompt_line(request) == "look"
    assert first_prompt_line(ask("")) == ""


# --- exchange log and usage ---------------------------------------------------------------


def test_exchange_log_redacts_secrets_in_raw_and_json_escaped_form(tmp_path: Path) -> None:
    quoted = 'pa"ss\\word'
    log = ExchangeLog(tmp_path / "llm.jsonl", secrets=[quoted])
    log.add_secret(SECRET)
    log.add_secret("")  # ignored, does not redact everything
    log.record(
        request=ask(f"my key is {SECRET} and {quoted}"),
        model="m",
        response=answer(f"echo {SECRET}"),
        latency_ms=5.0,
        error=None,
    )
    log.record(
        request=ask(), model="m", response=None, latency_ms=1.0, error=LLMUnavailableError(SECRET)
    )
    text = (tmp_path / "llm.jsonl").read_text(encoding="utf-8")
    assert SECRET not in text and json.dumps(quoted)[1:-1] not in text
    first, second = log.read()
    assert first["request"]["messages"][0]["content"] == "my key is [REDACTED] and [REDACTED]"
    assert first["response"]["text"] == "echo [REDACTED]"
    assert second["error"] == {"type": "LLMUnavailableError", "message": "[REDACTED]"}


def test_exchange_log_read_of_missing_file_is_empty(tmp_path: Path) -> None:
    assert ExchangeLog(tmp_path / "none" / "llm.jsonl").read() == []


def test_redactor_prefers_longest_secret() -> None:
    redact = Redactor(["abc", "abcdef"])
    assert redact("xx abcdef yy abc") == "xx [REDACTED] yy [REDACTED]"


def test_usage_meter_totals_per_role_and_is_thread_safe() -> None:
    meter = UsageMeter()

    def work() -> None:
        for _ in range(100):
            meter.record_success("summary", Usage(input_tokens=2, output_tokens=1), 1.0)
        meter.record_failure("query", 3.0)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snap = meter.snapshot()
    assert (snap["calls"], snap["failures"]) == (404, 4)
    assert (snap["input_tokens"], snap["output_tokens"]) == (800, 400)
    assert snap["by_role"]["summary"]["calls"] == 400
    assert snap["by_role"]["query"] == {
        "calls": 4,
        "failures": 4,
        "input_tokens": 0,
        "output_tokens": 0,
        "latency_ms": 12.0,
    }


# --- cassette -----------------------------------------------------------------------------


def test_cassette_replays_what_it_recorded_exactly(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    call = ToolCall(id="t1", name="look", input={"dir": "n", "nested": [1, {"a": None}]})
    inner = ScriptedLLM(answer("one", latency=1.25), answer("", [call], latency=0.1 + 0.2))
    recorder = CassetteClient(path, "record", MODELS, inner=inner)
    recorded = [recorder.complete(ask("a")), recorder.complete(ask("b", role="query"))]

    player = CassetteClient(path, "replay", MODELS)
    replayed = [player.complete(ask("a")), player.complete(ask("b", role="query"))]

    assert [r.model_dump_json() for r in replayed] == [r.model_dump_json() for r in recorded]
    assert replayed[1].latency_ms == 0.1 + 0.2
    entry = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert entry["request_hash"] == request_hash(ask("a"), "claude-unit")
    assert set(entry) == {"request_hash", "role", "model", "request", "response"}


def test_cassette_answers_repeats_in_order_then_repeats_the_last(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    recorder = CassetteClient(path, "record", MODELS, inner=ScriptedLLM(answer("1"), answer("2")))
    recorder.complete(ask())
    recorder.complete(ask())
    player = CassetteClient(path, "replay", MODELS)
    assert [player.complete(ask()).text for _ in range(3)] == ["1", "2", "2"]


def test_cassette_does_not_record_failures_and_redacts(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    inner = ScriptedLLM(LLMUnavailableError("down"), answer(f"key {SECRET}"))
    recorder = CassetteClient(path, "record", MODELS, inner=inner, secrets=[SECRET])
    with pytest.raises(LLMUnavailableError):
        recorder.complete(ask())
    recorder.complete(ask())
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and SECRET not in lines[0]


def test_cassette_miss_names_hash_and_first_prompt_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    CassetteClient(path, "record", MODELS, inner=ScriptedLLM(answer())).complete(ask())
    player = CassetteClient(path, "replay", MODELS)
    request = ask("take lamp\nand go")
    with pytest.raises(CassetteMissError, match="'take lamp'") as info:
        player.complete(request)
    assert request_hash(request, "claude-unit") in str(info.value)
    assert isinstance(info.value, LLMError)


def test_cassette_configuration_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs a real LLM client"):
        CassetteClient(tmp_path / "c.jsonl", "record", MODELS)
    with pytest.raises(ConfigError, match="no cassette"):
        CassetteClient(tmp_path / "missing.jsonl", "replay", MODELS)
    with pytest.raises(ConfigError, match="'rewind'"):
        CassetteClient(tmp_path / "c.jsonl", "rewind", MODELS)  # type: ignore[arg-type]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"request_hash": "x", "response": {"text": 1}}\nnot json\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.jsonl:1"):
        CassetteClient(bad, "replay", MODELS)


# --- structured output with a scripted client ---------------------------------------------


class Exit(BaseModel):
    """Name the exit to take."""

    direction: str
    locked: bool


def test_structured_repairs_an_answer_without_the_tool_call() -> None:
    good = ToolCall(id="t2", name="Exit", input={"direction": "north", "locked": False})
    llm = ScriptedLLM(answer("I think north."), answer("", [good]))

    result, response = complete_structured(llm, ask(tools=[]), Exit)

    assert result == Exit(direction="north", locked=False)
    assert response.tool_calls == [good]
    first, repair = llm.requests
    assert first.tool_choice == {"type": "tool", "name": "Exit"}
    assert first.tools[0].description == "Name the exit to take."
    assert repair.messages[1].content == [{"type": "text", "text": "I think north."}]
    feedback = repair.messages[2].content
    assert isinstance(feedback, list) and "no call to tool 'Exit'" in feedback[0]["text"]


def test_structured_gives_up_after_one_repair() -> None:
    bad = ToolCall(id="t1", name="Exit", input={"direction": 3})
    llm = ScriptedLLM(answer("", [bad]), answer("", [bad]))
    with pytest.raises(
        LLMBadResponseError, match=r"^Exit: .*direction: Input should be a valid string"
    ):
        complete_structured(llm, ask(), Exit)
    assert len(llm.requests) == 2
