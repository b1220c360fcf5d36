"""Last-N dated bullets: recent location, NPC and world memory sections."""

from __future__ import annotations

from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.memory import MemoryEntry
from cairn.services.context.builders import (
    ContextRequest,
    Section,
    SectionBuilder,
    dated_bullet,
)


class _LastEntriesBuilder(SectionBuilder):
    """Shared shape of the narrative builders: last N entries as dated bullets."""

    def __init__(
        self,
        memory: IMemoryReader,
        *,
        last_n: int = 3,
        max_chars: int = 200,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._memory = memory
        self.last_n = last_n
        self.max_chars = max_chars

    def _bullets(self, entries: list[MemoryEntry], shown: list[str] | None = None) -> list[str]:
        """Bullets of the last N visible entries; their ids are appended to `shown`."""
        if self.last_n <= 0:
            return []
        picked = [e for e in entries if e.visible][-self.last_n :]
        if shown is not None:
            shown.extend(e.id for e in picked)
        return [dated_bullet(e, self.max_chars) for e in picked]


class NarrativeLocationMemoryBuilder(_LastEntriesBuilder):
    """The "Recent Location Memory" section: the last N memories of the current location."""

    default_name = "recent_location_memory"
    default_title = "Recent Location Memory"
    default_priority = 10

    def build(self, request: ContextRequest) -> Section | None:
        loc_id = request.location_id
        if loc_id is None:
            return None
        shown: list[str] = []
        bullets = self._bullets(self._memory.location_memories(loc_id), shown)
        return self.section("\n".join(bullets), shown) if bullets else None


class NpcMemoryBuilder(_LastEntriesBuilder):
    """The "NPC Memory" section: for each NPC present, its last N memories under its name."""

    default_name = "npc_memory"
    default_title = "NPC Memory"
    default_priority = 20

    def build(self, request: ContextRequest) -> Section | None:
        blocks: list[str] = []
        shown: list[str] = []
        for npc_id in dict.fromkeys(request.npc_ids_present):
            bullets = self._bullets(self._memory.npc_memories(npc_id), shown)
            if not bullets:
                continue
            npc = request.game_state.npcs.get(npc_id)
            name = npc.name if npc is not None and npc.name else npc_id
            label = f"{name} ({npc_id})" if name != npc_id else npc_id
            blocks.append("\n".join([f"{label}:", *bullets]))
        return self.section("\n\n".join(blocks), shown) if blocks else None


class WorldMemoryBuilder(_LastEntriesBuilder):
    """The "World Memory" section: the last N world memories."""

    default_name = "world_memory"
    default_title = "World Memory"
    default_priority = 30

    def build(self, request: ContextRequest) -> Section | None:
        shown: list[str] = []
        bullets = self._bullets(self._memory.world_memories(), shown)
        return self.section("\n".join(bullets), shown) if bullets else None
