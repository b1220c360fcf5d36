"""Every wait on a model server has a bound: the timeout is the whole call's, not each read's,
and a retry-after past the cap fails the call instead of sleeping (issue 37, item 3)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cairn.adapters.llm.anthropic_client import AnthropicClient
from cairn.adapters.llm.client_base import SDKClient
from cairn.adapters.llm.openai_client import OpenAIClient
from cairn.errors import LLMTimeoutError
from cairn.interfaces.llm import ROLES, LLMMessage, LLMRequest
from cairn.testing.chat_server import FakeChatServer
from cairn.testing.llm_server import FakeMessagesServer
from cairn.testing.loopback import LoopbackServer

MODELS = {role: f"model-{role}" for role in ROLES}
APIS = ["anthropic", "openai"]


@pytest.fixture(autouse=True)
def no_ambient_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(params=APIS)
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(api: str) -> Iterator[LoopbackServer]:
    with FakeMessagesServer() if api == "anthropic" else FakeChatServer() as s:
        yield s


def make_client(api: str, server: LoopbackServer, **overrides: Any) -> SDKClient:
    options: dict[str, Any] = {
        "models": MODELS,
        "base_url": server.base_url,
        "timeout": 5.0,
        "max_retries": 2,
        **overrides,
    }
    if api == "anthropic":
        return AnthropicClient(api_key="sk-ant-test", **options)
    return OpenAIClient(api_key="sk-test", **options)


def ask() -> LLMRequest:
    return LLMRequest(
        role="adventurer",
        system="You play a text game.",
        messages=[LLMMessage(role="user", content="You are in a white room.")],
    )


def test_an_answer_dripped_a_byte_at_a_time_ends_at_the_total_timeout(
    api: str, server: LoopbackServer
) -> None:
    """No read waits more than 0.2 s, so a per-read timeout of 1 s never trips; the answer
    would be whole after about 8 s. The call's budget is 1 s in all."""
    server.queue_fault("drip", interval=0.2, tail=40)
    with make_client(api, server, timeout=1.0, max_retries=2) as client:
        with pytest.raises(LLMTimeoutError, match=r"within 1\.0s in all"):
            client.complete(ask())
        assert server.dropped.wait(30), "the dripping connection was not closed"
        assert server.request_count == 1


def test_a_client_still_answers_after_a_call_ran_out_of_time(
    api: str, server: LoopbackServer
) -> None:
    server.queue_fault("drip", interval=0.2, tail=40)
    with make_client(api, server, timeout=1.0, max_retries=0) as client:
        with pytest.raises(LLMTimeoutError):
            client.complete(ask())
        assert client.complete(ask()).text == "OK"
