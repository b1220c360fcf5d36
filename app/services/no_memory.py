"""NoMemory: the memory reader of the `--no-memory` baseline. Every query answers "nothing".

The baseline is a wiring choice (`container.baseline_context_service`): its builders read this
instead of the memory service, so no prompt of a baseline run can hold a memory, whichever
builders are added later. Memories are still recorded by the real service through the bus.
"""

from __future__ import annotations

from collections.abc import Iterable

from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.memory import LocationRecord, MemoryEntry


class NoMemory(IMemoryReader):
    """Reads nothing."""

    def location_memories(self, location_id: int) -> list[MemoryEntry]:
        return []

    def adjacent_memories(self, location_id: int) -> dict[int, list[MemoryEntry]]:
        return {}

    def npc_memories(self, npc_id: str) -> list[MemoryEntry]:
        return []

    def world_memories(self) -> list[MemoryEntry]:
        return []

    def top_memories(self, limit: int = 10) -> list[MemoryEntry]:
        return []

    def memories_by_id(self, memory_ids: Iterable[str]) -> list[MemoryEntry]:
        return []

    def location_record(self, location_id: int) -> LocationRecord | None:
        return None
