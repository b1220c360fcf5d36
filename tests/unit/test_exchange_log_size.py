"""llm.jsonl grows with what is new, not with the conversation resent each turn (issue 37,
item 3: 5 MB answers grew it to 635 MB in 16 turns)."""

from __future__ import annotations

import json
from pathlib import Path

from cairn.adapters.llm.exchange_log import LOG_TEXT_LIMIT, ExchangeLog, request_hash
from cairn.interfaces.llm import LLMMessage, LLMRequest, LLMResponse, Usage

TURNS = 16
ANSWER = 200_000  # characters of each answer (the were 5 MB)


def answer(turn: int) -> str:
    return f"turn {turn}: " + "x" * ANSWER


def play(log: ExchangeLog) -> list[LLMRequest]:
    """16 turns of a conversation that resends every earlier answer with each request."""
    messages: list[LLMMessage] = []
    sent: list[LLMRequest] = []
    for turn in range(TURNS):
        messages.append(LLMMessage(role="user", content=f"What now? ({turn})"))
        request = LLMRequest(role="adventurer", system="Play.", messages=list(messages))
        text = answer(turn)
        response = LLMResponse(
            text=text,
            tool_calls=[],
            stop_reason="end_turn",
            usage=Usage(input_tokens=1, output_tokens=1),
            latency_ms=1.0,
            model="m",
        )
        log.record(request=request, model="m", response=response, latency_ms=1.0, error=None)
        messages.append(LLMMessage(role="assistant", content=text))
        sent.append(request)
    return sent


def test_the_log_holds_each_message_once_and_cuts_long_texts(tmp_path: Path) -> None:
    play(ExchangeLog(tmp_path / "llm.jsonl"))

    size = (tmp_path / "llm.jsonl").stat().st_size
    # each answer twice at most (as the answer, then as a message), each cut to the limit;
    # resent whole it was 16 * 15 / 2 * 200 KB = 24 MB
    assert size < 2 * TURNS * (LOG_TEXT_LIMIT + 1000)
    last = json.loads((tmp_path / "llm.jsonl").read_text().splitlines()[-1])
    # only the last answer (now a message) and the new question are new
    assert [m.get("ref") is not None for m in last["request"]["messages"]] == [True] * 29 + [
        False,
        False,
    ]
    assert "characters cut from the log" in last["response"]["text"]


def test_read_gives_every_request_back_whole(tmp_path: Path) -> None:
    log = ExchangeLog(tmp_path / "llm.jsonl")
    sent = play(log)

    entries = log.read()
    assert len(entries) == TURNS
    for entry, request in zip(entries, sent, strict=True):
        assert entry["request_hash"] == request_hash(request, "m")
        messages = entry["request"]["messages"]
        assert [m["role"] for m in messages] == [m.role for m in request.messages]
        assert all("ref" not in m and "hash" not in m for m in messages)
        assert messages[0]["content"] == request.messages[0].content
    assert entries[-1]["request"]["messages"][-2]["content"].startswith("turn 14: xxx")
