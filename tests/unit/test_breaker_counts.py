"""CircuitBreaker: what counts towards opening it (issue 37 item 14: it stayed closed through
38 of 38 unusable answers or 401s)."""

from __future__ import annotations

import pytest

from cairn.adapters.llm.breaker import CircuitBreaker
from cairn.errors import (
    LLMAuthError,
    LLMBadResponseError,
    LLMCircuitOpenError,
    LLMError,
    LLMRequestError,
    LLMUnavailableError,
)
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse, Usage

REQUEST = LLMRequest(role="adventurer", system="s", messages=[])


class Scripted(ILLMClient):
    """Answers "ok" or raises the next scripted error; counts the calls it got."""

    def __init__(self, *answers: LLMError | str) -> None:
        self.answers = list(answers)
        self.calls = 0

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        answer = self.answers.pop(0) if self.answers else "ok"
        if isinstance(answer, Exception):
            raise answer
        return LLMResponse(
            text=answer,
            tool_calls=[],
            stop_reason="end_turn",
            usage=Usage(input_tokens=1, output_tokens=1),
            latency_ms=1.0,
            model="m",
        )


def breaker_over(inner: Scripted, now: list[float]) -> CircuitBreaker:
    return CircuitBreaker(inner, threshold=3, cooldown=60, clock=lambda: now[0])


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_opens_the_circuit_at_once(status: int) -> None:
    inner = Scripted(LLMAuthError(f"HTTP {status}"))
    breaker = breaker_over(inner, [0.0])
    with pytest.raises(LLMAuthError):
        breaker.complete(REQUEST)
    assert breaker.state == "open"
    with pytest.raises(LLMCircuitOpenError):
        breaker.complete(REQUEST)
    assert inner.calls == 1


def test_malformed_answers_count_towards_the_threshold() -> None:
    inner = Scripted(*[LLMBadResponseError("malformed answer body")] * 3)
    breaker = breaker_over(inner, [0.0])
    for _ in range(2):
        with pytest.raises(LLMBadResponseError):
            breaker.complete(REQUEST)
        assert breaker.state == "closed"
    with pytest.raises(LLMBadResponseError):
        breaker.complete(REQUEST)
    assert breaker.state == "open" and breaker.opened == 1


def test_answers_reported_unusable_count_though_the_call_succeeded() -> None:
    inner = Scripted()
    breaker = breaker_over(inner, [0.0])
    for _ in range(2):
        breaker.complete(REQUEST)
        breaker.report_unusable(REQUEST)
        assert breaker.state == "closed"
    breaker.complete(REQUEST)
    breaker.report_unusable(REQUEST)
    assert breaker.state == "open"
    with pytest.raises(LLMCircuitOpenError):
        breaker.complete(REQUEST)
    assert inner.calls == 3


def test_a_usable_answer_still_resets_the_count() -> None:
    breaker = breaker_over(Scripted(), [0.0])
    for _ in range(5):
        breaker.complete(REQUEST)
        breaker.report_unusable(REQUEST)
        breaker.complete(REQUEST)  # usable: nothing reported
    assert breaker.state == "closed" and breaker.opened == 0


def test_a_half_open_probe_with_an_unusable_answer_opens_it_again() -> None:
    now = [0.0]
    breaker = breaker_over(Scripted(LLMAuthError("HTTP 401")), now)
    with pytest.raises(LLMAuthError):
        breaker.complete(REQUEST)
    now[0] = 61.0
    breaker.complete(REQUEST)  # the probe: answered
    assert breaker.state == "closed"
    breaker.report_unusable(REQUEST)
    assert breaker.state == "open" and breaker.opened == 2


def test_timeouts_and_5xx_keep_their_rules_and_a_400_does_not_count() -> None:
    inner = Scripted(
        LLMUnavailableError("500"),
        LLMUnavailableError("503"),
        LLMRequestError("HTTP 400"),
        LLMRequestError("HTTP 400"),
    )
    breaker = breaker_over(inner, [0.0])
    for _ in range(2):
        with pytest.raises(LLMUnavailableError):
            breaker.complete(REQUEST)
    for _ in range(2):
        with pytest.raises(LLMRequestError):
            breaker.complete(REQUEST)
    assert breaker.state == "closed"


def test_a_half_open_probe_that_fails_opens_it_again_below_the_threshold() -> None:
    """Opened by one refused key (one failure, under the threshold of 3), the probe's 500 is
    the second failure only: the circuit opens again all the same, for a new cooldown."""
    now = [0.0]
    breaker = breaker_over(Scripted(LLMAuthError("HTTP 401"), LLMUnavailableError("500")), now)
    with pytest.raises(LLMAuthError):
        breaker.complete(REQUEST)
    now[0] = 61.0
    assert breaker.state == "half-open"
    with pytest.raises(LLMUnavailableError):
        breaker.complete(REQUEST)  # the probe fails
    assert breaker.state == "open" and breaker.opened == 2
    with pytest.raises(LLMCircuitOpenError):
        breaker.complete(REQUEST)
