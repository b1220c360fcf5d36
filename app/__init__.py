"""cairn: location-keyed memory for LLM game agents and narrative engines.

The composition root is `cairn.container.build_container`; these are the names an embedding
engine uses with it: the commands it sends, the state it owns, what it reads back, the memory
API and the errors. They are imported on first use, so `import cairn` (and `cairn --help`)
stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if __name__ != "cairn":  # this folder, imported by its own name (`import app...`)
    raise ImportError(
        f"cairn's package is imported as `cairn` (this folder, {__path__[0]}, is its source):"
        f" `import {__name__}` would load a second copy of every module"
    )

if TYPE_CHECKING:
    from cairn.errors import CairnError
    from cairn.events import commands
    from cairn.memory_api import Memory, SearchHit
    from cairn.models.checkpoint import MemoryCheckpoint, RestoreReport
    from cairn.models.game import GameState, LocationState, Message, NPCInstance, TurnOutcome
    from cairn.models.memory import (
        MemoryCategory,
        MemoryEntry,
        MemoryScope,
        MemorySource,
        MemoryStatus,
    )

_WHERE = {
    "CairnError": "cairn.errors",
    "GameState": "cairn.models.game",
    "LocationState": "cairn.models.game",
    "Memory": "cairn.memory_api",
    "MemoryCheckpoint": "cairn.models.checkpoint",
    "MemoryCategory": "cairn.models.memory",
    "MemoryEntry": "cairn.models.memory",
    "MemoryScope": "cairn.models.memory",
    "MemorySource": "cairn.models.memory",
    "MemoryStatus": "cairn.models.memory",
    "Message": "cairn.models.game",
    "NPCInstance": "cairn.models.game",
    "RestoreReport": "cairn.models.checkpoint",
    "SearchHit": "cairn.memory_api",
    "TurnOutcome": "cairn.models.game",
}

__all__ = [
    "CairnError",
    "GameState",
    "LocationState",
    "Memory",
    "MemoryCategory",
    "MemoryCheckpoint",
    "MemoryEntry",
    "MemoryScope",
    "MemorySource",
    "MemoryStatus",
    "Message",
    "NPCInstance",
    "RestoreReport",
    "SearchHit",
    "TurnOutcome",
    "commands",
]


def __getattr__(name: str) -> Any:
    if name == "commands":
        return importlib.import_module("cairn.events.commands")
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'cairn' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
