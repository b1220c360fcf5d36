"""Renderings of a map: Mermaid, Graphviz dot, and the prompt's routing summaries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from cairn.services.map.graph import MapGraph


def mermaid(graph: MapGraph, direction: Literal["LR", "TD"] = "LR") -> str:
    """A Mermaid flowchart: nodes `L{id}["Name"]`, edges `L1 -->|north| L2` (known only)."""
    lines = [f"graph {direction}"]
    for room in graph.location_ids():
        lines.append(f'    L{room}["{_mermaid_text(_display_name(graph, room))}"]')
    for edge in graph.edges():
        if edge.action is None:
            lines.append(f"    L{edge.from_id} --> L{edge.to_id}")
        else:
            label = _mermaid_text(edge.action)
            lines.append(f"    L{edge.from_id} -->|{label}| L{edge.to_id}")
    return "\n".join(lines)


def dot(graph: MapGraph) -> str:
    """A Graphviz digraph with the same nodes and edges as `mermaid`."""
    lines = ["digraph map {", "    rankdir=LR;", "    node [shape=box];"]
    for room in graph.location_ids():
        lines.append(f"    L{room} [label={_dot_string(_display_name(graph, room))}];")
    for edge in graph.edges():
        attributes = "" if edge.action is None else f" [label={_dot_string(edge.action)}]"
        lines.append(f"    L{edge.from_id} -> L{edge.to_id}{attributes};")
    lines.append("}")
    return "\n".join(lines)


def routing_summary(graph: MapGraph, from_id: int, limit: int = 5) -> str:
    """A few prompt lines: exits from here, from up to `limit` neighbours, what is unexplored.

    E.g. "From West of House (180): north -> North of House (81); south -> ..."
    """
    lines = [_exits_line(graph, from_id, back_to=None)]
    for neighbour in graph.neighbors(from_id)[: max(limit, 0)]:
        lines.append(_exits_line(graph, neighbour, back_to=from_id))
    return "\n".join([*lines, *_unexplored_lines(graph, from_id)])


def nearby_summary(graph: MapGraph, from_id: int, moves: int = 3) -> str:
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


def _unexplored_lines(graph: MapGraph, from_id: int) -> list[str]:
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


def _display_name(graph: MapGraph, room: int) -> str:
    return graph.name_of(room) or f"Location {room}"


def _label(graph: MapGraph, room: int) -> str:
    return f"{_display_name(graph, room)} ({room})"


def _exits_line(graph: MapGraph, room: int, back_to: int | None) -> str:
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
