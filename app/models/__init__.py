"""Pydantic domain models of cairn.

The names below are imported on first use (PEP 562), so a command that needs only the memory
models does not build the game models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
        "cairn.models.game",
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
        "cairn.models.memory",
    ),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cairn.models' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


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
