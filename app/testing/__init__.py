"""Test doubles for embedders' own test suites (like structlog.testing)."""

from app.adapters.storage.memory_store import InMemoryStore
from app.testing.fake_game import FakeGame
from app.testing.fakes import FakeSummarizer
from app.testing.llm_server import FakeMessagesServer

__all__ = ["FakeGame", "FakeMessagesServer", "FakeSummarizer", "InMemoryStore"]
