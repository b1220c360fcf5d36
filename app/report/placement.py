"""Which grid cell each room of a map gets: north up, every room on the bearing its compass
moves give it, as far as the map allows.

Each pair of neighbours costs something unless the grid keeps its moves' bearings: nothing when
`west` leads to the very next cell left, a little per cell further left on the same row
(`_LONG`), more a cell left on another row within 45 degrees (`_ASKEW`), much more anywhere
else (`_AGAINST`); a straight line through another room's box costs `_THROUGH`. Moves with no
compass word (`enter window`, `up`) only want their rooms near each other. Moves between two
rooms that disagree (B is `north` of A, and A is `west` of B: a path that bends out of sight)
take the bearing between theirs.

A part of the map (rooms joined by moves) grows from the room with the most compass moves, one
room at a time: next, the room with the most compass moves to rooms already placed (ties: the
first found, breadth-first), so a room meets most of its neighbours when it is placed. It takes
the free cell near the ones its neighbours want it in that costs least, unless opening a column
(or row) beside a neighbour, on the neighbour's bearing, costs less (`_OPEN`, plus what the
rooms moved apart lose): every room on the far side moves one cell further, which keeps the
side of each other room they are on. Then a few sweeps move each room that costs something to
a cheaper free cell, or swap it with the room on a cell it wants, or open a column or row for
it. Empty rows and columns are removed, and separate parts are packed side by side in bands.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from collections.abc import Iterable, Iterator

from cairn.services.map import Connection

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
WRAP_COLUMNS = 14
"""Separate parts of the map are packed left to right, in bands at most this wide."""
_NEAR: tuple[Cell, ...] = ((1, 0), (0, 1), (1, 1), (1, -1), (0, -1), (-1, 1), (-1, 0), (-1, -1))
"""Where a room reached without a compass word goes, when free (east first, reading order)."""
_SEARCH = 2
"""How far (in cells, around each wanted cell) a room looks for a free cell."""
_SWEEPS = 3
_LONG = 2.0
"""The cost of each cell a compass move's edge is longer than one cell."""
_ASKEW = 8.0
"""The cost of a compass move drawn beside its bearing (`west` up and to the left)."""
_AGAINST = 40.0
"""The cost of a compass move drawn against its bearing."""
_NEARNESS = 1.0
"""The cost of each cell between two rooms joined by a move with no compass word."""
_THROUGH = 6.0
"""The cost of each room a straight edge would pass through."""
_OPEN = 4.0
"""What opening a column or row costs (the map grows)."""
_SIDE = 5.0
"""Sweeps try opening a column or row only for rooms that cost at least this."""

Adjacency = dict[int, dict[int, tuple[Cell, ...]]]
"""Each room's neighbours, with the grid step of each compass move to them (none: no compass
move joins the two; two for `east / west`)."""


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


def adjacency_of(rooms: Iterable[int], links: list[Connection]) -> Adjacency:
    """Each room's neighbours with the steps to them: one per compass move (a two-way
    `east / west` pair gives two; a move known only backwards counts too)."""
    adjacency: Adjacency = {room: {} for room in rooms}
    for link in links:
        if link.a == link.b:
            continue
        forward, back = compass_vector(link.forward), compass_vector(link.back)
        steps = tuple(step for step in (forward, _reverse(back)) if step is not None)
        there = adjacency.setdefault(link.a, {}).get(link.b, ())
        adjacency[link.a][link.b] = there + steps
        here = adjacency.setdefault(link.b, {}).get(link.a, ())
        adjacency[link.b][link.a] = here + tuple((-dx, -dy) for dx, dy in steps)
    for neighbours in adjacency.values():
        for neighbour, known in neighbours.items():
            neighbours[neighbour] = _agreed(known)
    return adjacency


def _agreed(steps: tuple[Cell, ...]) -> tuple[Cell, ...]:
    """Moves between two rooms that disagree (`north` there, `west` back: a path that bends
    out of sight) all take the bearing between theirs (`northeast`); none when they cancel out."""
    if len(set(steps)) <= 1:
        return steps
    dx, dy = sum(step[0] for step in steps), sum(step[1] for step in steps)
    if (dx, dy) == (0, 0):
        return ()
    middle = ((dx > 0) - (dx < 0), (dy > 0) - (dy < 0))
    return (middle,) * len(steps)


def _reverse(step: Cell | None) -> Cell | None:
    return None if step is None else (-step[0], -step[1])


