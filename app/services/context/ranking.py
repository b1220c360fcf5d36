"""How memory builders rank memories and tell a visit summary from an action's memory."""

from __future__ import annotations

from cairn.models.memory import MemoryEntry, MemorySource

_Ranked = tuple[int, MemoryEntry]
"""A memory with its position in the oldest-first query answer (higher = newer)."""


def _by_importance_then_recency(item: _Ranked) -> tuple[int, int]:
    return (item[1].importance, item[0])


def is_visit_summary(entry: MemoryEntry) -> bool:
    """A "Visit to ..." summary of the messages at a location (not an action's memory)."""
    return entry.source is MemorySource.VISIT
