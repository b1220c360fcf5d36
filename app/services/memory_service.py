"""MemoryService: location, NPC and world summaries with cursors; action outcomes; notes;
checkpoints of a saved game.

It is put together from `ScopedSummaries` (`scoped_summaries.py`) and `ActionMemories`
(`action_memories.py`) over `MemoryCore` (`memory_core.py`: the store, summarizer, publisher,
map, policy, queries); saving and loading a game are `checkpoints.py`'s. Every method writes in
one unit of work; cursors advance in after-commit callbacks, so a cursor never moves past a
message whose memory was not stored.
"""

from __future__ import annotations

from cairn.interfaces.memory_service import IMemoryCheckpoints, IMemoryService
from cairn.models.checkpoint import MemoryCheckpoint, RestoreReport
from cairn.models.game import GameState
from cairn.services import checkpoints
from cairn.services.action_memories import ActionMemories
from cairn.services.memory_core import VISIBLE, MemoryCore
from cairn.services.scoped_summaries import VISIT_IMPORTANCE, ScopedSummaries

__all__ = ["VISIBLE", "VISIT_IMPORTANCE", "MemoryCore", "MemoryService"]


class MemoryService(ScopedSummaries, ActionMemories, IMemoryService, IMemoryCheckpoints):
    """Implements IMemoryService and IMemoryCheckpoints over an IMemoryStore and an
    ISummarizer."""

    def checkpoint(self, game_state: GameState) -> None:
        checkpoints.checkpoint(self, game_state)

    def restore(self, game_state: GameState, checkpoint: MemoryCheckpoint) -> RestoreReport:
        return checkpoints.restore(self, game_state, checkpoint)