def place_rooms(rooms: list[int], links: list[Connection], start: int | None) -> dict[int, Cell]:
    """One distinct grid cell per room (see the module docstring)."""
    adjacency = adjacency_of(rooms, links)
    parts = _components(adjacency)
    parts.sort(key=lambda part: (start not in part, -len(part), min(part)))
    placed: dict[int, Cell] = {}
    band_top, band_height, left = 0, 0, 0
    for part in parts:
        root = min(part, key=lambda r: (-sum(map(len, adjacency[r].values())), r != start, r))
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


def _components(adjacency: Adjacency) -> list[set[int]]:
    seen: set[int] = set()
    parts: list[set[int]] = []
    for room in sorted(adjacency):
        if room in seen:
            continue
        part, queue = {room}, deque([room])
        while queue:
            for neighbour in adjacency[queue.popleft()]:
                if neighbour not in part:
                    part.add(neighbour)
                    queue.append(neighbour)
        seen |= part
        parts.append(part)
    return parts


class _Grid:
    """Rooms on cells, both ways round, with rows and columns that can be opened."""

    def __init__(self, cells: dict[int, Cell] | None = None) -> None:
        self.cells: dict[int, Cell] = dict(cells or {})
        self.rooms: dict[Cell, int] = {cell: room for room, cell in self.cells.items()}

    def put(self, room: int, cell: Cell) -> None:
        old = self.cells.get(room)
        if old is not None:
            del self.rooms[old]
        self.cells[room] = cell
        self.rooms[cell] = room

    def remove(self, room: int) -> None:
        del self.rooms[self.cells.pop(room)]

    def swap(self, first: int, second: int) -> None:
        """Exchange the cells of two rooms."""
        a, b = self.cells[first], self.cells[second]
        self.cells[first], self.cells[second] = b, a
        self.rooms[a], self.rooms[b] = second, first

    def opened(self, step: Cell, at: Cell) -> tuple[_Grid, Cell, set[int]]:
        """A copy with a column (a row, for `north` and `south`) opened beside `at` on the side
        of `step`, every room on that side one cell further; the now free cell there; and the
        rooms that moved."""
        (dx, dy), (ax, ay) = step, at
        if dx:
            edge = ax + 1 if dx > 0 else ax  # columns from `edge` on move right
            cells = {r: (c + (c >= edge), w) for r, (c, w) in self.cells.items()}
            free = (edge, ay + dy)
            moved = {r for r, (c, _) in self.cells.items() if c >= edge}
        else:
            edge = ay + 1 if dy > 0 else ay
            cells = {r: (c, w + (w >= edge)) for r, (c, w) in self.cells.items()}
            free = (ax, edge)
            moved = {r for r, (_, w) in self.cells.items() if w >= edge}
        return _Grid(cells), free, moved


def _place_part(root: int, adjacency: Adjacency) -> dict[int, Cell]:
    """Cells for the rooms of `root`'s part (see the module docstring)."""
    grid = _Grid({root: (0, 0)})
    found = {root: 0}
    counter = itertools.count(1)
    queue: list[tuple[int, int, int]] = []  # (-compass moves to placed rooms, found, room)

    def pull(room: int) -> int:
        return sum(len(steps) for n, steps in adjacency[room].items() if n in grid.cells)

    def reach(room: int) -> None:
        for neighbour in adjacency[room]:
            if neighbour not in grid.cells:
                found.setdefault(neighbour, next(counter))
                heapq.heappush(queue, (-pull(neighbour), found[neighbour], neighbour))

    reach(root)
    while queue:
        count, _, room = heapq.heappop(queue)
        if room in grid.cells or -count != pull(room):
            continue  # placed already, or queued again with a newer count
        grid = _place(room, grid, adjacency)
        reach(room)
    restless = set(grid.cells)
    for _ in range(_SWEEPS):
        grid, restless = _sweep(grid, adjacency, restless)
        if not restless:
            break
    return grid.cells


def _pair_cost(
    cell: Cell, there: Cell, steps: tuple[Cell, ...], grid: _Grid, ends: tuple[int, int]
) -> float:
    """The cost of two neighbours at `cell` and `there`: each compass move's `bearing_cost`
    (`steps` go from `cell` to `there`), or their distance for rooms joined by no compass
    move; plus `_THROUGH` for each room the straight line between them passes through."""
    return _pair_bearings(cell, there, steps) + _THROUGH * _rooms_crossed(cell, there, grid, ends)


def _pair_bearings(cell: Cell, there: Cell, steps: tuple[Cell, ...]) -> float:
    """`_pair_cost` without the rooms in the way."""
    offset = (there[0] - cell[0], there[1] - cell[1])
    if steps:
        return sum(bearing_cost(offset, step) for step in steps)
    return _NEARNESS * max(max(abs(offset[0]), abs(offset[1])) - 1, 0)


