"""InMemoryStore: a non-durable IMemoryStore for tests and embedders' test suites."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cairn.adapters.storage.cached_store import CachedStore
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.adapters.storage.store_ops import StoreOp


class InMemoryStore(CachedStore):
    """Keeps everything in process memory; commits are all-or-nothing like the real stores."""

    def __init__(self) -> None:
        super().__init__()
        self.commits = 0

    @property
    def path(self) -> Path:
        return Path(":memory:")

    def _commit(self, ops: Sequence[StoreOp]) -> MemoryCache:
        self._cache.apply_all(ops)
        self.commits += 1
        return self._cache

    def reload(self) -> None:
        """Nothing to re-read."""

    def close(self) -> None:
        """Nothing to release."""
