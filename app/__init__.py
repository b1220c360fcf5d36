"""cairn: location-keyed memory for LLM game agents and narrative engines.

The composition root is `container.build_container`; these are the names an embedding engine
uses with it: the commands it sends, the state it owns, what it reads back, and the errors.
"""

from cairn.errors import CairnError
from cairn.events import commands
from cairn.memory_api import Memory, SearchHit
from cairn.models.game import GameState, LocationState, Message, NPCInstance, TurnOutcome
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
    MemoryStatus,
)

__all__ = [
    "CairnError",
    "GameState",
    "LocationState",
    "Memory",
    "MemoryCategory",
    "MemoryEntry",
    "MemoryScope",
    "MemorySource",
    "MemoryStatus",
    "Message",
    "NPCInstance",
    "SearchHit",
    "TurnOutcome",
    "commands",
]