def _bearings(room: int, cell: Cell, grid: _Grid, adjacency: Adjacency) -> float:
    """The part of `_cost` that needs no look at other rooms (a lower bound of it)."""
    return sum(
        _pair_bearings(cell, there, steps)
        for neighbour, steps in adjacency[room].items()
        if (there := grid.cells.get(neighbour)) is not None
    )


def _cost(room: int, cell: Cell, grid: _Grid, adjacency: Adjacency) -> float:
    """How badly `room` at `cell` keeps its placed neighbours' bearings (and nearness)."""
    return sum(
        _pair_cost(cell, there, steps, grid, (room, neighbour))
        for neighbour, steps in adjacency[room].items()
        if (there := grid.cells.get(neighbour)) is not None
    )


def _rooms_crossed(start: Cell, end: Cell, grid: _Grid, ends: tuple[int, int]) -> int:
    """How many rooms' boxes (other than `ends`) the straight line between two cells' centres
    passes through (a box, with a little room around it, is taken as 0.8 of a cell wide and
    0.6 of a cell high)."""
    (x0, y0), (x1, y1) = start, end
    if max(abs(x1 - x0), abs(y1 - y0)) <= 1:
        return 0
    dx, dy = x1 - x0, y1 - y0
    reach = 0.5 * math.hypot(dx, dy)  # a box's half diagonal (0.5), times the line's length
    crossed = 0
    for cx in range(min(x0, x1), max(x0, x1) + 1):
        for cy in range(min(y0, y1), max(y0, y1) + 1):
            if abs(dx * (cy - y0) - dy * (cx - x0)) > reach:
                continue  # too far from the line
            room = grid.rooms.get((cx, cy))
            if room is not None and room not in ends and _segment_hits(start, end, (cx, cy)):
                crossed += 1
    return crossed


def _segment_hits(start: Cell, end: Cell, cell: Cell) -> bool:
    """Whether the segment between two cell centres meets the box around `cell` (clipped
    against the box's slabs, Liang-Barsky)."""
    low, high = 0.0, 1.0
    for origin, delta, centre, half in (
        (start[0], end[0] - start[0], cell[0], 0.4),
        (start[1], end[1] - start[1], cell[1], 0.3),
    ):
        if delta == 0:
            if abs(origin - centre) > half:
                return False
            continue
        t0, t1 = (centre - half - origin) / delta, (centre + half - origin) / delta
        low, high = max(low, min(t0, t1)), min(high, max(t0, t1))
        if low > high:
            return False
    return True


def _candidates(room: int, grid: _Grid, adjacency: Adjacency) -> list[Cell]:
    """Free cells near those the placed neighbours want `room` in (their compass steps, or
    next to them)."""
    wanted: list[Cell] = []
    for neighbour, steps in adjacency[room].items():
        there = grid.cells.get(neighbour)
        if there is None:
            continue
        if steps:
            wanted += [(there[0] - step[0], there[1] - step[1]) for step in steps]
        else:
            wanted += [(there[0] + dx, there[1] + dy) for dx, dy in _NEAR]
    cells: dict[Cell, int] = {}
    for wx, wy in wanted:
        for dx, dy in itertools.product(range(-_SEARCH, _SEARCH + 1), repeat=2):
            cell = (wx + dx, wy + dy)
            if cell not in grid.rooms:
                cells.setdefault(cell, len(cells))
    return list(cells)


def _best(room: int, grid: _Grid, adjacency: Adjacency) -> tuple[float, Cell] | None:
    """The free candidate cell of least cost (ties: the first wanted), None without any.
    Cells are tried cheapest bearings first, and no further once those alone cost more than
    the best so far."""
    bounded = sorted(
        (_bearings(room, cell, grid, adjacency), order, cell)
        for order, cell in enumerate(_candidates(room, grid, adjacency))
    )
    best: tuple[float, int, Cell] | None = None
    for bound, order, cell in bounded:
        if best is not None and bound > best[0]:
            break
        cost = _cost(room, cell, grid, adjacency)
        if best is None or (cost, order) < best[:2]:
            best = (cost, order, cell)
    return None if best is None else (best[0], best[2])


def _opening(
    room: int, grid: _Grid, adjacency: Adjacency
) -> Iterator[tuple[float, int, _Grid, Cell]]:
    """For each compass move to a placed neighbour: a grid (without `room`) with a column or
    row opened for `room` on that bearing, the free cell, and what the change costs: `_OPEN`,
    plus the pairs of rooms the opening moved apart, plus `room` on the free cell."""
    without = _Grid({r: c for r, c in grid.cells.items() if r != room})
    order = 0
    for neighbour, steps in adjacency[room].items():
        there = without.cells.get(neighbour)
        if there is None:
            continue
        for step in steps:
            order += 1
            wider, free, moved = without.opened((-step[0], -step[1]), there)
            change = _OPEN + _cost(room, free, wider, adjacency)
            for a in moved:
                for b, pair_steps in adjacency[a].items():
                    if b == room or b in moved or b not in without.cells:
                        continue
                    change += _pair_bearings(
                        wider.cells[a], wider.cells[b], pair_steps
                    ) - _pair_bearings(without.cells[a], without.cells[b], pair_steps)
            yield change, order, wider, free


