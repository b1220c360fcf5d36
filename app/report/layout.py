"""Where each room of a map is drawn: a compass grid (north up), then one edge per connection,
its label, and a stub per unexplored exit.

Rooms get grid cells from `placement` (each on its moves' bearings as far as the map allows;
one room per cell, and boxes are smaller than cells, so no two boxes overlap). Edges are
straight between box borders, or bent (a quadratic curve) when a straight line would cross
another room's box. Labels go where `edge_labels` finds them room: on or beside their edge,
over no room box, no stub's circle and no other label (the drawing grows if one must go
outside it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from cairn.report.edge_labels import EdgeLabel, LabelRequest, Rect, place_labels
from cairn.report.placement import place_rooms
from cairn.report.placement_geometry import COMPASS, Cell
from cairn.services.map import Connection, MapGraph, connections

CELL_W, CELL_H = 236, 100
BOX_W, BOX_H = 160, 48
MARGIN = 48
Point = tuple[float, float]

_ACROSS_COLUMN = (BOX_W / 2, (BOX_W + CELL_W) / 2)
"""Where a curve may be pulled across a column: its boxes' middle, the gap after them."""
_ACROSS_ROW = (BOX_H / 2, (BOX_H + CELL_H) / 2)
"""... and across a row."""
_FIRST_X, _FIRST_Y = MARGIN + BOX_W / 2, MARGIN + BOX_H / 2
"""The centre of the box in the top-left cell."""
_GAP_POINTS = 80
"""At most this many gap points are tried for one edge."""
_CLEAR = 6
"""How far outside another room's box an edge counts as passing through it."""
Area = tuple[float, float, float, float]
"""A room's box grown by `_CLEAR` on every side: left, right, top, bottom."""
CURVE_POINTS = 40
"""Points sampled along each edge (plus one) to place its label."""
STUB_DIRECTIONS: dict[str, tuple[float, float]] = {
    **COMPASS,
    "up": (0.45, -1),
    "down": (-0.45, 1),
    "in": (1, 0.45),
    "out": (-1, -0.45),
}
"""Which way an unexplored exit's stub points (up/down/in/out get slanted stubs of their own)."""
STUB_LENGTH = 18.0
STUB_RADIUS = 5.0
"""The radius of the circle (holding a `?`) at a stub's end."""
_BENDS = (48.0, -48.0, 96.0, -96.0, 150.0, -150.0, 210.0, -210.0, 280.0, -280.0)
"""How far an edge's control point is pulled off its middle, in turn, to clear other boxes."""


@dataclass(frozen=True, slots=True)
class Box:
    """A room's box in pixels: top-left corner, width and height."""

    room: int
    x: float
    y: float
    w: float = BOX_W
    h: float = BOX_H

    @property
    def center(self) -> Point:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def contains(self, point: Point, pad: float = 0.0) -> bool:
        """Whether `point` is inside the box grown by `pad` on every side."""
        px, py = point
        return (
            self.x - pad <= px <= self.x + self.w + pad
            and self.y - pad <= py <= self.y + self.h + pad
        )

    def overlaps(self, other: Box) -> bool:
        """Whether the two boxes share any area (touching borders do not count)."""
        return (
            self.x < other.x + other.w
            and other.x < self.x + self.w
            and self.y < other.y + other.h
            and other.y < self.y + self.h
        )

    def border_towards(self, point: Point) -> Point:
        """Where the line from the box's center to `point` leaves the box."""
        cx, cy = self.center
        return _border(cx, cy, self.w / 2, self.h / 2, self.y, point)


def _border(cx: float, cy: float, half_w: float, half_h: float, top: float, point: Point) -> Point:
    """`Box.border_towards` for the box centred on (`cx`, `cy`), `half_w` and `half_h` from
    its sides, its top at `top` (an edge tries many points from the same two boxes)."""
    dx, dy = point[0] - cx, point[1] - cy
    if dx == 0 and dy == 0:
        return (cx, top)
    scale = min(half_w / abs(dx) if dx else math.inf, half_h / abs(dy) if dy else math.inf)
    return (cx + dx * scale, cy + dy * scale)


@dataclass(frozen=True, slots=True)
class DrawnEdge:
    """One connection as drawn: from `start` (on the box of `link.a`) through the quadratic
    curve's `control` point to `end` (on the box of `link.b`)."""

    link: Connection
    start: Point
    control: Point
    end: Point
    label: EdgeLabel | None = None
    """Where the edge's label is drawn (None: the edge has none)."""

    def point_at(self, t: float) -> Point:
        """The point of the curve at `t` (0: `start`, 1: `end`)."""
        u = 1 - t
        (x0, y0), (x1, y1), (x2, y2) = self.start, self.control, self.end
        return (u * u * x0 + 2 * u * t * x1 + t * t * x2, u * u * y0 + 2 * u * t * y1 + t * t * y2)

    def path(self) -> str:
        """The SVG path data."""
        (x0, y0), (x1, y1), (x2, y2) = self.start, self.control, self.end
        return f"M{x0:.1f} {y0:.1f} Q{x1:.1f} {y1:.1f} {x2:.1f} {y2:.1f}"


