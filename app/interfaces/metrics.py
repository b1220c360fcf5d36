"""Read ports for run figures the play loop reports (so it imports no adapter)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

BAD_RESPONSE = "bad_response"
"""The failure kind of an answer that cannot be used (malformed, wrong schema, empty), in
`failures_by_kind` whether the client or the agent counted it."""


class UsageReader(Protocol):
    """LLM usage so far: `snapshot()` gives calls, failures, tokens and `by_role`."""

    def snapshot(self) -> dict[str, Any]:
        """Totals so far."""
        ...


class CircuitReader(Protocol):
    """The LLM circuit breaker's state: `snapshot()` gives its state and counts."""

    def snapshot(self) -> dict[str, object]:
        """The state now ("closed", "open", "half-open"), times opened, calls rejected."""
        ...


class SummarizerCounts(Protocol):
    """The memory service's summarizer figures: calls by kind, and failures."""

    @property
    def summarizer_calls(self) -> Mapping[str, int]:
        """Calls so far by kind: synthesis, location, npc, world."""
        ...

    @property
    def summary_failures(self) -> int:
        """Summarizer calls that failed (nothing stored, cursor kept)."""
        ...


class FailureRecorder(Protocol):
    """Where an agent reports each fallback it took (the failed calls themselves are counted
    by the client, unusable answers once each through `ILLMClient.report_unusable`)."""

    def record_fallback(self, kind: str) -> None:
        """A turn played on the offline stand-in after a failure of `kind`."""
        ...
