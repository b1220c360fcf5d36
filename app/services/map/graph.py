"""MapGraph: rooms, moves and exits learned from play, keyed by integer location ids.

See the package docstring for what it holds. Pure: it gives its saved form (`snapshot`) and is
rebuilt from one (`from_snapshot`); the map repository adapter reads and writes the files
(`app/adapters/storage/map_repository.py`). Its drawings and prompt summaries are `render`'s,
which reads it through a protocol and never imports it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from cairn.errors import InvalidLocationError
from cairn.interfaces.map import IMapRecorder
from cairn.models.directions import OPPOSITE, direction_key, normalize_action, normalize_direction
from cairn.models.map import MapConnection, MapEdge, MapRoom, MapSnapshot
from cairn.services.map import render

# -- values handed out --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExplorationFigures:
    """How much of the map is known: rooms, visits, known connections, exits left to try."""

    rooms_known: int
    rooms_visited: int
    connections: int
    unexplored_exits: int

    def render(self) -> str:
        return (
            f"Rooms known: {self.rooms_known}; rooms visited: {self.rooms_visited}; "
            f"connections: {self.connections}; unexplored exits: {self.unexplored_exits}"
        )


def _check_id(value: object, argument: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidLocationError(
            f"{argument}: location ids are integers, got {type(value).__name__} {value!r}"
        )
    return value


# -- the map ------------------------------------------------------------------------------------


class MapGraph(IMapRecorder):
    """Rooms, directed moves between them, exits seen and refused; see the module docstring."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forget everything (the baseline's map starts every episode empty)."""
        self._moves: dict[int, dict[str, int]] = {}  # from -> action -> to (known, labelled)
        self._links: dict[int, set[int]] = {}  # from -> {to}: moves whose action is unknown
        self._names: dict[int, str] = {}
        self._visits: dict[int, int] = {}
        self._exits: dict[int, set[str]] = {}  # directions the room text mentions
        self._failed: dict[int, set[str]] = {}  # actions the game refused
        self._tried: dict[int, set[str]] = {}  # actions taken that stayed in the same room
        self._answers: dict[tuple[object, ...], Any] = {}
        """Inferred reverses, routes, neighbours and unexplored exits already found, until the
        map changes."""

    def _changed(self) -> None:
        """The rooms' links or exits changed: what was inferred or found no longer holds."""
        self._answers.clear()

    # -- learning ------------------------------------------------------------------------------

    def add_connection(self, from_id: int, to_id: int, *, action: str | None = None) -> None:
        """Learn that a move from `from_id` (by `action`, when known) reached `to_id`.

        A move that stays in the same room creates no edge; its action only counts as tried.
        """
        _check_id(from_id, "from_id")
        _check_id(to_id, "to_id")
        label = normalize_action(action) if action is not None and action.strip() else None
        if from_id == to_id:
            if label is not None and label not in self._tried.get(from_id, ()):
                self._tried.setdefault(from_id, set()).add(label)
                self._changed()
            return
        if label is None:
            known = to_id in self._moves.get(from_id, {}).values()
            if not known and to_id not in self._links.get(from_id, ()):
                self._links.setdefault(from_id, set()).add(to_id)
                self._changed()
            return
        if (
            self._moves.get(from_id, {}).get(label) == to_id
            and label not in self._failed.get(from_id, ())
            and to_id not in self._links.get(from_id, ())
        ):
            return  # known already
        self._changed()
        self._moves.setdefault(from_id, {})[label] = to_id
        self._failed.get(from_id, set()).discard(label)
        links = self._links.get(from_id)
        if links is not None:
            links.discard(to_id)

    def set_name(self, location_id: int, name: str) -> None:
        """Remember a display name (an empty name leaves the old one)."""
        _check_id(location_id, "location_id")
        cleaned = " ".join(name.split())
        if cleaned and self._names.get(location_id) != cleaned:
            self._names[location_id] = cleaned
            self._changed()  # summaries name the rooms

    def record_visit(self, location_id: int) -> int:
        """Count one arrival at `location_id`; the new count."""
        _check_id(location_id, "location_id")
        self._visits[location_id] = self._visits.get(location_id, 0) + 1
        return self._visits[location_id]

    def note_exits(self, location_id: int, directions: Iterable[str]) -> None:
        """Remember exits the room text mentions (see `exits_in_text`); non-directions ignored."""
        _check_id(location_id, "location_id")
        noted = self._exits.setdefault(location_id, set())
        for raw in directions:
            direction = normalize_direction(raw)
            if direction is not None and direction not in noted:
                noted.add(direction)
                self._changed()

    def mark_failed_exit(self, location_id: int, direction: str) -> None:
        """Remember that the game refused `direction` here, so it is not suggested again."""
        _check_id(location_id, "location_id")
        label = normalize_action(direction)
        if label and label not in self._failed.get(location_id, ()):
            self._failed.setdefault(location_id, set()).add(label)
            self._changed()

    # -- IMapView ------------------------------------------------------------------------------

    def neighbors(self, location_id: int) -> list[int]:
        """Rooms one known move away, in either direction, sorted."""
        _check_id(location_id, "location_id")
        return list(self._answer(("neighbors", location_id), self._neighbors, location_id))

    def _neighbors(self, location_id: int) -> list[int]:
        found: set[int] = set()
        for source, target in self._known_pairs():
            if source == location_id:
                found.add(target)
            elif target == location_id:
                found.add(source)
        return sorted(found)

    def name_of(self, location_id: int) -> str | None:
        _check_id(location_id, "location_id")
        return self._names.get(location_id)

    # -- reading -------------------------------------------------------------------------------

    def location_ids(self) -> list[int]:
        """Every id the map knows anything about, sorted."""
        ids: set[int] = set(self._names) | set(self._visits)
        for table in (self._exits, self._failed, self._tried):
            ids.update(k for k, v in table.items() if v)
        for source, target in self._known_pairs():
            ids.update((source, target))
        return sorted(ids)

    def visited_ids(self) -> list[int]:
        """Ids the agent has evidently stood in: visited, an end of a move, or exits seen there."""
        ids = {k for k, v in self._visits.items() if v > 0}
        for table in (self._exits, self._failed, self._tried):
            ids.update(k for k, v in table.items() if v)
        for source, target in self._known_pairs():
            ids.update((source, target))
        return sorted(ids)

    def visit_count(self, location_id: int) -> int:
        _check_id(location_id, "location_id")
        return self._visits.get(location_id, 0)

    def exits_from(self, location_id: int) -> dict[str, int]:
        """Known actions from `location_id` and where they lead (directions first)."""
        _check_id(location_id, "location_id")
        moves = self._moves.get(location_id, {})
        return {a: moves[a] for a in sorted(moves, key=direction_key)}

    def inferred_exits(self, location_id: int) -> dict[str, int]:
        """The assumed reverses from `location_id` (the way back of a known compass move into
        it, not taken yet) and where they would lead (directions first)."""
        _check_id(location_id, "location_id")
        moves = self._inferred().get(location_id, {})
        return {a: moves[a] for a in sorted(moves, key=direction_key)}

    def noted_exits(self, location_id: int) -> list[str]:
        _check_id(location_id, "location_id")
        return sorted(self._exits.get(location_id, set()), key=direction_key)

    def failed_exits(self, location_id: int) -> list[str]:
        _check_id(location_id, "location_id")
        return sorted(self._failed.get(location_id, set()), key=direction_key)

    def tried_here(self, location_id: int) -> list[str]:
        """Actions taken here that stayed in the same room."""
        _check_id(location_id, "location_id")
        return sorted(self._tried.get(location_id, set()), key=direction_key)

    def unexplored_exits(self, location_id: int) -> list[str]:
        """Mentioned exits not tried from here: no known or inferred edge, not refused."""
        _check_id(location_id, "location_id")
        return self._unexplored(location_id)

    def edges(self, *, include_inferred: bool = False) -> list[MapEdge]:
        """Every directed edge, sorted by source, action (directions first), target."""
        result = [
            MapEdge(source, target, action)
            for source, moves in self._moves.items()
            for action, target in moves.items()
        ]
        result.extend(
            MapEdge(source, target, None)
            for source, targets in self._links.items()
            for target in targets
        )
        if include_inferred:
            result.extend(
                MapEdge(source, target, action, inferred=True)
                for source, moves in self._inferred().items()
                for action, target in moves.items()
            )
        return sorted(result, key=_edge_key)

    # -- routing -------------------------------------------------------------------------------

    def route(self, from_id: int, to_id: int) -> list[str] | None:
        """The shortest list of actions from `from_id` to `to_id`; [] when already there.

        Known edges only, unless no such route exists: then inferred reverses may be used.
        None when the map knows no way (or `to_id` is unknown).
        """
        edges = self.route_edges(from_id, to_id)
        return None if edges is None else [e.action for e in edges if e.action is not None]

    def route_edges(self, from_id: int, to_id: int) -> list[MapEdge] | None:
        """Like `route`, with the edges taken (so a caller can see which are inferred)."""
        _check_id(from_id, "from_id")
        _check_id(to_id, "to_id")
        found = self._answer(("route", from_id, to_id), self._route_edges, from_id, to_id)
        return None if found is None else list(found)

    def _route_edges(self, from_id: int, to_id: int) -> list[MapEdge] | None:
        for include_inferred in (False, True):
            found = self._bfs(from_id, lambda room: room == to_id, include_inferred)
            if found is not None:
                return found[1]
        return None

    def nearest_unexplored(self, from_id: int) -> tuple[int, list[str]] | None:
        """The closest room with an unexplored exit and the actions to get there.

        `from_id` itself counts (route []). Same edge policy as `route`. None when no reachable
        room has an unexplored exit.
        """
        _check_id(from_id, "from_id")
        found = self._answer(("nearest", from_id), self._nearest_unexplored, from_id)
        return None if found is None else (found[0], list(found[1]))

    def _nearest_unexplored(self, from_id: int) -> tuple[int, list[str]] | None:
        for include_inferred in (False, True):
            found = self._bfs(from_id, lambda room: bool(self._unexplored(room)), include_inferred)
            if found is not None:
                room, path = found
                return room, [e.action for e in path if e.action is not None]
        return None

    # -- internals -----------------------------------------------------------------------------

    def _known_pairs(self) -> Iterable[tuple[int, int]]:
        for source, moves in self._moves.items():
            for target in moves.values():
                yield source, target
        for source, targets in self._links.items():
            for target in targets:
                yield source, target

    def _inferred(self) -> dict[int, dict[str, int]]:
        """Assumed reverses of known compass moves (see the module docstring)."""
        inferred: dict[int, dict[str, int]] = self._answer(("inferred",), self._infer)
        return inferred

    def _infer(self) -> dict[int, dict[str, int]]:
        candidates: dict[tuple[int, str], set[int]] = {}
        for source, moves in self._moves.items():
            for action, target in moves.items():
                reverse = OPPOSITE.get(action)
                if reverse is None:
                    continue
                if reverse in self._moves.get(target, {}):
                    continue
                if reverse in self._failed.get(target, set()):
                    continue
                candidates.setdefault((target, reverse), set()).add(source)
        inferred: dict[int, dict[str, int]] = {}
        for (room, action), sources in candidates.items():
            if len(sources) == 1:  # two rooms claiming the same reverse: no guess
                inferred.setdefault(room, {})[action] = next(iter(sources))
        return inferred

    def _answer(self, key: tuple[object, ...], find: Callable[..., Any], *args: Any) -> Any:
        """`find(*args)`, kept under `key` until the map changes (`_changed`)."""
        if key not in self._answers:
            self._answers[key] = find(*args)
        return self._answers[key]

    def _unexplored(self, location_id: int) -> list[str]:
        return list(self._answer(("unexplored", location_id), self._find_unexplored, location_id))

    def _find_unexplored(self, location_id: int) -> list[str]:
        noted = self._exits.get(location_id)
        if not noted:
            return []
        covered = (
            set(self._moves.get(location_id, {}))
            | set(self._inferred().get(location_id, {}))
            | self._failed.get(location_id, set())
            | self._tried.get(location_id, set())
        )
        return sorted(noted - covered, key=direction_key)

    def _outgoing(self, room: int, include_inferred: bool) -> list[MapEdge]:
        moves = self._moves.get(room, {})
        result = [MapEdge(room, moves[a], a) for a in sorted(moves, key=direction_key)]
        if include_inferred:
            guesses = self._inferred().get(room, {})
            result.extend(
                MapEdge(room, guesses[a], a, inferred=True)
                for a in sorted(guesses, key=direction_key)
            )
        return result

    def _bfs(
        self, start: int, is_goal: Callable[[int], bool], include_inferred: bool
    ) -> tuple[int, list[MapEdge]] | None:
        """Breadth-first search over labelled edges; (goal room, edges taken) or None."""
        if is_goal(start):
            return start, []
        came_by: dict[int, MapEdge | None] = {start: None}
        queue: deque[int] = deque([start])
        while queue:
            room = queue.popleft()
            for edge in self._outgoing(room, include_inferred):
                if edge.to_id in came_by:
                    continue
                came_by[edge.to_id] = edge
                if is_goal(edge.to_id):
                    path: list[MapEdge] = []
                    step: MapEdge | None = edge
                    while step is not None:
                        path.append(step)
                        step = came_by[step.from_id]
                    path.reverse()
                    return edge.to_id, path
                queue.append(edge.to_id)
        return None

    def set_visits(self, location_id: int, visits: int) -> None:
        """Restore a saved visit count (`from_snapshot`)."""
        _check_id(location_id, "location_id")
        self._visits[location_id] = visits

    # -- the saved form ------------------------------------------------------------------------

    def snapshot(self) -> MapSnapshot:
        """Everything the map learned, as values: rooms by id, known edges in `edges` order."""
        rooms = [
            MapRoom(
                id=room,
                name=self.name_of(room),
                visits=self.visit_count(room),
                exits=self.noted_exits(room),
                failed_exits=self.failed_exits(room),
                tried=self.tried_here(room),
            )
            for room in self.location_ids()
        ]
        return MapSnapshot(
            rooms=rooms,
            connections=[
                MapConnection(from_id=e.from_id, to_id=e.to_id, action=e.action)
                for e in self.edges()
            ],
        )

    @classmethod
    def from_snapshot(cls, snapshot: MapSnapshot) -> MapGraph:
        """The map `snapshot` was taken of (the same `snapshot` again, the same answers)."""
        graph = cls()
        for room in snapshot.rooms:
            if room.name:
                graph.set_name(room.id, room.name)
            if room.visits:
                graph.set_visits(room.id, room.visits)
            graph.note_exits(room.id, room.exits)
        # connections before refusals: learning a move clears a refusal of the same action
        for connection in snapshot.connections:
            graph.add_connection(connection.from_id, connection.to_id, action=connection.action)
        for room in snapshot.rooms:
            for action in room.failed_exits:
                graph.mark_failed_exit(room.id, action)
            for action in room.tried:
                graph.add_connection(room.id, room.id, action=action)
        return graph

    # -- reading figures -----------------------------------------------------------------------

    def rooms_within(self, from_id: int, moves: int) -> dict[int, int]:
        """Every room at most `moves` moves away (either direction of a known move), with its
        distance; `from_id` itself at 0."""
        _check_id(from_id, "from_id")
        distance = {from_id: 0}
        frontier = [from_id]
        for step in range(1, max(moves, 0) + 1):
            frontier = [
                n for room in frontier for n in self.neighbors(room) if n not in distance
            ]
            for room in frontier:
                distance.setdefault(room, step)
        return distance

    def exploration_figures(self) -> ExplorationFigures:
        rooms = self.location_ids()
        return ExplorationFigures(
            rooms_known=len(rooms),
            rooms_visited=len(self.visited_ids()),
            connections=len(self.edges()),
            unexplored_exits=sum(len(self._unexplored(room)) for room in rooms),
        )

    # -- rendering (app/services/map/render.py) ------------------------------------------------

    def render_mermaid(
        self, direction: Literal["LR", "TD"] = "LR", rooms: Collection[int] | None = None
    ) -> str:
        """A Mermaid flowchart: nodes `L{id}["Name"]`, edges `L1 -->|north| L2` (known only);
        `rooms`: only these rooms and the connections between them."""
        return render.mermaid(self, direction, rooms)

    def render_dot(self) -> str:
        """A Graphviz digraph with the same nodes and edges as `render_mermaid`."""
        return render.dot(self)

    def routing_summary(self, from_id: int, limit: int = 5) -> str:
        """Prompt lines: exits from here and from up to `limit` neighbours, what is unexplored."""
        _check_id(from_id, "from_id")
        return render.routing_summary(self, from_id, limit)

    def nearby_summary(self, from_id: int, moves: int = 3) -> str:
        """The map compressed around `from_id`: every room within `moves` moves, then a count
        (kept until the map changes: a prompt asks for it every turn)."""
        key = ("nearby", from_id, moves)
        found: str = self._answer(key, render.nearby_summary, self, from_id, moves)
        return found


def _edge_key(edge: MapEdge) -> tuple[int, bool, tuple[int, str], int]:
    action_key = direction_key(edge.action) if edge.action is not None else (-1, "")
    return (edge.from_id, edge.inferred, action_key, edge.to_id)
