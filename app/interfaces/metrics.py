"""Read ports for run figures the play loop reports (so it imports no adapter)."""

from __future__ import annotations

from typing import Any, Protocol


class UsageReader(Protocol):
    """LLM usage so far: `snapshot()` gives calls, failures, tokens and `by_role`."""

    def snapshot(self) -> dict[str, Any]:
        """Totals so far."""
        ...
