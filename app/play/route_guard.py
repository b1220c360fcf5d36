"""RouteGuard: which map routes the objectives may follow (no remembered death, no blocked way).

Safety: no objective targets, and no route is followed into, a remembered death. A deadly move
is a location DANGER memory's quoted command at that location (`'jump' here led to death`); a
deadly room is one the map knows only through deadly moves. Deaths of the world (a clock, an
event: WORLD memories tagged `ending`, with no command) make no room deadly, and neither does a
lesson (`causes`): a room a darkness lesson says is dark is safe only with a light source
carried, so without one no objective targets it and no route goes through it. Nor does any go
into a room the player noted it found no way out of (`words.trap_note`), until a note says a
way out was found. A step is blocked when it left the player in place this episode, or when
the map's latest word on that exit is a refusal. (See `objectives.py`, which uses it.)
"""

from __future__ import annotations

from cairn.agents.explorer import normalize, remembered_dangers
from cairn.agents.explorer.trap_notes import trap_rooms
from cairn.agents.explorer.words import dark_rooms
from cairn.interfaces.memory_service import IMemoryService
from cairn.models.memory import MemoryEntry, MemoryScope
from cairn.services.map import MapGraph
from cairn.services.outcomes import quoted_commands


def deadly_moves(memories: list[MemoryEntry]) -> set[tuple[int, str]]:
    """(location, command) pairs that killed the player (or cost points), from location DANGER
    memories that quote the command. World endings (a clock, an event) name no such move."""
    moves: set[tuple[int, str]] = set()
    for memory in memories:
        if memory.scope is not MemoryScope.LOCATION or memory.location_id is None:
            continue
        if "ending" in memory.tags and not quoted_commands(memory.title):
            continue
        moves.update((memory.location_id, normalize(c)) for c in remembered_dangers([memory]))
    return moves


class RouteGuard:
    """Which map routes are safe to follow: no remembered deadly move, no blocked step."""

    def __init__(self, map_graph: MapGraph, memory: IMemoryService | None = None) -> None:
        self._map = map_graph
        self._memory = memory
        self.deadly: set[tuple[int, str]] = set()
        self.deadly_rooms: set[int] = set()
        self.blocked: set[tuple[int, str]] = set()
        self.dark_rooms: set[int] = set()
        """Rooms a darkness lesson says are dark."""
        self.trap_rooms: set[int] = set()
        """Rooms the player noted it found no way out of (`words.trap_note`)."""
        self.light = False
        """Whether the player carries a light source (as of the last discovery)."""

    def new_episode(self) -> None:
        """Blocks are per episode (a door may be open next time); deaths are remembered."""
        self.blocked = set()

    def refresh(self) -> None:
        """Re-read the remembered deadly moves and the rooms reached only through them."""
        if self._memory is None:
            return
        memories = [
            m for loc in self._map.location_ids() for m in self._memory.location_memories(loc)
        ]
        self.deadly = deadly_moves(memories)
        self.dark_rooms = set(dark_rooms(memories, deadly=True))
        self.trap_rooms = set(trap_rooms(memories))
        entries: dict[int, list[tuple[int, str | None]]] = {}
        for edge in self._map.edges():
            entries.setdefault(edge.to_id, []).append((edge.from_id, edge.action))
        self.deadly_rooms = {
            room
            for room, ways in entries.items()
            if all(a is not None and (src, normalize(a)) in self.deadly for src, a in ways)
        }

    def note_turn(self, before: int | None, after: int | None, action: str) -> None:
        """A known way out of `before` that left the player there is blocked this episode."""
        if before is None or after != before:
            return
        command = normalize(action)
        if command in self._map.exits_from(before):
            self.blocked.add((before, command))

    def unsafe_step(self, room: int, action: str) -> bool:
        """Whether taking `action` in `room` is a remembered death or a blocked way."""
        command = normalize(action)
        return (
            (room, command) in self.deadly
            or (room, command) in self.blocked
            or command in self._map.failed_exits(room)
        )

    def unsafe_room(self, room: int) -> bool:
        """Whether entering `room` is a remembered death: reached only through deadly moves,
        or dark (a darkness lesson) with no light source carried; or a trap the player noted
        it found no way out of."""
        return (
            room in self.deadly_rooms
            or (room in self.dark_rooms and not self.light)
            or room in self.trap_rooms
        )

    def safe_target(self, here: int, target: int) -> bool:
        """Whether the session's route from `here` to `target` may be followed to the end."""
        if self.unsafe_room(target) and target != here:
            return False
        edges = self._map.route_edges(here, target)
        if edges is None:
            return True  # no route: nothing to follow, the player explores
        return not any(
            self.unsafe_room(e.to_id) or (e.action and self.unsafe_step(e.from_id, e.action))
            for e in edges
        )

    def nearest_unexplored(self, here: int) -> int | None:
        """The closest room with an unexplored exit that a safe route reaches."""
        nearest = self._map.nearest_unexplored(here)
        if nearest is None or self.safe_target(here, nearest[0]):
            return nearest[0] if nearest else None
        best: tuple[int, int] | None = None
        for room in self._map.location_ids():
            if not self._map.unexplored_exits(room) or not self.safe_target(here, room):
                continue
            route = self._map.route(here, room)
            if route is not None and (best is None or len(route) < best[0]):
                best = (len(route), room)
        return best[1] if best else None
