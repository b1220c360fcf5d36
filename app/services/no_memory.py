"""NoMemory: the memory reader of the `--no-memory` baseline. Every query answers "nothing".

The baseline is a wiring choice (`container.baseline_context_service`): its builders read this
instead of the memory service, so no prompt of a baseline run can hold a memory, whichever
builders are added later. Memories are still recorded by the real service through the bus.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.errors import ConfigError
from app.interfaces.memory_service import IMemoryService
from app.models.game import GameState, TurnOutcome
from app.models.kinds import WorldEvent
from app.models.memory import LocationRecord, MemoryEntry


class NoMemory(IMemoryService):
    """Reads nothing; refuses writes (the baseline writes through the real service)."""

    def _refuse(self) -> None:
        raise ConfigError("NoMemory is the baseline's reader: it stores nothing")

    def on_location_exit(self, game_state: GameState) -> None:
        self._refuse()

    def on_location_enter(
        self, game_state: GameState, from_location_id: int | None, via: str | None = None
    ) -> None:
        self._refuse()

    def on_world_event(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        tags: list[str] | None = None,
        related: Mapping[str, str | list[str]] | None = None,
        title: str | None = None,
    ) -> None:
        self._refuse()

    def record_ending(self, game_state: GameState, final: TurnOutcome) -> MemoryEntry | None:
        self._refuse()
        return None

    def record_action_outcome(
        self, game_state: GameState, outcome: TurnOutcome
    ) -> MemoryEntry | None:
        self._refuse()
        return None

    def remember(
        self,
        game_state: GameState,
        text: str,
        importance: int,
        location_id: int | None = None,
    ) -> MemoryEntry | None:
        self._refuse()
        return None

    def end_episode(self, game_state: GameState) -> None:
        self._refuse()

    def prune(self) -> list[str]:
        self._refuse()
        return []

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

    def location_record(self, location_id: int) -> LocationRecord | None:
        return None
