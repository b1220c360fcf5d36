"""The geometry under the map's placement (`placement`): grid cells and compass steps, what a
neighbour costs at an offset (`offset_cost`, the bearing rule `bearing_cost` written out),
and which cells a straight line between two cells' centres passes through (`line_cells`),
with `Known`, the per-call memo of both."""

from __future__ import annotations

import math
from collections.abc import Iterable

Cell = tuple[int, int]

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
_LONG = 2.0
"""The cost of each cell a compass move's edge is longer than one cell."""
_ASKEW = 8.0
"""The cost of a compass move drawn beside its bearing (`west` up and to the left)."""
_AGAINST = 40.0
"""The cost of a compass move drawn against its bearing."""
_NEARNESS = 1.0
"""The cost of each cell between two rooms joined by a move with no compass word."""
Steps = tuple[Cell, ...]
"""The grid steps of the compass moves from a room to a neighbour (see `Adjacency`)."""

def compass_vector(actions: Iterable[str]) -> Cell | None:
    """The grid step of the first compass action among `actions`, else None."""
    for action in actions:
        if action in COMPASS:
            return COMPASS[action]
    return None


def bearing_kept(offset: Cell, step: Cell) -> str:
    """How a neighbour at `offset` (in cells) keeps the compass `step` it was reached by:
    "exact" (on the step's ray), "side" (on its side: `west` and to the left, within 45
    degrees of the bearing) or "against"."""
    ox, oy = offset
    sx, sy = step
    if (ox, oy) == (0, 0):
        return "against"
    if ox * sy == oy * sx and ox * sx + oy * sy > 0:
        return "exact"
    dot = ox * sx + oy * sy
    if dot > 0 and dot * dot >= 0.5 * (ox * ox + oy * oy) * (sx * sx + sy * sy):
        return "side"
    return "against"


def bearing_cost(offset: Cell, step: Cell) -> float:
    """0 for the next cell on the bearing, more the further or the more askew it is."""
    kept = bearing_kept(offset, step)
    length = max(abs(offset[0]), abs(offset[1]))
    if kept == "exact":
        return _LONG * (length - 1)
    if kept == "side":
        return _ASKEW + _LONG * length
    return _AGAINST + _LONG * length


class Known:
    """What the placement has worked out already and asks for again and again; it depends
    on no room's place, so every grid of one `place_rooms` call shares it."""

    def __init__(self) -> None:
        self.lines: dict[tuple[Cell, Cell], tuple[Cell, ...]] = {}
        """The cells whose boxes the straight line between two cells' centres passes through
        (`line_cells`), by the line's ends."""
        self.bands: dict[Cell, tuple[tuple[int, tuple[int, ...]], ...]] = {}
        """The cells near the line from a cell's centre to another's (`line_band`), by the
        offset between the two."""
        self.bearings: dict[Steps, dict[Cell, float]] = {}
        """What a neighbour costs (`offset_cost`), by the steps to it, then by its offset."""


def offset_cost(ox: int, oy: int, steps: Steps) -> float:
    """The cost of a neighbour at offset (`ox`, `oy`) without the rooms in the way: the sum
    of each compass move's `bearing_cost` (`steps` go towards the neighbour; written out, it
    is the placement's most frequent sum), or the distance for rooms joined by no compass move.
    Every cost is a whole number, so sums of them are exact in any order."""
    length = max(ox if ox >= 0 else -ox, oy if oy >= 0 else -oy)
    if not steps:
        return _NEARNESS * max(length - 1, 0)
    total = 0.0
    for sx, sy in steps:
        dot = ox * sx + oy * sy
        if dot > 0 and ox * sy == oy * sx:
            total += _LONG * (length - 1)
        elif dot > 0 and dot * dot >= 0.5 * (ox * ox + oy * oy) * (sx * sx + sy * sy):
            total += _ASKEW + _LONG * length
        else:
            total += _AGAINST + _LONG * length
    return total


