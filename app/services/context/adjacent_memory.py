"""The "Memories for Adjacent Locations" section: the top memories of each neighbouring room."""

from __future__ import annotations

from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.memory import LocationRecord, MemoryEntry
from cairn.services.context.builders import (
    ContextRequest,
    Section,
    SectionBuilder,
    entry_block,
)
from cairn.services.context.memo import _Memo
from cairn.services.context.ranking import _by_importance_then_recency, is_visit_summary


class AdjacentMemoryBuilder(SectionBuilder):
    """Adjacent memories: up to ``max_rooms`` neighbours with memories, by id, each with
    its ``per_room`` most important (then newest) memories."""

    default_name = "adjacent_memory"
    default_title = "Memories for Adjacent Locations"
    default_priority = 40

    def __init__(
        self,
        memory: IMemoryReader,
        *,
        max_rooms: int = 5,
        per_room: int = 3,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._memory = memory
        self.max_rooms = max_rooms
        self.per_room = per_room
        self._rooms: _Memo[Section] = _Memo()

    def build(self, request: ContextRequest) -> Section | None:
        loc_id = request.location_id
        if loc_id is None or self.max_rooms <= 0 or self.per_room <= 0:
            return None
        blocks: list[str] = []
        shown: list[str] = []
        for adj_id, entries in sorted(self._memory.adjacent_memories(loc_id).items()):
            if len(blocks) >= self.max_rooms:
                break
            if adj_id == loc_id or not any(e.visible for e in entries):
                continue
            name = self._room_name(self._memory.location_record(adj_id), entries)
            key = (self.per_room, adj_id, name, *map(id, entries))
            room = self._rooms.get(key) or self._rooms.put(
                key, entries, self._room(adj_id, name, entries)
            )
            blocks.append(room.text)
            shown.extend(room.memory_ids)
        return self.section("\n\n".join(blocks), shown) if blocks else None

    def _room(self, adj_id: int, name: str, entries: list[MemoryEntry]) -> Section:
        """One neighbour's block (a section's text and memory ids, joined into the real one)."""
        ranked = [r for r in enumerate(entries) if r[1].visible]
        # a visit summary only stands for a room that has nothing better
        actions = [r for r in ranked if not is_visit_summary(r[1])]
        top = sorted(actions or ranked, key=_by_importance_then_recency, reverse=True)
        top = top[: self.per_room if actions else 1]
        label = f"Location {adj_id} ({name})" if name else f"Location {adj_id}"
        lines = [f"**{label}:**", *(entry_block(e) for _, e in top)]
        return self.section("\n".join(lines), [e.id for _, e in top])

    @staticmethod
    def _room_name(record: LocationRecord | None, entries: list[MemoryEntry]) -> str:
        if record is not None and record.name:
            return record.name
        names = [e.location_name for e in entries if e.location_name]
        return names[-1] if names else ""
