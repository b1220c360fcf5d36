"""Clocks: where memory ids and timestamps come from (system, or deterministic for replays)."""

from __future__ import annotations

import hashlib
import itertools
from datetime import UTC, datetime, timedelta

from cairn.models.memory import new_memory_id, utc_now


class SystemClock:
    """Wall-clock time and random ids."""

    def now(self) -> datetime:
        """The current UTC time."""
        return utc_now()

    def mark(self) -> datetime:
        """A time that divides what was stamped so far from what will be: nothing stamped
        before is later, nothing stamped after is earlier. Unlike `now`, it is no reading (a
        deterministic clock does not advance)."""
        return utc_now()

    def new_id(self, hint: str = "") -> str:
        """A random memory id."""
        return new_memory_id()


class DeterministicClock(SystemClock):
    """A fixed start time that advances one second per reading, and ids derived from a seed.

    Two runs with the same seed and the same inputs produce byte-identical memory files.
    Ids mix the seed, a counter and the caller's hint (the memory title), so runs appending
    to one store with the same seed still get distinct ids for distinct memories.
    """

    def __init__(self, seed: int = 0, start: datetime | None = None) -> None:
        self._seed = seed
        self._start = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._ticks = 0
        self._ids = itertools.count()

    def now(self) -> datetime:
        stamp = self._start + timedelta(seconds=self._ticks)
        self._ticks += 1
        return stamp

    def mark(self) -> datetime:
        """The time the next reading will give (see `SystemClock.mark`)."""
        return self._start + timedelta(seconds=self._ticks)

    def new_id(self, hint: str = "") -> str:
        digest = hashlib.sha256(f"{self._seed}:{next(self._ids)}:{hint}".encode()).hexdigest()
        return "m-" + digest[:12]