def line_cells(start: Cell, end: Cell, known: Known) -> tuple[Cell, ...]:
    """The cells whose boxes the straight line between two cells' centres passes through
    (see `rooms_crossed`), whether a room is on them or not: of the cells near the line
    (`line_band`), those whose box it meets, clipped against the box's slabs (Liang-Barsky).

    The clipping is done where the cells are (not relative to `start`, which could round
    differently), `min` and `max` written out as the builtins pick."""
    (x0, y0), (x1, y1) = start, end
    dx, dy = x1 - x0, y1 - y0
    band = known.bands.get((dx, dy))
    if band is None:
        band = known.bands[(dx, dy)] = line_band(dx, dy)
    found: list[Cell] = []
    for across, alongs in band:
        cx = x0 + across
        if dx == 0:  # the line runs down the column
            low, high = 0.0, 1.0
        else:
            t0, t1 = (cx - 0.4 - x0) / dx, (cx + 0.4 - x0) / dx
            near, far = (t1, t0) if t1 < t0 else (t0, t1)
            low = near if near > 0.0 else 0.0
            high = far if far < 1.0 else 1.0
            if low > high:
                continue
        for along in alongs:
            cy = y0 + along
            if dy == 0:  # along the row
                found.append((cx, cy))
                continue
            t0, t1 = (cy - 0.3 - y0) / dy, (cy + 0.3 - y0) / dy
            near, far = (t1, t0) if t1 < t0 else (t0, t1)
            if not (near if near > low else low) > (far if far < high else high):
                found.append((cx, cy))
    return tuple(found)


def line_band(dx: int, dy: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The cells (by column, then row, from the line's start) of the rectangle between a
    cell's centre and the centre `dx`, `dy` from it whose centres lie within a box's half
    diagonal (half a cell) of the line between them, column by column."""
    reach = 0.5 * math.hypot(dx, dy)  # a box's half diagonal (0.5), times the line's length
    low_row, high_row = min(0, dy), max(0, dy)
    band: list[tuple[int, tuple[int, ...]]] = []
    for across in range(min(0, dx), max(0, dx) + 1):
        rows = range(low_row, high_row + 1)
        if dx:
            # only rows near dy * across / dx can be near the line: those and a row further
            # on each side are looked at, and the test below decides
            middle = dy * across / dx
            spread = reach / abs(dx)
            rows = range(
                max(low_row, math.floor(middle - spread) - 1),
                min(high_row, math.ceil(middle + spread) + 1) + 1,
            )
        alongs = tuple(along for along in rows if abs(dx * along - dy * across) <= reach)
        if alongs:
            band.append((across, alongs))
    return tuple(band)


def rooms_crossed(
    start: Cell, end: Cell, rooms: dict[Cell, int], known: Known, ends: tuple[int, int]
) -> int:
    """How many rooms' boxes (other than `ends`) the straight line between two cells' centres
    passes through (a box, with a little room around it, is taken as 0.8 of a cell wide and
    0.6 of a cell high). `rooms`: the room on each cell."""
    (x0, y0), (x1, y1) = start, end
    if -1 <= x1 - x0 <= 1 and -1 <= y1 - y0 <= 1:
        return 0
    cells = known.lines.get((start, end))
    if cells is None:
        cells = known.lines[(start, end)] = line_cells(start, end, known)
    first, second = ends
    crossed = 0
    for cell in cells:
        room = rooms.get(cell)
        if room is not None and room != first and room != second:
            crossed += 1
    return crossed


def cut(step: Cell, at: Cell) -> tuple[int, int, Cell]:
    """Where a column (a row, for `north` and `south`) opens beside `at` on the side of
    `step`: its axis (0: a column, 1: a row), the first column (row) that moves one further,
    and the free cell beside `at` once it has."""
    (dx, dy), (ax, ay) = step, at
    if dx:
        edge = ax + 1 if dx > 0 else ax  # columns from `edge` on move right
        return 0, edge, (edge, ay + dy)
    edge = ay + 1 if dy > 0 else ay
    return 1, edge, (ax, edge)


def compact(cells: dict[int, Cell]) -> dict[int, Cell]:
    """Shift to (0, 0) and drop empty columns and rows (order kept, so cells stay distinct)."""
    columns = {col: i for i, col in enumerate(sorted({c for c, _ in cells.values()}))}
    rows = {row: i for i, row in enumerate(sorted({r for _, r in cells.values()}))}
    return {room: (columns[c], rows[r]) for room, (c, r) in cells.items()}