@dataclass(frozen=True, slots=True)
class Stub:
    """An unexplored exit as drawn: a short line from `start` on the room's box to `end`,
    where a circle of `STUB_RADIUS` holds a `?`."""

    room: int
    direction: str
    start: Point
    end: Point


@dataclass(frozen=True, slots=True)
class MapLayout:
    """Every room's box, every connection's drawn edge, every unexplored exit's stub, and the
    drawing's size in pixels."""

    boxes: dict[int, Box]
    edges: list[DrawnEdge]
    width: float
    height: float
    stubs: list[Stub] = field(default_factory=list)


def stub_of(box: Box, direction: str) -> Stub:
    """Where the stub of an unexplored exit `direction` of `box`'s room goes (a word with no
    bearing points east)."""
    cx, cy = box.center
    dx, dy = STUB_DIRECTIONS.get(direction, (1, 0))
    norm = math.hypot(dx, dy)
    x0, y0 = box.border_towards((cx + dx * 1000, cy + dy * 1000))
    end = (x0 + dx / norm * STUB_LENGTH, y0 + dy / norm * STUB_LENGTH)
    return Stub(box.room, direction, (x0, y0), end)


def layout_map(
    graph: MapGraph, extra_rooms: Iterable[int] = (), start: int | None = None
) -> MapLayout:
    """Lay out every room of `graph` plus `extra_rooms` (rooms known only from memories); the
    part of the map holding `start` comes first (top left), else the largest."""
    links = connections(graph)
    rooms = sorted(set(graph.location_ids()) | set(extra_rooms))
    cells = place_rooms(rooms, links, start)
    boxes = {
        room: Box(room, MARGIN + col * CELL_W, MARGIN + row * CELL_H)
        for room, (col, row) in cells.items()
    }
    occupied = {cell: room for room, cell in cells.items()}
    clear = {
        room: (box.x - _CLEAR, box.x + box.w + _CLEAR, box.y - _CLEAR, box.y + box.h + _CLEAR)
        for room, box in boxes.items()
    }
    sampling: dict[int, list[int]] = {}  # `_coarse_first` by sample count, for every edge
    edges = [_draw_edge(link, boxes, occupied, clear, sampling) for link in links]
    columns = max((col for col, _ in cells.values()), default=-1) + 1
    rows = max((row for _, row in cells.values()), default=-1) + 1
    width = 2 * MARGIN + max(columns - 1, 0) * CELL_W + BOX_W
    height = 2 * MARGIN + max(rows - 1, 0) * CELL_H + BOX_H
    requests = [
        LabelRequest(index, label, _curve(edge))
        for index, edge in enumerate(edges)
        if (label := edge.link.label)
    ]
    stubs = [
        stub_of(box, direction)
        for room, box in sorted(boxes.items())
        for direction in graph.unexplored_exits(room)
    ]
    rects = [Rect(box.x, box.y, box.x + box.w, box.y + box.h) for box in boxes.values()]
    circles = [
        Rect(x - STUB_RADIUS, y - STUB_RADIUS, x + STUB_RADIUS, y + STUB_RADIUS)
        for x, y in (stub.end for stub in stubs)
    ]
    labels, bounds = place_labels(requests, rects, Rect(0, 0, width, height), circles)
    edges = [
        DrawnEdge(edge.link, edge.start, edge.control, edge.end, labels.get(index))
        for index, edge in enumerate(edges)
    ]
    return MapLayout(
        boxes=boxes,
        edges=edges,
        width=math.ceil(bounds.right),
        height=math.ceil(bounds.bottom),
        stubs=stubs,
    )


def _weights_at(t: float) -> tuple[float, float, float]:
    """The weights of a quadratic curve's start, control point and end at `t`, as
    `DrawnEdge.point_at` computes them (so a point made from them is the same float)."""
    u = 1 - t
    return (u * u, 2 * u * t, t * t)


_CURVE_WEIGHTS = [_weights_at(i / CURVE_POINTS) for i in range(CURVE_POINTS + 1)]


def _curve(edge: DrawnEdge) -> list[Point]:
    """`edge.point_at(i / CURVE_POINTS)` for i from 0 to `CURVE_POINTS` (the same floats)."""
    (x0, y0), (x1, y1), (x2, y2) = edge.start, edge.control, edge.end
    return [(a * x0 + b * x1 + c * x2, a * y0 + b * y1 + c * y2) for a, b, c in _CURVE_WEIGHTS]


