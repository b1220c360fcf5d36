"""Test doubles for embedders' own test suites (like structlog.testing)."""

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.testing.chat_server import FakeChatServer
from cairn.testing.fake_game import FakeGame
from cairn.testing.fakes import FakeSummarizer
from cairn.testing.llm_server import FakeMessagesServer
from cairn.testing.postgres_server import PostgresServer

__all__ = [
    "FakeChatServer",
    "FakeGame",
    "FakeMessagesServer",
    "FakeSummarizer",
    "InMemoryStore",
    "PostgresServer",
]
