"""Renderings of a map: Mermaid, Graphviz dot, and the prompt's routing summaries.

They read a map through `MapReader`, the reading side `MapGraph` offers, and never import the
graph: the graph's `render_mermaid` and summaries call down into this module.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal, Protocol

from cairn.models.map import MapEdge


class MapReader(Protocol):
    """What a drawing or a prompt summary reads of a map (`MapGraph` answers all of it)."""

    def location_ids(self) -> list[int]:
        """Every id the map knows anything about, sorted."""
        ...

    def name_of(self, location_id: int) -> str | None:
        """The display name of a location, when known."""
        ...

    def edges(self) -> list[MapEdge]:
        """Every known directed edge, sorted."""
        ...

    def neighbors(self, location_id: int) -> list[int]:
        """Rooms one known move away, in either direction, sorted."""
        ...

    def exits_from(self, location_id: int) -> dict[str, int]:
        """Known actions from a room and where they lead."""
        ...

    def rooms_within(self, from_id: int, moves: int) -> dict[int, int]:
        """Every room at most `moves` moves away, with its distance."""
        ...

    def unexplored_exits(self, location_id: int) -> list[str]:
        """Exits the room text mentions that no move has tried."""
        ...

    def nearest_unexplored(self, from_id: int) -> tuple[int, list[str]] | None:
        """The closest room with an unexplored exit, and the actions to get there."""
        ...


@dataclass(frozen=True, slots=True)
class Connection:
    """Two rooms joined by known moves, drawn as ONE edge: the actions from `a` to `b`
    (`forward`) and back (`back`, empty for a one-way move). An unlabelled move adds no action;
    `b_to_a` tells whether any move (labelled or not) goes back."""

    a: int
    b: int
    forward: tuple[str, ...]
    back: tuple[str, ...]
    b_to_a: bool = False

    @property
    def two_way(self) -> bool:
        return self.b_to_a

    @property
    def label(self) -> str:
        """`north / south` (a->b / b->a), `enter window` one way, "" with no action known."""
        parts = (", ".join(self.forward), ", ".join(self.back))
        return " / ".join(part for part in parts if part)


def connections(graph: MapReader) -> list[Connection]:
    """Every pair of rooms joined by a known move, once, in the order of `graph.edges()`:
    `a` is the source of the first labelled edge between the two (else of the first edge)."""
    edges = graph.edges()
    pairs: dict[frozenset[int], tuple[int, int]] = {}
    actions: dict[tuple[int, int], list[str]] = {}
    for edge in sorted(edges, key=lambda e: e.action is None):  # stable: labelled ones first
        pairs.setdefault(frozenset((edge.from_id, edge.to_id)), (edge.from_id, edge.to_id))
    for edge in edges:
        taken = actions.setdefault((edge.from_id, edge.to_id), [])
        if edge.action is not None:
            taken.append(edge.action)
    order: dict[frozenset[int], int] = {}
    for index, edge in enumerate(edges):
        order.setdefault(frozenset((edge.from_id, edge.to_id)), index)
    return [
        Connection(
            a,
            b,
            forward=tuple(actions[(a, b)]),
            back=tuple(actions.get((b, a), ())),
            b_to_a=(b, a) in actions,
        )
        for a, b in sorted(pairs.values(), key=lambda pair: order[frozenset(pair)])
    ]


def room_label(graph: MapReader, room: int) -> str:
    """A room as every map shows it: its name and id, `Forest (L76)` (names repeat)."""
    return f"{_display_name(graph, room)} (L{room})"


def mermaid(
    graph: MapReader,
    direction: Literal["LR", "TD"] = "LR",
    rooms: Collection[int] | None = None,
) -> str:
    """A Mermaid flowchart: nodes `L{id}["Name (L{id})"]`; one edge per connection,
    `L1 -->|enter window| L2` one way, `L1 <-->|north / south| L2` both ways (known only).
    `rooms`: only these rooms and the connections between them (all when None)."""
    lines = [f"graph {direction}"]
    for room in graph.location_ids():
        if rooms is not None and room not in rooms:
            continue
        lines.append(f'    L{room}["{_mermaid_text(_display_name(graph, room))} (L{room})"]')
    for link in connections(graph):
        if rooms is not None and (link.a not in rooms or link.b not in rooms):
            continue
        arrow = "<-->" if link.two_way else "-->"
        label = f"|{_mermaid_text(link.label)}|" if link.label else ""
        lines.append(f"    L{link.a} {arrow}{label} L{link.b}")
    return "\n".join(lines)


def dot(graph: MapReader) -> str:
    """A Graphviz digraph with the same nodes and edges as `mermaid` (`dir=both` both ways)."""
    lines = ["digraph map {", "    rankdir=LR;", "    node [shape=box];"]
    for room in graph.location_ids():
        lines.append(f"    L{room} [label={_dot_string(room_label(graph, room))}];")
    for link in connections(graph):
        attributes = [f"label={_dot_string(link.label)}"] if link.label else []
        if link.two_way:
            attributes.append("dir=both")
        shown = f" [{', '.join(attributes)}]" if attributes else ""
        lines.append(f"    L{link.a} -> L{link.b}{shown};")
    lines.append("}")
    return "\n".join(lines)


def routing_summary(graph: MapReader, from_id: int, limit: int = 5) -> str:
    """A few prompt lines: exits from here, from up to `limit` neighbours, what is unexplored.

    E.g. "From Hall (12): north -> Study (14); south -> ..."
    """
    lines = [_exits_line(graph, from_id, back_to=None)]
    for neighbour in graph.neighbors(from_id)[: max(limit, 0)]:
        lines.append(_exits_line(graph, neighbour, back_to=from_id))
    return "\n".join([*lines, *_unexplored_lines(graph, from_id)])


def nearby_summary(graph: MapReader, from_id: int, moves: int = 3) -> str:
    """The map compressed around `from_id`: every room within `moves` moves with its exits,
    nearest first, then a count of the rooms further away (never a silent cut)."""
    near = graph.rooms_within(from_id, moves)
    lines = [
        _exits_line(graph, room, back_to=None) for room in sorted(near, key=lambda r: (near[r], r))
    ]
    rest = len(set(graph.location_ids()) - set(near))
    if rest:
        lines.append(f"(+{rest} more known rooms further than {moves} moves away)")
    return "\n".join([*lines, *_unexplored_lines(graph, from_id)])


def _unexplored_lines(graph: MapReader, from_id: int) -> list[str]:
    """The unexplored exits here, and the nearest room that has some, with the way there."""
    lines: list[str] = []
    here = graph.unexplored_exits(from_id)
    if here:
        lines.append(f"Unexplored exits here: {', '.join(here)}")
    nearest = graph.nearest_unexplored(from_id)
    if nearest is not None and nearest[0] != from_id:
        room, path = nearest
        lines.append(
            f"Nearest unexplored: {_label(graph, room)} via {', '.join(path)}"
            f" (untried: {', '.join(graph.unexplored_exits(room))})"
        )
    return lines


def _display_name(graph: MapReader, room: int) -> str:
    return graph.name_of(room) or f"Location {room}"


def _label(graph: MapReader, room: int) -> str:
    return f"{_display_name(graph, room)} ({room})"


def _exits_line(graph: MapReader, room: int, back_to: int | None) -> str:
    moves = graph.exits_from(room)
    if not moves:
        return f"From {_label(graph, room)}: no known exits"
    parts = []
    for action, target in moves.items():
        back = " [back]" if back_to is not None and target == back_to else ""
        parts.append(f"{action} -> {_label(graph, target)}{back}")
    return f"From {_label(graph, room)}: {'; '.join(parts)}"


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
