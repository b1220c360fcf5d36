"""IClock: time and ids for new memories (a system clock, or a deterministic one for replays)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class IClock(Protocol):
    """Where new memories get their time and id."""

    def now(self) -> datetime:
        """The current time (UTC)."""
        ...

    def mark(self) -> datetime:
        """A time dividing what was stamped so far from what will be, taking no reading (a
        deterministic clock does not advance): where an episode starts."""
        ...

    def new_id(self, hint: str = "") -> str:
        """A new memory id; `hint` (a title) may seed it."""
        ...
