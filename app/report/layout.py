"""Where each room of a map is drawn: a compass grid (north up), then one edge per connection.

Rooms are placed breadth-first from the start room: a room reached by `north` goes one cell
up, `east` one cell right, the diagonals diagonally; a move with no compass word (`enter
window`, `up`) takes the nearest free cell. When the wanted cell is taken, the nearest free cell
to it is used, so every room has a cell of its own and no two boxes can overlap (boxes are
smaller than cells). Empty rows and columns are then removed, and separate parts of the map are
packed side by side. Edges are straight between box borders, or bent (a quadratic curve) when a
straight line would cross another room's box.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from cairn.services.map import Connection, MapGraph, connections

CELL_W, CELL_H = 236, 100
BOX_W, BOX_H = 160, 48
MARGIN = 48
WRAP_COLUMNS = 14
"""Separate parts of the map are packed left to right, in bands at most this wide."""

Cell = tuple[int, int]
Point = tuple[float, float]

COMPASS: dict[str, Cell] = {
    "north": (0, -1),
    "south": (0, 1),
    "east": (1, 0),
    "west": (-1, 0),
    "northeast": (1, -1),
    "northwest": (-1, -1),
    "southeast": (1, 1),
    "southwest": (-1, 1),
}
_FREE_ORDER: tuple[Cell, ...] = ((1, 0), (0, 1), (1, 1), (1, -1), (0, -1), (-1, 1), (-1, 0))
"""Where a room reached without a compass word goes, when free (east first, reading order)."""
_BENDS = (48.0, -48.0, 96.0, -96.0, 150.0, -150.0)


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
        dx, dy = point[0] - cx, point[1] - cy
        if dx == 0 and dy == 0:
            return (cx, self.y)
        scale = min(
            (self.w / 2) / abs(dx) if dx else math.inf,
            (self.h / 2) / abs(dy) if dy else math.inf,
        )
        return (cx + dx * scale, cy + dy * scale)


@dataclass(frozen=True, slots=True)
class DrawnEdge:
    """One connection as drawn: from `start` (on the box of `link.a`) through the quadratic
    curve's `control` point to `end` (on the box of `link.b`)."""

    link: Connection
    start: Point
    control: Point
    end: Point

    def point_at(self, t: float) -> Point:
        """The point of the curve at `t` (0: `start`, 1: `end`)."""
        u = 1 - t
        (x0, y0), (x1, y1), (x2, y2) = self.start, self.control, self.end
        return (u * u * x0 + 2 * u * t * x1 + t * t * x2, u * u * y0 + 2 * u * t * y1 + t * t * y2)

    @property
    def label_at(self) -> Point:
        """The curve's middle (where its label goes)."""
        return self.point_at(0.5)

    def path(self) -> str:
        """The SVG path data."""
        (x0, y0), (x1, y1), (x2, y2) = self.start, self.control, self.end
        return f"M{x0:.1f} {y0:.1f} Q{x1:.1f} {y1:.1f} {x2:.1f} {y2:.1f}"


@dataclass(frozen=True, slots=True)
class MapLayout:
    """Every room's box, every connection's drawn edge, and the drawing's size in pixels."""

    boxes: dict[int, Box]
    edges: list[DrawnEdge]
    width: float
    height: float


def layout_map(
    graph: MapGraph, extra_rooms: Iterable[int] = (), start: int | None = None
) -> MapLayout:
    """Lay out every room of `graph` plus `extra_rooms` (rooms known only from memories),
    starting from `start` (default: the lowest id of the largest part)."""
    links = connections(graph)
    rooms = sorted(set(graph.location_ids()) | set(extra_rooms))
    cells = place_rooms(rooms, links, start)
    boxes = {
        room: Box(room, MARGIN + col * CELL_W, MARGIN + row * CELL_H)
        for room, (col, row) in cells.items()
    }
    occupied = {cell: room for room, cell in cells.items()}
    edges = [_draw_edge(link, boxes, occupied) for link in links]
    columns = max((col for col, _ in cells.values()), default=-1) + 1
    rows = max((row for _, row in cells.values()), default=-1) + 1
    width = 2 * MARGIN + max(columns - 1, 0) * CELL_W + BOX_W
    height = 2 * MARGIN + max(rows - 1, 0) * CELL_H + BOX_H
    return MapLayout(boxes=boxes, edges=edges, width=width, height=height)


def compass_vector(actions: Iterable[str]) -> Cell | None:
    """The grid step of the first compass action among `actions`, else None."""
    for action in actions:
        if action in COMPASS:
            return COMPASS[action]
    return None


