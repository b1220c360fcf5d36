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
    "MemoryStatus",
    "Message",
    "NPCInstance",
    "ParseProblem",
    "ScenarioInstance",
    "SynthesisDecision",
    "TurnOutcome",
]
