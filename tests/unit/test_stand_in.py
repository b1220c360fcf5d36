"""The rule-based stand-in summarizes while the LLM circuit is open, and only then."""

from __future__ import annotations

import pytest

from cairn.agents.offline_stand_in import StandInWhileDown
from cairn.agents.summarizer import SummarizerAgent
from cairn.errors import LLMCircuitOpenError, LLMUnavailableError, SummarizerError
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse
from cairn.models.game import GameState, Message
from cairn.testing.fakes import FakeSummarizer


class Failing(ILLMClient):
    def __init__(self, error: Exception) -> None:
        self.error = error

    def complete(self, request: LLMRequest) -> LLMResponse:
        raise self.error


def messages() -> list[Message]:
    return [Message(index=0, role="player", text="open the chest", location_id=1)]


def test_while_the_circuit_is_open_the_stand_in_summarizes_and_it_is_counted() -> None:
    stand_in = FakeSummarizer()
    summarizer = StandInWhileDown(SummarizerAgent(Failing(LLMCircuitOpenError("open"))), stand_in)
    text = summarizer.summarize_location_session(GameState(), 1, messages())
    assert text == "location 1 messages [0]"
    assert summarizer.stand_in_calls == {"location": 1}


def test_a_single_failed_call_still_raises_so_the_cursor_waits_for_the_model() -> None:
    stand_in = FakeSummarizer()
    summarizer = StandInWhileDown(SummarizerAgent(Failing(LLMUnavailableError("500"))), stand_in)
    with pytest.raises(SummarizerError):
        summarizer.summarize_location_session(GameState(), 1, messages())
    assert stand_in.calls == [] and not summarizer.stand_in_calls
