"""A scripted model behind either loopback server (Anthropic Messages or OpenAI-compatible Chat
Completions), so a play test runs the same on both APIs: the request read the same way, the
answer queued in the API's own form."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from cairn.interfaces.llm import ROLES
from cairn.settings import CairnSettings, load_settings
from cairn.testing.chat_server import FakeChatServer
from cairn.testing.llm_server import FakeMessagesServer

APIS = ("anthropic", "openai")
OPENAI_MODELS = {role: f"local-{role}" for role in ROLES}
"""A local server's model names (no list price)."""

Server = FakeMessagesServer | FakeChatServer


class Request:
    """One request as either API sent it: the tools offered, the one forced, the whole text."""

    def __init__(self, api: str, body: dict[str, Any]) -> None:
        self.api = api
        self.body = body
        tools = body.get("tools") or []
        self.offered = [t["name"] if api == "anthropic" else t["function"]["name"] for t in tools]
        choice = body.get("tool_choice")
        if api == "anthropic":
            self.forced = choice.get("name") if isinstance(choice, dict) else None
        else:
            self.forced = self.offered[0] if choice == "required" and len(tools) == 1 else None
        self.text = json.dumps(body)


Answer = Callable[[Request], "tuple[str, Any] | str"]
"""A request's answer: (tool, input) for a tool call, a string for text."""


def answer_with(api: str, script: Answer) -> Callable[[Any, dict[str, Any]], None]:
    """The server's responder: `script` decides, the answer is queued in the API's form."""

    def respond(server: Any, body: dict[str, Any]) -> None:
        answer = script(Request(api, body))
        if isinstance(answer, str):
            server.queue_text(answer)
        elif api == "anthropic":
            server.queue_tool_use(*answer)
        else:
            server.queue_tool_call(*answer)

    return respond


@contextmanager
def model_server(api: str, script: Answer | None = None) -> Iterator[Server]:
    """A loopback server of `api` answering by `script` (None: its default text)."""
    server: Server = FakeMessagesServer() if api == "anthropic" else FakeChatServer()
    if script is not None:
        server.responder = answer_with(api, script)
    with server:
        yield server


def model_settings(
    api: str, base_url: str, monkeypatch: pytest.MonkeyPatch, **overrides: Any
) -> CairnSettings:
    """Settings that play against the server at `base_url` with `api`'s adapter (no retries)."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    options: dict[str, Any] = {"llm": api, "llm_max_retries": 0, "llm_timeout": 5.0}
    if api == "anthropic":
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        options["llm_base_url"] = base_url
    else:
        options["openai_base_url"] = base_url
        options["openai_models"] = OPENAI_MODELS
    return load_settings(**{**options, **overrides})