def place_rooms(rooms: list[int], links: list[Connection], start: int | None) -> dict[int, Cell]:
    """One distinct grid cell per room (see the module docstring)."""
    adjacency: dict[int, list[tuple[int, Cell | None]]] = {room: [] for room in rooms}
    for link in links:
        step = compass_vector(link.forward)
        if step is None and (back := compass_vector(link.back)) is not None:
            step = (-back[0], -back[1])
        adjacency.setdefault(link.a, []).append((link.b, step))
        reverse = None if step is None else (-step[0], -step[1])
        adjacency.setdefault(link.b, []).append((link.a, reverse))
    parts = _components(adjacency)
    parts.sort(key=lambda part: (start not in part, -len(part), min(part)))
    placed: dict[int, Cell] = {}
    band_top, band_height, left = 0, 0, 0
    for part in parts:
        root = start if start in part else min(part, key=lambda r: (-len(adjacency[r]), r))
        cells = _compact(_place_part(root, adjacency))
        width = max(c for c, _ in cells.values()) + 1
        height = max(r for _, r in cells.values()) + 1
        if left and left + width > WRAP_COLUMNS:
            band_top, band_height, left = band_top + band_height + 1, 0, 0
        for room, (col, row) in cells.items():
            placed[room] = (left + col, band_top + row)
        left += width + 1
        band_height = max(band_height, height)
    return placed


def _components(adjacency: dict[int, list[tuple[int, Cell | None]]]) -> list[set[int]]:
    seen: set[int] = set()
    parts: list[set[int]] = []
    for room in sorted(adjacency):
        if room in seen:
            continue
        part, queue = {room}, deque([room])
        while queue:
            for neighbour, _ in adjacency[queue.popleft()]:
                if neighbour not in part:
                    part.add(neighbour)
                    queue.append(neighbour)
        seen |= part
        parts.append(part)
    return parts


def _place_part(root: int, adjacency: dict[int, list[tuple[int, Cell | None]]]) -> dict[int, Cell]:
    """Breadth-first from `root`: each room next to the room it was first reached from."""
    cells: dict[int, Cell] = {root: (0, 0)}
    taken: set[Cell] = {(0, 0)}
    queue = deque([root])
    while queue:
        room = queue.popleft()
        here = cells[room]
        # compass moves first (they say where to go), then the others, each in a stable order
        for neighbour, step in sorted(adjacency[room], key=lambda n: (n[1] is None, n[0])):
            if neighbour in cells:
                continue
            cell = _free_cell(taken, here, step)
            cells[neighbour] = cell
            taken.add(cell)
            queue.append(neighbour)
    return cells


def _free_cell(taken: set[Cell], parent: Cell, step: Cell | None) -> Cell:
    """The wanted cell (parent + step) when free, else the nearest free cell to it."""
    px, py = parent
    if step is None:
        for dx, dy in _FREE_ORDER:
            if (px + dx, py + dy) not in taken:
                return (px + dx, py + dy)
        wanted = (px + 1, py)
    else:
        wanted = (px + step[0], py + step[1])
    wx, wy = wanted
    radius = 0
    while True:
        ring = [
            (wx + dx, wy + dy)
            for dx in range(-radius, radius + 1)
            for dy in range(-radius, radius + 1)
            if max(abs(dx), abs(dy)) == radius and (wx + dx, wy + dy) not in taken
        ]
        if ring:
            return min(
                ring,
                key=lambda c: (
                    math.dist(c, wanted),
                    math.dist(c, parent),
                    c[1],
                    c[0],
                ),
            )
        radius += 1


def _compact(cells: dict[int, Cell]) -> dict[int, Cell]:
    """Shift to (0, 0) and drop empty columns and rows (order kept, so cells stay distinct)."""
    columns = {col: i for i, col in enumerate(sorted({c for c, _ in cells.values()}))}
    rows = {row: i for i, row in enumerate(sorted({r for _, r in cells.values()}))}
    return {room: (columns[c], rows[r]) for room, (c, r) in cells.items()}


def _draw_edge(link: Connection, boxes: dict[int, Box], occupied: dict[Cell, int]) -> DrawnEdge:
    """Straight when that crosses no other box, else the first bend that crosses none (or
    the fewest)."""
    first, second = boxes[link.a], boxes[link.b]
    (ax, ay), (bx, by) = first.center, second.center
    middle = ((ax + bx) / 2, (ay + by) / 2)
    length = math.dist((ax, ay), (bx, by)) or 1.0
    normal = (-(by - ay) / length, (bx - ax) / length)
    best: DrawnEdge | None = None
    best_hits = math.inf
    for bend in (0.0, *_BENDS):
        control = (middle[0] + normal[0] * bend, middle[1] + normal[1] * bend)
        edge = DrawnEdge(
            link, first.border_towards(control), control, second.border_towards(control)
        )
        hits = _crossings(edge, boxes, occupied)
        if hits < best_hits:
            best, best_hits = edge, hits
        if hits == 0:
            break
    assert best is not None
    return best


def _crossings(edge: DrawnEdge, boxes: dict[int, Box], occupied: dict[Cell, int]) -> int:
    """How many other rooms' boxes the edge passes through (sampled every ~8 px)."""
    ends = {edge.link.a, edge.link.b}
    length = math.dist(edge.start, edge.control) + math.dist(edge.control, edge.end)
    samples = max(int(length / 8), 2)
    crossed: set[int] = set()
    for i in range(1, samples):
        x, y = edge.point_at(i / samples)
        cell = (round((x - MARGIN - BOX_W / 2) / CELL_W), round((y - MARGIN - BOX_H / 2) / CELL_H))
        room = occupied.get(cell)
        if room is not None and room not in ends and boxes[room].contains((x, y), pad=6):
            crossed.add(room)
    return len(crossed)
