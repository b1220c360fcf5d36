"""Pydantic domain models of cairn."""

from app.models.game import (
    GameState,
    LocationState,
    Message,
    NPCInstance,
    ScenarioInstance,
    TurnOutcome,
)
from app.models.memory import (
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
    "ScenarioInstance",
    "SynthesisDecision",
    "TurnOutcome",
]
