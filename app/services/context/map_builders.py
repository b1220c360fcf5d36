"""Builders that read the map: where the player is with exploration figures, the map
compressed around the player (every room within N moves, then a count of the rest), and its
Mermaid drawing (the objective prompt shows the map both as routes and as a drawing)."""

from __future__ import annotations

from cairn.interfaces.memory_service import IMemoryReader
from cairn.services.context.builders import ContextRequest, Section, SectionBuilder
from cairn.services.map import MapGraph


class CurrentLocationBuilder(SectionBuilder):
    """"Current location: Hall (ID: 12)" and the exploration statistics."""

    default_name = "current_location"
    default_title = "Current Location"
    default_priority = 5

    def __init__(
        self,
        map_graph: MapGraph,
        memory: IMemoryReader,
        *,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._map = map_graph
        self._memory = memory

    def build(self, request: ContextRequest) -> Section | None:
        loc_id = request.location_id
        if loc_id is None:
            return self.section("Current location: unknown (the game cannot say)")
        name = request.location_name or self._map.name_of(loc_id) or f"Location {loc_id}"
        rooms = self._map.location_ids()
        remembered = sum(1 for room in rooms if self._memory.location_memories(room))
        lines = [
            f"Current location: {name} (ID: {loc_id})",
            f"Exploration: {self._map.exploration_figures().render()}; "
            f"rooms with memories: {remembered}",
        ]
        visits = self._map.visit_count(loc_id)
        if visits:
            lines.append(f"Visits here: {visits}")
        return self.section("\n".join(lines))


class NearbyMapBuilder(SectionBuilder):
    """The map around the player: each room within ``moves`` moves with its known exits,
    nearest first, then how many rooms lie further away; unexplored exits and the nearest
    room that has some. Compressed, never cut: nothing is dropped without being counted."""

    default_name = "map"
    default_title = "Map and Routes (location ids as in memories)"
    default_priority = 40

    def __init__(
        self,
        map_graph: MapGraph,
        *,
        moves: int = 3,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._map = map_graph
        self.moves = moves

    def build(self, request: ContextRequest) -> Section | None:
        loc_id = request.location_id
        if loc_id is None or not self._map.location_ids():
            return None
        return self.section(self._map.nearby_summary(loc_id, self.moves))


class MermaidMapBuilder(SectionBuilder):
    """The map as a Mermaid flowchart with `L{id}` nodes (the ids memories use), for the
    objective prompt: the whole map while it has at most `whole_map_rooms` rooms, else the
    rooms within `moves` moves of the player and the connections between them (a huge map
    drawn whole would crowd out the rest), with a line saying how many rooms are left out."""

    default_name = "map_drawing"
    default_title = "Map Visualization (Mermaid Format)"
    default_priority = 45

    def __init__(
        self,
        map_graph: MapGraph,
        *,
        moves: int = 3,
        whole_map_rooms: int = 30,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._map = map_graph
        self.moves = moves
        self.whole_map_rooms = whole_map_rooms

    def build(self, request: ContextRequest) -> Section | None:
        rooms = self._map.location_ids()
        if not rooms:
            return None
        here = request.location_id
        shown: set[int] | None = None
        if len(rooms) > self.whole_map_rooms and here is not None and here in rooms:
            shown = set(self._map.rooms_within(here, self.moves))
        lines = ["```mermaid", self._map.render_mermaid(rooms=shown), "```"]
        example = here if here is not None else min(rooms)
        lines.append(f"Node ids match location ids in memories (L{example} = Location {example}).")
        if here is not None:
            lines.append(f"Current location: L{here}")
        if shown is not None:
            lines.append(
                f"(rooms within {self.moves} moves of L{here}; {len(rooms) - len(shown)}"
                " more rooms not drawn)"
            )
        return self.section("\n".join(lines))
