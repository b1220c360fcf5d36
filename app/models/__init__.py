"""Pydantic domain models of cairn."""

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

__all__ = [
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
