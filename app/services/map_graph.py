"""MapGraph: the map of a game learned from moves, keyed by integer location ids.

What it holds (all keyed by the Jericho integer location id, never by name: names repeat,
e.g. several rooms called "Forest"):

- **known edges**: `A --action--> B`, learned when taking `action` in A reached B. Compass
  actions are normalised (`n` -> `north`, `go ne` -> `northeast`, `u` -> `up`, ...); any other
  action (`enter window`, `climb tree`) is kept as typed, lower-cased with whitespace collapsed.
  Taking the same action again from the same room to a different room replaces the old edge
  (the latest observation wins). A move with no action recorded is kept as an unlabelled link:
  it counts for adjacency and diagrams but never for routes (there is no action to give).
- **inferred edges**: for a known compass move `A --north--> B`, the reverse `B --south--> A`
  is *assumed* (north/south, east/west, the diagonals, up/down; not in/out, which are often
  one-way or lead elsewhere). An inference is dropped when B already has a known edge with that
  action, when that action was refused at B, or when two known moves would infer conflicting
  reverses. Inferred edges are flagged (`MapEdge.inferred`), never drawn, and routing uses them
  only when no route over known edges exists (`route`, `nearest_unexplored`): many IF maps have
  bent or one-way passages, so a route the agent actually walked is preferred to a guessed one.
- **adjacency** (`neighbors`, the `IMapView` side): both directions of every known move or link.
- **names** (display only) and **visit counts** (`record_visit`).
- **exits**: exits the room text mentions (`note_exits`, found with `exits_in_text`), exits the
  game refused (`mark_failed_exit`), and `unexplored_exits` = mentioned minus refused minus
  those already covered by a known or inferred edge (or tried and found to stay in place).

Pure except `save`/`load` (JSON; atomic write; `MapFileError` names the file and the problem).
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from app.adapters.files import atomic_write_text
from app.errors import InvalidLocationError, MapFileError
from app.interfaces.map import IMapView

# Canonical directions in the order they are listed everywhere (deterministic output).
DIRECTIONS: tuple[str, ...] = (
    "north",
    "south",
    "east",
    "west",
    "northeast",
    "northwest",
    "southeast",
    "southwest",
    "up",
    "down",
    "in",
    "out",
)
_RANK = {d: i for i, d in enumerate(DIRECTIONS)}

_ALIASES: dict[str, str] = {
    "n": "north",
    "s": "south",
    "e": "east",
    "w": "west",
    "ne": "northeast",
    "nw": "northwest",
    "se": "southeast",
    "sw": "southwest",
    "north-east": "northeast",
    "north east": "northeast",
    "north-west": "northwest",
    "north west": "northwest",
    "south-east": "southeast",
    "south east": "southeast",
    "south-west": "southwest",
    "south west": "southwest",
    "u": "up",
    "d": "down",
    "upward": "up",
    "upwards": "up",
    "downward": "down",
    "downwards": "down",
    "inside": "in",
    "outside": "out",
    **{d: d for d in DIRECTIONS},
}

# Reverses assumed for inferred edges (in/out deliberately left out, see the module docstring).
OPPOSITE: dict[str, str] = {
    "north": "south",
    "south": "north",
    "east": "west",
    "west": "east",
    "northeast": "southwest",
    "southwest": "northeast",
    "northwest": "southeast",
    "southeast": "northwest",
    "up": "down",
    "down": "up",
}

_GO_PREFIX = re.compile(r"^(?:go|walk|run|head|move)\s+(?:to\s+(?:the\s+)?)?")

MAP_FORMAT_VERSION: Final = 1


def normalize_action(action: str) -> str:
    """An action as a map label: lower case, whitespace collapsed, directions canonical."""
    cleaned = " ".join(action.lower().split())
    return normalize_direction(cleaned) or cleaned


def normalize_direction(action: str) -> str | None:
    """The canonical direction an action moves in (`n`, `go north` -> `north`), else None."""
    cleaned = " ".join(action.lower().split()).rstrip(".!")
    if cleaned in _ALIASES:
        return _ALIASES[cleaned]
    stripped = _GO_PREFIX.sub("", cleaned)
    return _ALIASES.get(stripped) if stripped != cleaned else None


def _direction_key(action: str) -> tuple[int, str]:
    """Sort key: directions in canonical order first, then other actions alphabetically."""
    return (_RANK.get(action, len(DIRECTIONS)), action)


# -- finding exits in room text --------------------------------------------------------------

_DIR_WORD = (
    r"(?:north(?:[- ]?(?:east|west))?|south(?:[- ]?(?:east|west))?|east|west"
    r"|(?:north|south|east|west)wards?|upwards?|downwards?|up|down)"
)
_DIR_LIST = rf"{_DIR_WORD}(?:\s*(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)(?:the\s+)?{_DIR_WORD})*"
_VERBS = (
    r"(?:leads?|leading|goes|going|heads?|heading|runs?|running|winds?|winding|continues"
    r"|continuing|extends?|extending|climbs?|climbing|descends?|descending|ascends?|ascending"
    r"|stretch(?:es)?|stretching|bends?|bending|turns?|turning|curves?|curving|slopes?|sloping"
    r"|exits?)"
)
# "leads north", "winding north and east", "goes up": verb, an optional adverb, directions.
_VERB_PATTERN = re.compile(
    rf"\b{_VERBS}\s+(?:(?:off|away|steeply|gently|back|on)\s+)?(?P<dirs>{_DIR_LIST})\b"
)
# "to the south", "towards the east and west"; not "to the north side of the house".
_TO_THE_PATTERN = re.compile(
    rf"\b(?:to|towards?)\s+the\s+(?P<dirs>{_DIR_LIST})\b"
    r"(?!\s+(?:side|wall|edge|end|bank|shore|face|corner|part|half|of)\b)"
)
# "Exits: east and west", "Obvious exits are north, south", "you can go north or east".
_LIST_PATTERN = re.compile(
    rf"\b(?:exits?\s*(?:are|is|:)|(?:can|could|may)\s+go)\s*(?P<dirs>{_DIR_LIST})\b"
)
# "the north or west exits", "an east exit".
_EXITS_AFTER_PATTERN = re.compile(rf"\b(?P<dirs>{_DIR_LIST})\s+(?:exits?|doorways?)\b")
# "heads north-south", "an east-west passage": a hyphenated pair of opposite directions.
_PAIR_PATTERN = re.compile(
    r"\b(north|south|east|west|northeast|northwest|southeast|southwest)"
    r"-(north|south|east|west|northeast|northwest|southeast|southwest)\b"
)
_SINGLE_DIR = re.compile(_DIR_WORD)


def _canonical_word(word: str) -> str | None:
    """`north-east` -> northeast, `northwards` -> north, `upward` -> up."""
    word = re.sub(r"wards?$", "", word.lower())
    return _ALIASES.get(word)


def exits_in_text(text: str) -> list[str]:
    """Compass directions a typical IF room description presents as ways out, canonical order.

    Conservative: a direction counts only in an exit phrase ("a path leads south", "to the
    east", "exits: north and west", "you can go up", "the north or west exits", "heads
    north-south"); a bare mention ("the north side of a white house", "west of a house") does
    not. in/out are never reported (too ambiguous in prose).
    """
    lowered = text.lower()
    found: set[str] = set()
    for pattern in (_VERB_PATTERN, _TO_THE_PATTERN, _LIST_PATTERN, _EXITS_AFTER_PATTERN):
        for match in pattern.finditer(lowered):
            for word in _SINGLE_DIR.findall(match.group("dirs")):
                direction = _canonical_word(word)
                if direction is not None:
                    found.add(direction)
    for match in _PAIR_PATTERN.finditer(lowered):
        first, second = match.group(1), match.group(2)
        if OPPOSITE.get(first) == second:
            found.update((first, second))
    return sorted(found, key=_RANK.__getitem__)


# -- values handed out --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MapEdge:
    """One directed edge: taking `action` at `from_id` leads to `to_id`.

    `action` is None for a move learned without its action; `inferred` marks an assumed
    reverse of a known compass move.
    """

    from_id: int
    to_id: int
    action: str | None
    inferred: bool = False


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


# -- the serialized form -----------------------------------------------------------------------


class _ConnectionData(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_id: StrictInt = Field(alias="from")
    to_id: StrictInt = Field(alias="to")
    action: StrictStr | None = Field(default=None, min_length=1)


class _RoomData(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: StrictInt
    name: StrictStr | None = None
    visits: StrictInt = Field(default=0, ge=0)
    exits: list[StrictStr] = Field(default_factory=list)
    failed_exits: list[StrictStr] = Field(default_factory=list)
    tried: list[StrictStr] = Field(default_factory=list)


class _MapData(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = MAP_FORMAT_VERSION
    rooms: list[_RoomData] = Field(default_factory=list)
    connections: list[_ConnectionData] = Field(default_factory=list)


def _describe_validation_error(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "(top level)"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)


def _check_id(value: object, argument: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidLocationError(
            f"{argument}: location ids are integers, got {type(value).__name__} {value!r}"
        )
    return value


# -- the map ------------------------------------------------------------------------------------


class MapGraph(IMapView):
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
        self._inferred_cache: dict[int, dict[str, int]] | None = None

    # -- learning ------------------------------------------------------------------------------

    def add_connection(self, from_id: int, to_id: int, *, action: str | None = None) -> None:
        """Learn that a move from `from_id` (by `action`, when known) reached `to_id`.

        A move that stays in the same room creates no edge; its action only counts as tried.
        """
        _check_id(from_id, "from_id")
        _check_id(to_id, "to_id")
        label = normalize_action(action) if action is not None and action.strip() else None
        self._inferred_cache = None
        if from_id == to_id:
            if label is not None:
                self._tried.setdefault(from_id, set()).add(label)
            return
        if label is None:
            if to_id not in self._moves.get(from_id, {}).values():
                self._links.setdefault(from_id, set()).add(to_id)
            return
        self._moves.setdefault(from_id, {})[label] = to_id
        self._failed.get(from_id, set()).discard(label)
        links = self._links.get(from_id)
        if links is not None:
            links.discard(to_id)

    def set_name(self, location_id: int, name: str) -> None:
        """Remember a display name (an empty name leaves the old one)."""
        _check_id(location_id, "location_id")
        cleaned = " ".join(name.split())
        if cleaned:
            self._names[location_id] = cleaned

    def record_visit(self, location_id: int) -> int:
        """Count one arrival at `location_id`; the new count."""
        _check_id(location_id, "location_id")
        self._visits[location_id] = self._visits.get(location_id, 0) + 1
        return self._visits[location_id]

    def note_exits(self, location_id: int, directions: Iterable[str]) -> None:
        """Remember exits the room text mentions (see `exits_in_text`); non-directions ignored."""
        _check_id(location_id, "location_id")
        self._inferred_cache = None
        noted = self._exits.setdefault(location_id, set())
        for raw in directions:
            direction = normalize_direction(raw)
            if direction is not None:
                noted.add(direction)

    def mark_failed_exit(self, location_id: int, direction: str) -> None:
        """Remember that the game refused `direction` here, so it is not suggested again."""
        _check_id(location_id, "location_id")
        label = normalize_action(direction)
        if label:
            self._inferred_cache = None
            self._failed.setdefault(location_id, set()).add(label)

    # -- IMapView ------------------------------------------------------------------------------

    def neighbors(self, location_id: int) -> list[int]:
        """Rooms one known move away, in either direction, sorted."""
        _check_id(location_id, "location_id")
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
        return {a: moves[a] for a in sorted(moves, key=_direction_key)}

    def noted_exits(self, location_id: int) -> list[str]:
        _check_id(location_id, "location_id")
        return sorted(self._exits.get(location_id, set()), key=_direction_key)

    def failed_exits(self, location_id: int) -> list[str]:
        _check_id(location_id, "location_id")
        return sorted(self._failed.get(location_id, set()), key=_direction_key)

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
        for include_inferred in (False, True):
            found = self._bfs(from_id, lambda room: bool(self._unexplored(room)), include_inferred)
            if found is not None:
                room, path = found
                return room, [e.action for e in path if e.action is not None]
        return None

    # -- rendering -----------------------------------------------------------------------------

    def render_mermaid(self, direction: Literal["LR", "TD"] = "LR") -> str:
        """A Mermaid flowchart: nodes `L{id}["Name"]`, edges `L1 -->|north| L2` (known only)."""
        lines = [f"graph {direction}"]
        for room in self.location_ids():
            lines.append(f'    L{room}["{_mermaid_text(self._display_name(room))}"]')
        for edge in self.edges():
            if edge.action is None:
                lines.append(f"    L{edge.from_id} --> L{edge.to_id}")
            else:
                label = _mermaid_text(edge.action)
                lines.append(f"    L{edge.from_id} -->|{label}| L{edge.to_id}")
        return "\n".join(lines)

    def render_dot(self) -> str:
        """A Graphviz digraph with the same nodes and edges as `render_mermaid`."""
        lines = ["digraph map {", "    rankdir=LR;", "    node [shape=box];"]
        for room in self.location_ids():
            lines.append(f"    L{room} [label={_dot_string(self._display_name(room))}];")
        for edge in self.edges():
            attributes = "" if edge.action is None else f" [label={_dot_string(edge.action)}]"
            lines.append(f"    L{edge.from_id} -> L{edge.to_id}{attributes};")
        lines.append("}")
        return "\n".join(lines)

    def routing_summary(self, from_id: int, limit: int = 5) -> str:
        """A few prompt lines: exits from here, from up to `limit` neighbours, what is unexplored.

        E.g. "From West of House (180): north -> North of House (81); south -> ..."
        """
        _check_id(from_id, "from_id")
        lines = [self._exits_line(from_id, back_to=None)]
        for neighbour in self.neighbors(from_id)[: max(limit, 0)]:
            lines.append(self._exits_line(neighbour, back_to=from_id))
        return "\n".join([*lines, *self._unexplored_lines(from_id)])

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

    def nearby_summary(self, from_id: int, moves: int = 3) -> str:
        """The map compressed around `from_id`: every room within `moves` moves with its exits,
        nearest first, then a count of the rooms further away (never a silent cut)."""
        near = self.rooms_within(from_id, moves)
        lines = [
            self._exits_line(room, back_to=None)
            for room in sorted(near, key=lambda r: (near[r], r))
        ]
        rest = len(set(self.location_ids()) - set(near))
        if rest:
            lines.append(f"(+{rest} more known rooms further than {moves} moves away)")
        return "\n".join([*lines, *self._unexplored_lines(from_id)])

    def exploration_figures(self) -> ExplorationFigures:
        rooms = self.location_ids()
        return ExplorationFigures(
            rooms_known=len(rooms),
            rooms_visited=len(self.visited_ids()),
            connections=len(self.edges()),
            unexplored_exits=sum(len(self._unexplored(room)) for room in rooms),
        )

    # -- serialization -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (see `from_dict`); deterministic order."""
        rooms = []
        for room in self.location_ids():
            rooms.append(
                _RoomData(
                    id=room,
                    name=self._names.get(room),
                    visits=self._visits.get(room, 0),
                    exits=sorted(self._exits.get(room, set()), key=_direction_key),
                    failed_exits=sorted(self._failed.get(room, set()), key=_direction_key),
                    tried=sorted(self._tried.get(room, set()), key=_direction_key),
                )
            )
        data = _MapData(
            rooms=rooms,
            connections=[
                _ConnectionData(from_id=e.from_id, to_id=e.to_id, action=e.action)
                for e in self.edges()
            ],
        )
        return data.model_dump(by_alias=True, exclude_none=True)

    @classmethod
    def from_dict(cls, data: object) -> MapGraph:
        """Rebuild a map from `to_dict` output; MapFileError (path None) names a bad field."""
        try:
            parsed = _MapData.model_validate(data)
        except ValidationError as error:
            raise MapFileError(None, _describe_validation_error(error)) from error
        graph = cls()
        for index, room in enumerate(parsed.rooms):
            for field in ("exits", "failed_exits", "tried"):
                for position, value in enumerate(getattr(room, field)):
                    if not value.strip():
                        raise MapFileError(None, f"rooms.{index}.{field}.{position}: empty action")
            for position, value in enumerate(room.exits):
                if normalize_direction(value) is None:
                    raise MapFileError(
                        None, f"rooms.{index}.exits.{position}: {value!r} is not a direction"
                    )
            if room.name:
                graph.set_name(room.id, room.name)
            if room.visits:
                graph._visits[room.id] = room.visits
            graph.note_exits(room.id, room.exits)
        # connections before refusals: learning a move clears a refusal of the same action
        for connection in parsed.connections:
            graph.add_connection(connection.from_id, connection.to_id, action=connection.action)
        for room in parsed.rooms:
            for action in room.failed_exits:
                graph.mark_failed_exit(room.id, action)
            for action in room.tried:
                graph.add_connection(room.id, room.id, action=action)
        return graph

    def save(self, path: Path) -> None:
        """Write the map as JSON atomically (temp file in the same folder, fsync, replace)."""
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"
        try:
            atomic_write_text(path, text)
        except OSError as error:
            raise MapFileError(path, f"cannot write: {error}") from error

    @classmethod
    def load(cls, path: Path) -> MapGraph:
        """Read a map saved by `save`; a missing file is an empty map.

        Raises MapFileError (naming `path`) for an unreadable, non-JSON or invalid file.
        """
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls()
        except (OSError, UnicodeDecodeError) as error:
            raise MapFileError(path, f"cannot read: {error}") from error
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise MapFileError(
                path, f"not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}"
            ) from error
        try:
            return cls.from_dict(data)
        except MapFileError as error:
            raise MapFileError(path, error.message) from error

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
        if self._inferred_cache is not None:
            return self._inferred_cache
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
        self._inferred_cache = inferred
        return inferred

    def _unexplored(self, location_id: int) -> list[str]:
        noted = self._exits.get(location_id)
        if not noted:
            return []
        covered = (
            set(self._moves.get(location_id, {}))
            | set(self._inferred().get(location_id, {}))
            | self._failed.get(location_id, set())
            | self._tried.get(location_id, set())
        )
        return sorted(noted - covered, key=_direction_key)

    def _outgoing(self, room: int, include_inferred: bool) -> list[MapEdge]:
        moves = self._moves.get(room, {})
        result = [MapEdge(room, moves[a], a) for a in sorted(moves, key=_direction_key)]
        if include_inferred:
            guesses = self._inferred().get(room, {})
            result.extend(
                MapEdge(room, guesses[a], a, inferred=True)
                for a in sorted(guesses, key=_direction_key)
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

    def _unexplored_lines(self, from_id: int) -> list[str]:
        """The unexplored exits here, and the nearest room that has some, with the way there."""
        lines: list[str] = []
        here = self._unexplored(from_id)
        if here:
            lines.append(f"Unexplored exits here: {', '.join(here)}")
        nearest = self.nearest_unexplored(from_id)
        if nearest is not None and nearest[0] != from_id:
            room, path = nearest
            lines.append(
                f"Nearest unexplored: {self._label(room)} via {', '.join(path)}"
                f" (untried: {', '.join(self._unexplored(room))})"
            )
        return lines

    def _display_name(self, room: int) -> str:
        return self._names.get(room) or f"Location {room}"

    def _label(self, room: int) -> str:
        return f"{self._display_name(room)} ({room})"

    def _exits_line(self, room: int, back_to: int | None) -> str:
        moves = self.exits_from(room)
        if not moves:
            return f"From {self._label(room)}: no known exits"
        parts = []
        for action, target in moves.items():
            back = " [back]" if back_to is not None and target == back_to else ""
            parts.append(f"{action} -> {self._label(target)}{back}")
        return f"From {self._label(room)}: {'; '.join(parts)}"


def _edge_key(edge: MapEdge) -> tuple[int, bool, tuple[int, str], int]:
    action_key = _direction_key(edge.action) if edge.action is not None else (-1, "")
    return (edge.from_id, edge.inferred, action_key, edge.to_id)


_MERMAID_ESCAPES = {
    "#": "#35;",
    '"': "#quot;",
    "[": "#91;",
    "]": "#93;",
    "{": "#123;",
    "}": "#125;",
    "(": "#40;",
    ")": "#41;",
    "|": "#124;",
    "<": "#lt;",
    ">": "#gt;",
}


def _mermaid_text(text: str) -> str:
    """Text safe inside a Mermaid quoted node label or an edge label (entity codes)."""
    flat = " ".join(text.split())
    return "".join(_MERMAID_ESCAPES.get(char, char) for char in flat)


def _dot_string(text: str) -> str:
    """A Graphviz double-quoted string (backslashes and quotes escaped, one line)."""
    flat = " ".join(text.split())
    return '"' + flat.replace("\\", "\\\\").replace('"', '\\"') + '"'