def _place(room: int, grid: _Grid, adjacency: Adjacency) -> _Grid:
    """`grid` with `room` on its best free cell, or on a column or row opened for it on the
    bearing of a compass neighbour, when that keeps the bearings better."""
    best = _best(room, grid, adjacency)
    if best is not None and best[0] == 0:
        grid.put(room, best[1])
        return grid
    options = list(_opening(room, grid, adjacency))
    if best is not None:
        options.append((best[0], 0, grid, best[1]))
    if not options:
        cell = _nearest_free(grid, (0, 0))
        grid.put(room, cell)
        return grid
    _, _, chosen, cell = min(options, key=lambda option: option[:2])
    chosen.put(room, cell)
    return chosen


def _nearest_free(grid: _Grid, wanted: Cell) -> Cell:
    for radius in itertools.count():
        ring = [
            (wanted[0] + dx, wanted[1] + dy)
            for dx, dy in itertools.product(range(-radius, radius + 1), repeat=2)
            if max(abs(dx), abs(dy)) == radius
            and (wanted[0] + dx, wanted[1] + dy) not in grid.rooms
        ]
        if ring:
            return min(ring, key=lambda c: (math.dist(c, wanted), c[1], c[0]))
    raise AssertionError("unreachable")  # pragma: no cover


def _sweep(grid: _Grid, adjacency: Adjacency, rooms: set[int]) -> tuple[_Grid, set[int]]:
    """Move each of `rooms` that is off a bearing to the free cell that keeps its bearings
    best, else swap it with the room on a cell it wants, else open a column or row for it,
    when that costs less. The grid, and the rooms worth another look: those that moved and
    their neighbours (all, after an opening)."""
    moved: set[int] = set()
    opened = False
    for room in sorted(rooms):
        now = _cost(room, grid.cells[room], grid, adjacency)
        if now == 0:
            continue
        best = _best(room, grid, adjacency)
        if best is not None and best[0] < now - 1e-9:
            grid.put(room, best[1])
            moved.add(room)
        elif (other := _swap_better(room, now, grid, adjacency)) is not None:
            moved |= {room, other}
        elif now >= _SIDE:
            options = list(_opening(room, grid, adjacency))
            if options:
                change, _, wider, free = min(options, key=lambda option: option[:2])
                if change < now - 1e-9:
                    grid = wider
                    grid.put(room, free)
                    moved.add(room)
                    opened = True
    if opened:
        return grid, set(grid.cells)
    return grid, moved.union(*(adjacency[room] for room in moved))


def _swap_better(room: int, now: float, grid: _Grid, adjacency: Adjacency) -> int | None:
    """Put `room` on a cell a compass neighbour wants it in, the room there going to `room`'s
    cell or else to its own best free cell, when that lowers the cost of both; the room that
    made way, if one did."""
    for neighbour, steps in adjacency[room].items():
        there = grid.cells.get(neighbour)
        if there is None:
            continue
        for step in steps:
            cell = (there[0] - step[0], there[1] - step[1])
            other = grid.rooms.get(cell)
            if other is None or other in (room, neighbour):
                continue
            home = grid.cells[room]
            before = now + _cost(other, cell, grid, adjacency)
            grid.swap(room, other)
            after = _cost(room, cell, grid, adjacency) + _cost(other, home, grid, adjacency)
            if after < before - 1e-9:
                return other
            grid.swap(room, other)
            grid.remove(other)
            grid.put(room, cell)
            best = _best(other, grid, adjacency)
            if best is not None:
                grid.put(other, best[1])
                after = _cost(room, cell, grid, adjacency) + _cost(other, best[1], grid, adjacency)
                if after < before - 1e-9:
                    return other
                grid.remove(other)
            grid.put(room, home)
            grid.put(other, cell)
    return None


def _compact(cells: dict[int, Cell]) -> dict[int, Cell]:
    """Shift to (0, 0) and drop empty columns and rows (order kept, so cells stay distinct)."""
    columns = {col: i for i, col in enumerate(sorted({c for c, _ in cells.values()}))}
    rows = {row: i for i, row in enumerate(sorted({r for _, r in cells.values()}))}
    return {room: (columns[c], rows[r]) for room, (c, r) in cells.items()}
