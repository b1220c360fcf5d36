"""pytest fixtures for engines that embed cairn (loaded through the `pytest11` entry point
when cairn is installed; `-p no:cairn` turns them off).

- `cairn_container`: a container on a temporary workdir with an `InMemoryStore` and a
  `FakeSummarizer` (both reachable as `cairn_container.store()` and
  `cairn_container.summarizer()`), offline: no files, no model, no network.
- `fake_game`: a `FakeGame`, the small scripted text adventure cairn's own tests play.
- `fake_messages_server`: a local HTTP server speaking the Anthropic Messages API on
  127.0.0.1 (queue answers and faults on it; point `llm_base_url` at `.base_url`).
- `fake_chat_server`: the same for OpenAI's Chat Completions (`--llm openai`; point
  `openai_base_url` at `.base_url`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.testing.chat_server import FakeChatServer
from cairn.testing.fake_game import FakeGame
from cairn.testing.fakes import FakeSummarizer
from cairn.testing.llm_server import FakeMessagesServer


@pytest.fixture
def cairn_container(tmp_path: Path) -> Any:
    """An offline container with an in-memory store and a scripted summarizer."""
    from cairn.container import build_container

    return build_container(
        workdir=tmp_path / "cairn",
        store=InMemoryStore(),
        summarizer=FakeSummarizer(),
        llm="offline",
    )


@pytest.fixture
def fake_game() -> FakeGame:
    """A fresh FakeGame (reset it to start an episode)."""
    return FakeGame()


@pytest.fixture
def fake_messages_server() -> Iterator[FakeMessagesServer]:
    """A local Messages API server, stopped after the test."""
    with FakeMessagesServer() as server:
        yield server


@pytest.fixture
def fake_chat_server() -> Iterator[FakeChatServer]:
    """A local Chat Completions server, stopped after the test."""
    with FakeChatServer() as server:
        yield server