def _draw_edge(
    link: Connection,
    boxes: dict[int, Box],
    occupied: dict[Cell, int],
    clear: dict[int, Area],
    sampling: dict[int, list[int]],
) -> DrawnEdge:
    """Straight when that crosses no other box, else the first bend that crosses none (or
    the fewest): bulging to either side of the middle, a little then more, or round a corner
    (the control point level with one end and plumb with the other); else through the gaps
    between boxes near the edge, the shortest curve first (found only when needed: most edges
    are done before)."""
    first, second = boxes[link.a], boxes[link.b]
    (ax, ay), (bx, by) = first.center, second.center
    middle = ((ax + bx) / 2, (ay + by) / 2)
    length = math.dist((ax, ay), (bx, by)) or 1.0
    normal = (-(by - ay) / length, (bx - ax) / length)
    bulges = [(middle[0] + normal[0] * bend, middle[1] + normal[1] * bend) for bend in _BENDS]
    corners = [(ax, by), (bx, ay)] if ax != bx and ay != by else []
    ends = (link.a, link.b)
    best: DrawnEdge | None = None
    best_hits = math.inf
    tried = itertools.chain(
        (middle, *bulges[:4], *corners, *bulges[4:]), _later_gap_points(first, second)
    )
    a_half_w, a_half_h, b_half_w, b_half_h = first.w / 2, first.h / 2, second.w / 2, second.h / 2
    for control in tried:
        start = _border(ax, ay, a_half_w, a_half_h, first.y, control)
        end = _border(bx, by, b_half_w, b_half_h, second.y, control)
        hits = _crossings(start, control, end, ends, occupied, clear, sampling, best_hits)
        if hits < best_hits:
            best, best_hits = DrawnEdge(link, start, control, end), hits
        if hits == 0:
            break
    assert best is not None
    return best


def _later_gap_points(first: Box, second: Box) -> Iterator[Point]:
    """`_gap_points`, worked out when the first is asked for."""
    yield from _gap_points(first, second)


def _gap_points(first: Box, second: Box) -> list[Point]:
    """Points in the gaps between rows and columns of boxes, around two boxes (two cells
    further on every side), the nearest to both first."""
    (ax, ay), (bx, by) = first.center, second.center
    columns = range(
        round((min(ax, bx) - MARGIN - BOX_W / 2) / CELL_W) - 2,
        round((max(ax, bx) - MARGIN - BOX_W / 2) / CELL_W) + 2,
    )
    rows = range(
        round((min(ay, by) - MARGIN - BOX_H / 2) / CELL_H) - 2,
        round((max(ay, by) - MARGIN - BOX_H / 2) / CELL_H) + 2,
    )
    xs = [MARGIN + col * CELL_W + shift for col in columns for shift in _ACROSS_COLUMN]
    ys = [MARGIN + row * CELL_H + shift for row in rows for shift in _ACROSS_ROW]
    points = [(x, y) for x in xs for y in ys]
    points.sort(key=lambda p: (math.dist(p, (ax, ay)) + math.dist(p, (bx, by)), p))
    return points[:_GAP_POINTS]


def _crossings(
    start: Point,
    control: Point,
    end: Point,
    ends: tuple[int, int],
    occupied: dict[Cell, int],
    clear: dict[int, Area],
    sampling: dict[int, list[int]],
    enough: float = math.inf,
) -> int:
    """How many other rooms' boxes (grown by `_CLEAR`: `clear`, left right top bottom) the
    curve from `start` through `control` to `end` passes through, sampled every ~8 px;
    counting no further than `enough`.

    A sample can only be in the box of the room on its nearest cell (a grown box lies inside
    its cell). The samples are taken coarse to fine (`_coarse_first`): the count does not
    depend on their order, and most curves tried cross a box, which a coarse pass finds in a
    few samples."""
    (x0, y0), (x1, y1), (x2, y2) = start, control, end
    length = math.dist(start, control) + math.dist(control, end)
    samples = max(int(length / 8), 2)
    order = sampling.get(samples)
    if order is None:
        order = sampling[samples] = _coarse_first(samples)
    crossed: set[int] = set()
    for i in order:
        t = i / samples
        u = 1 - t
        x = u * u * x0 + 2 * u * t * x1 + t * t * x2
        y = u * u * y0 + 2 * u * t * y1 + t * t * y2
        room = occupied.get((round((x - _FIRST_X) / CELL_W), round((y - _FIRST_Y) / CELL_H)))
        if room is None or room in ends or room in crossed:
            continue
        left, right, top, bottom = clear[room]
        if left <= x <= right and top <= y <= bottom:
            crossed.add(room)
            if len(crossed) >= enough:
                break
    return len(crossed)


def _coarse_first(samples: int) -> list[int]:
    """1 to `samples` - 1: every 2**k-th first for the largest k, then those halfway between,
    and so on."""
    strides = [1 << k for k in range(samples.bit_length() - 1, -1, -1)]
    return [i for stride in strides for i in range(stride, samples, 2 * stride)]
