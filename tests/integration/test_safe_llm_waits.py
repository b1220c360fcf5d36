"""Every wait on a model server has a bound: the timeout is the whole call's, not each read's,
and a retry-after past the cap fails the call instead of sleeping (issue 37, item 3)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cairn.adapters.llm.anthropic_client import AnthropicClient
from cairn.adapters.llm.client_base import SDKClient
from cairn.adapters.llm.openai_client import OpenAIClient
from cairn.errors import ConfigError, LLMRateLimitedError, LLMTimeoutError, LLMUnavailableError
from cairn.interfaces.llm import ROLES, LLMMessage, LLMRequest
from cairn.settings import load_settings
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


@pytest.mark.parametrize("retry_after", [90, 100000])
def test_a_retry_after_over_the_cap_fails_the_call_at_once(
    api: str, server: LoopbackServer, retry_after: int
) -> None:
    """Anthropic's SDK would sleep 100000 s and OpenAI's 90 s; the budget (5 s) would end it
    as a timeout. Over the cap (60 s by default) the call fails as rate limited, unretried."""
    server.queue_fault("429", retry_after=retry_after)
    over = r"retry-after \d+ s is over llm_max_retry_after"
    client = make_client(api, server, timeout=5.0, max_retries=2)
    with client, pytest.raises(LLMRateLimitedError, match=over):
        client.complete(ask())
    assert server.request_count == 1


def test_a_retry_after_within_the_cap_is_waited_for(api: str, server: LoopbackServer) -> None:
    server.queue_fault("429", retry_after=0.05)
    with make_client(api, server, max_retry_after=0.1) as client:
        assert client.complete(ask()).text == "OK"
    assert server.request_count == 2


def test_a_server_error_asking_for_a_long_wait_fails_at_once(
    api: str, server: LoopbackServer
) -> None:
    server.queue_fault("500", retry_after=3600)
    client = make_client(api, server, max_retry_after=60)
    with client, pytest.raises(LLMUnavailableError, match="retry-after 3600 s"):
        client.complete(ask())
    assert server.request_count == 1


def test_the_cap_is_a_setting_checked_at_start(api: str, server: LoopbackServer) -> None:
    with pytest.raises(ConfigError, match="llm_max_retry_after"):
        make_client(api, server, max_retry_after=-1)
    assert load_settings(llm_max_retry_after=5).llm_max_retry_after == 5
