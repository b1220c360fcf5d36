"""IClock: time and ids for new memories (a system clock, or a deterministic one for replays)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class IClock(Protocol):
    """Where new memories get their time and id."""

    def now(self) -> datetime:
        """The current time (UTC)."""
        ...

    def new_id(self, hint: str = "") -> str:
        """A new memory id; `hint` (a title) may seed it."""
        ...
