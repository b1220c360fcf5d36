"""Test doubles for embedders' own test suites (like structlog.testing)."""

from app.adapters.storage.memory_store import InMemoryStore
from app.testing.fakes import FakeSummarizer

__all__ = ["FakeSummarizer", "InMemoryStore"]
