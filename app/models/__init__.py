"""Pydantic domain models of cairn.

The names below are imported on first use (PEP 562), so a command that needs only the memory
models does not build the game models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.lazy_names import lazy_getattr

if TYPE_CHECKING:
    from cairn.models.episode import EpisodeStats
    from cairn.models.game import (
        GameState,
        LocationState,
        Message,
        NPCInstance,
        QuestState,
        ScenarioInstance,
        TurnOutcome,
    )
    from cairn.models.memory import (
        LocationRecord,
        MemoryCategory,
        MemoryEntry,
        MemoryScope,
        MemorySource,
        MemoryStatus,
        ParseProblem,
        SynthesisDecision,
    )

_HOMES = {
    "EpisodeStats": "episode",
    **dict.fromkeys(
        (
            "GameState",
            "LocationState",
            "Message",
            "NPCInstance",
            "QuestState",
            "ScenarioInstance",
            "TurnOutcome",
        ),
        "game",
    ),
    **dict.fromkeys(
        (
            "LocationRecord",
            "MemoryCategory",
            "MemoryEntry",
            "MemoryScope",
            "MemorySource",
            "MemoryStatus",
            "ParseProblem",
            "SynthesisDecision",
        ),
        "memory",
    ),
}


__getattr__ = lazy_getattr("cairn.models", _HOMES)

__all__ = [
    "EpisodeStats",
    "GameState",
    "LocationRecord",
    "LocationState",
    "MemoryCategory",
    "MemoryEntry",
    "MemoryScope",
    "MemorySource",
    "MemoryStatus",
    "Message",
    "NPCInstance",
    "ParseProblem",
    "QuestState",
    "ScenarioInstance",
    "SynthesisDecision",
    "TurnOutcome",
]
