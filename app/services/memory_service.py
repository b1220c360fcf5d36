"""MemoryService: location, NPC and world summaries with cursors; action outcomes; notes.

It is put together from `ScopedSummaries` (`scoped_summaries.py`) and `ActionMemories`
(`action_memories.py`) over `MemoryCore` (`memory_core.py`: the store, summarizer, publisher,
map, policy, queries). Every method writes in one unit of work; cursors advance in after-commit
callbacks, so a cursor never moves past a message whose memory was not stored.
"""

from __future__ import annotations

from cairn.interfaces.memory_service import IMemoryService
from cairn.services.action_memories import ActionMemories
from cairn.services.memory_core import VISIBLE, MemoryCore
from cairn.services.scoped_summaries import VISIT_IMPORTANCE, ScopedSummaries

__all__ = ["VISIBLE", "VISIT_IMPORTANCE", "MemoryCore", "MemoryService"]


class MemoryService(ScopedSummaries, ActionMemories, IMemoryService):
    """Implements IMemoryService over an IMemoryStore and an ISummarizer."""
