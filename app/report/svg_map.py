"""The map as inline SVG: rooms shaded by their memories, dangers, deaths, edges, exits left."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from cairn.report.edge_labels import LABEL_FONT_PX
from cairn.report.layout import STUB_RADIUS, Box, DrawnEdge, MapLayout, Stub, layout_map
from cairn.services.map import MapGraph, room_label

LABEL_CHARS = 25
_LIGHT, _DARK = (255, 255, 255), (106, 165, 220)
MAP_STYLE = (
    """
.map { font-family: system-ui, sans-serif; background: #fbfbf8; }
.map .edge { fill: none; stroke: #777; stroke-width: 1.4; }
.map .edge.one-way { stroke-dasharray: 5 3; }
"""
    f".map .edge-label {{ font-size: {LABEL_FONT_PX}px; fill: #333; paint-order: stroke;"
    """ stroke: #fbfbf8;
  stroke-width: 3px; }
.map .unexplored line { stroke: #b7791f; stroke-width: 1.5; stroke-dasharray: 3 2; }
.map .unexplored circle { fill: #fff7e6; stroke: #b7791f; }
.map .unexplored text { font-size: 8px; fill: #b7791f; font-weight: bold; }
.map .room { cursor: pointer; }
.map .room .box { stroke: #456; stroke-width: 1.2; }
.map .room.danger .box { stroke: #c62828; stroke-width: 3; }
.map .room .current-ring { fill: none; stroke: #111; stroke-width: 2.5; }
.map .room.selected .box { stroke: #6a1b9a; stroke-width: 3.5; }
.map .room .name { font-size: 11px; fill: #111; }
.map .room .count { font-size: 9px; fill: #234; }
.map .room .skull { font-size: 15px; fill: #b71c1c; font-weight: bold; }
.map .badge rect { fill: #2e7d32; }
.map .badge.here rect { fill: #111; }
.map .badge text { font-size: 9px; fill: #fff; }
"""
)
"""The map's style; edge labels at `LABEL_FONT_PX`, the size the layout estimates them at."""


@dataclass(frozen=True)
class MapMarks:
    """What the map shows besides the graph: visible memories per room, danger rooms, deaths
    per room, the start and current rooms, and names for rooms the map has no name for."""

    memories: dict[int, int] = field(default_factory=dict)
    danger: frozenset[int] = frozenset()
    deaths: dict[int, int] = field(default_factory=dict)
    start: int | None = None
    current: int | None = None
    names: dict[int, str] = field(default_factory=dict)

    def label(self, graph: MapGraph, room: int) -> str:
        """`Name (L12)`: the map's name, else one of `names`, else `Location 12 (L12)`."""
        name = graph.name_of(room) or self.names.get(room)
        return f"{name} (L{room})" if name else room_label(graph, room)


def map_svg(graph: MapGraph, marks: MapMarks | None = None) -> str:
    """The whole map as one `<svg>` element (no external references)."""
    marks = marks or MapMarks()
    extra = set(marks.memories) | set(marks.deaths)
    layout = layout_map(graph, extra_rooms=extra, start=marks.start)
    return render_layout(graph, layout, marks)


def render_layout(graph: MapGraph, layout: MapLayout, marks: MapMarks) -> str:
    """Draw an already computed layout."""
    most = max(marks.memories.values(), default=0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="map" id="map-svg" '
        f'width="{layout.width:.0f}" height="{layout.height:.0f}" '
        f'viewBox="0 0 {layout.width:.0f} {layout.height:.0f}" role="img" '
        f'aria-label="map: {len(layout.boxes)} rooms">',
        f"<style>{MAP_STYLE}</style>",
        "<defs>"
        '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" '
        'fill="#555"/></marker></defs>',
        '<g class="edges">',
        *(_edge(edge) for edge in layout.edges),
        "</g>",
        '<g class="exits">',
        *(_stub(stub) for stub in layout.stubs),
        "</g>",
        '<g class="edge-labels">',
        *(_edge_label(edge) for edge in layout.edges if edge.label),
        "</g>",
        '<g class="rooms">',
        *(_room(graph, box, marks, most) for _, box in sorted(layout.boxes.items())),
        "</g>",
        "</svg>",
    ]
    return "\n".join(parts)


def shade(count: int, most: int) -> str:
    """White for no memories up to a mid blue for the room with the most (square-root scale)."""
    t = math.sqrt(count / most) if most > 0 and count > 0 else 0.0
    r, g, b = (round(lo + (hi - lo) * t) for lo, hi in zip(_LIGHT, _DARK, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def _edge(edge: DrawnEdge) -> str:
    link = edge.link
    kind = "two-way" if link.two_way else "one-way"
    arrow = "" if link.two_way else ' marker-end="url(#arrow)"'
    title = escape(link.label or "(move with no command recorded)")
    return (
        f'<path class="edge {kind}" data-a="{link.a}" data-b="{link.b}" d="{edge.path()}"'
        f"{arrow}><title>{title}</title></path>"
    )


def _edge_label(edge: DrawnEdge) -> str:
    label = edge.label
    assert label is not None
    baselines = label.baselines()
    if len(label.lines) == 1:
        return (
            f'<text class="edge-label" x="{label.x:.1f}" y="{baselines[0]:.1f}" '
            f'text-anchor="middle">{escape(label.lines[0])}</text>'
        )
    lines = "".join(
        f'<tspan x="{label.x:.1f}" y="{y:.1f}">{escape(line)}</tspan>'
        for line, y in zip(label.lines, baselines, strict=True)
    )
    return f'<text class="edge-label" text-anchor="middle">{lines}</text>'


def _stub(stub: Stub) -> str:
    (x0, y0), (x1, y1) = stub.start, stub.end
    return (
        f'<g class="unexplored" data-room="{stub.room}" data-direction="{stub.direction}">'
        f"<title>unexplored exit: {stub.direction}</title>"
        f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}"/>'
        f'<circle cx="{x1:.1f}" cy="{y1:.1f}" r="{STUB_RADIUS:g}"/>'
        f'<text x="{x1:.1f}" y="{y1 + 3:.1f}" text-anchor="middle">?</text></g>'
    )


def _room(graph: MapGraph, box: Box, marks: MapMarks, most: int) -> str:
    room = box.room
    count = marks.memories.get(room, 0)
    deaths = marks.deaths.get(room, 0)
    classes = ["room"]
    classes += ["danger"] if room in marks.danger else []
    classes += ["death"] if deaths else []
    classes += ["current"] if room == marks.current else []
    classes += ["start"] if room == marks.start else []
    label = marks.label(graph, room)
    notes = [f"{count} memor{'y' if count == 1 else 'ies'}"]
    notes += ["danger"] if room in marks.danger else []
    notes += [f"died here {deaths}x"] if deaths else []
    notes += ["current room"] if room == marks.current else []
    notes += ["start room"] if room == marks.start else []
    cx, cy = box.center
    out = [
        f'<g class="{" ".join(classes)}" data-id="{room}" data-memories="{count}" '
        f'data-label="{escape(label, quote=True)}" tabindex="0">',
        f"<title>{escape(label)}: {escape(', '.join(notes))}</title>",
    ]
    if room == marks.current:
        out.append(
            f'<rect class="current-ring" x="{box.x - 5:.1f}" y="{box.y - 5:.1f}" '
            f'width="{box.w + 10:.1f}" height="{box.h + 10:.1f}" rx="9"/>'
        )
    out.append(
        f'<rect class="box" x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" '
        f'height="{box.h:.1f}" rx="6" fill="{shade(count, most)}"/>'
    )
    lines = _label_lines(label, room)
    first_y = cy + 4 - 7 * (len(lines) - 1)
    for i, line in enumerate(lines):
        out.append(
            f'<text class="name" x="{cx:.1f}" y="{first_y + 14 * i:.1f}" '
            f'text-anchor="middle">{escape(line)}</text>'
        )
    if count:
        out.append(
            f'<text class="count" x="{box.x + box.w - 5:.1f}" y="{box.y + box.h - 5:.1f}" '
            f'text-anchor="end">{count}</text>'
        )
    if deaths:
        out.append(
            f'<text class="skull" x="{box.x + box.w - 4:.1f}" y="{box.y + 15:.1f}" '
            f'text-anchor="end">\u2620{deaths if deaths > 1 else ""}</text>'
        )
    badges = [("start", "start")] if room == marks.start else []
    badges += [("here", "you are here")] if room == marks.current else []
    x = box.x + 4
    for css, text in badges:
        width = 7 * len(text) + 8
        out.append(
            f'<g class="badge {css}"><rect x="{x:.1f}" y="{box.y - 9:.1f}" width="{width}" '
            f'height="13" rx="6"/><text x="{x + width / 2:.1f}" y="{box.y + 1:.1f}" '
            f'text-anchor="middle">{text}</text></g>'
        )
        x += width + 4
    out.append("</g>")
    return "".join(out)


def _label_lines(label: str, room: int) -> list[str]:
    """`Name (L12)` on one line when it fits, else the name (cut with an ellipsis) over the id."""
    if len(label) <= LABEL_CHARS:
        return [label]
    name = label[: -len(f" (L{room})")]
    if len(name) > LABEL_CHARS:
        name = name[: LABEL_CHARS - 1].rstrip() + "\u2026"
    return [name, f"(L{room})"]
