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

from cairn.report.placement_geometry import (
    Cell,
    Known,
    Steps,
    compact,
    compass_vector,
    cut,
    line_cells,
    offset_cost,
    rooms_crossed,
)
from cairn.services.map import Connection

WRAP_COLUMNS = 14
"""Separate parts of the map are packed left to right, in bands at most this wide."""
_NEAR: tuple[Cell, ...] = ((1, 0), (0, 1), (1, 1), (1, -1), (0, -1), (-1, 1), (-1, 0), (-1, -1))
"""Where a room reached without a compass word goes, when free (east first, reading order)."""
_SEARCH = 2
"""How far (in cells, around each wanted cell) a room looks for a free cell."""
_AROUND: tuple[Cell, ...] = tuple(
    (dx, dy) for dx in range(-_SEARCH, _SEARCH + 1) for dy in range(-_SEARCH, _SEARCH + 1)
)
"""The steps from a wanted cell to the cells looked at around it, in the order tried."""
_AROUND_NEAR: tuple[Cell, ...] = tuple(
    dict.fromkeys((nx + dx, ny + dy) for nx, ny in _NEAR for dx, dy in _AROUND)
)
"""The steps from a room to the cells looked at around each `_NEAR` cell, in the order
first tried."""
_SWEEPS = 3
_THROUGH = 6.0
"""The cost of each room a straight edge would pass through."""
_OPEN = 4.0
"""What opening a column or row costs (the map grows)."""
_SIDE = 5.0
"""Sweeps try opening a column or row only for rooms that cost at least this."""

Adjacency = dict[int, dict[int, Steps]]
"""Each room's neighbours, with the grid step of each compass move to them (none: no compass
move joins the two; two for `east / west`)."""


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


def _agreed(steps: Steps) -> tuple[Cell, ...]:
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
    known = Known()  # geometry, the same for every part
    band_top, band_height, left = 0, 0, 0
    for part in parts:
        root = min(part, key=lambda r: (-sum(map(len, adjacency[r].values())), r != start, r))
        cells = compact(_place_part(root, adjacency, known))
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


Placed = list[tuple[int, Cell, Steps, dict[Cell, float]]]
"""A room's neighbours on the grid: each with its cell, the steps to it, and the costs of
those steps by offset (`Known.bearings`)."""


class _Grid:
    """Rooms on cells, both ways round, with rows and columns that can be opened."""

    def __init__(
        self,
        cells: dict[int, Cell] | None = None,
        known: Known | None = None,
        rooms: dict[Cell, int] | None = None,
    ) -> None:
        """A grid of `cells` (copied; taken as they are along with `rooms`, the same both
        ways round, when that is given)."""
        if rooms is None:
            self.cells: dict[int, Cell] = dict(cells or {})
            self.rooms: dict[Cell, int] = {cell: room for room, cell in self.cells.items()}
        else:
            self.cells, self.rooms = cells or {}, rooms
        self.known = Known() if known is None else known

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

    def opened(self, step: Cell, at: Cell, leaving: int) -> tuple[_Grid, Cell]:
        """A copy without `leaving`, with a column (a row, for `north` and `south`) opened
        beside `at` on the side of `step`, every room on that side one cell further (see
        `placement_geometry.cut`); and the now free cell there."""
        axis, edge, free = cut(step, at)
        kept = ((room, cell) for room, cell in self.cells.items() if room != leaving)
        if axis == 0:
            cells = {r: (c + 1, w) if c >= edge else (c, w) for r, (c, w) in kept}
        else:
            cells = {r: (c, w + 1) if w >= edge else (c, w) for r, (c, w) in kept}
        rooms = {cell: room for room, cell in cells.items()}
        return _Grid(cells, self.known, rooms), free


def _place_part(root: int, adjacency: Adjacency, known: Known) -> dict[int, Cell]:
    """Cells for the rooms of `root`'s part (see the module docstring)."""
    grid = _Grid({root: (0, 0)}, known)
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


def _placed_neighbours(room: int, grid: _Grid, adjacency: Adjacency) -> Placed:
    """`room`'s neighbours on the grid (see `Placed`)."""
    cells, tables = grid.cells, grid.known.bearings
    placed: Placed = []
    for neighbour, steps in adjacency[room].items():
        there = cells.get(neighbour)
        if there is not None:
            table = tables.get(steps)
            if table is None:
                table = tables[steps] = {}
            placed.append((neighbour, there, steps, table))
    return placed


def _cost(room: int, cell: Cell, grid: _Grid, adjacency: Adjacency) -> float:
    """How badly `room` at `cell` keeps its placed neighbours' bearings (and nearness): for
    each, `offset_cost`, plus `_THROUGH` for each room the straight line between them passes
    through."""
    placed = _placed_neighbours(room, grid, adjacency)
    return _bearings_of(cell, placed) + _through(room, cell, grid, placed)


def _bearings_of(cell: Cell, placed: Placed) -> float:
    """The part of `_cost` that needs no look at other rooms (a lower bound of it)."""
    x, y = cell
    total = 0.0
    for _, (tx, ty), steps, table in placed:
        offset = (tx - x, ty - y)
        cost = table.get(offset)
        if cost is None:
            cost = table[offset] = offset_cost(offset[0], offset[1], steps)
        total += cost
    return total


def _through(room: int, cell: Cell, grid: _Grid, placed: Placed, budget: float = math.inf) -> float:
    """The rest of `_cost`: `_THROUGH` for each room in the way of each placed neighbour
    (none in the way of the next cell: most neighbours are not looked at further). Counted
    no further than needed to pass `budget`."""
    x, y = cell
    crossed = 0
    for neighbour, there, _, _ in placed:
        if -1 <= there[0] - x <= 1 and -1 <= there[1] - y <= 1:
            continue
        crossed += rooms_crossed(cell, there, grid.rooms, grid.known, (room, neighbour))
        if _THROUGH * crossed > budget:
            break
    return _THROUGH * crossed


def _candidates(grid: _Grid, placed: Placed) -> list[Cell]:
    """Free cells near those the `placed` neighbours want their room in (their compass steps,
    or next to them), in the order first seen."""
    near: list[Cell] = []
    expanded: set[Cell] = set()  # a wanted cell seen again adds no cell its first sight did not
    for _, (tx, ty), steps, _ in placed:
        if not steps:
            near += [(tx + dx, ty + dy) for dx, dy in _AROUND_NEAR]
            continue
        for sx, sy in steps:
            wx, wy = tx - sx, ty - sy
            if (wx, wy) not in expanded:
                expanded.add((wx, wy))
                near += [(wx + dx, wy + dy) for dx, dy in _AROUND]
    rooms = grid.rooms
    return [cell for cell in dict.fromkeys(near) if cell not in rooms]


def _best(room: int, grid: _Grid, adjacency: Adjacency) -> tuple[float, Cell] | None:
    """The free candidate cell of least cost (ties: the first wanted), None without any.
    Cells are tried cheapest bearings first, and no further once those alone cost more than
    the best so far (nor, at the same cost, after it)."""
    placed = _placed_neighbours(room, grid, adjacency)
    candidates = _candidates(grid, placed)
    bounds = [0.0] * len(candidates)  # `_bearings_of` each candidate, written out
    for _, (tx, ty), steps, table in placed:
        for order, (x, y) in enumerate(candidates):
            offset = (tx - x, ty - y)
            cost = table.get(offset)
            if cost is None:
                cost = table[offset] = offset_cost(offset[0], offset[1], steps)
            bounds[order] += cost
    bounded = sorted(zip(bounds, itertools.count(), candidates, strict=False))
    best: tuple[float, int, Cell] | None = None
    for bound, order, cell in bounded:
        if best is None:
            cost = bound + _through(room, cell, grid, placed)
        elif bound > best[0]:
            break
        elif bound == best[0] and order > best[1]:
            continue  # costs at least its bound: no better than the best
        else:
            cost = bound + _through(room, cell, grid, placed, best[0] - bound)
        if best is None or (cost, order) < best[:2]:
            best = (cost, order, cell)
    return None if best is None else (best[0], best[2])


Opening = tuple[float, int, Cell, Cell]
"""What opening a column or row for a room costs, the order of the compass move it is for,
and the step and cell it opens beside (`_Grid.opened`)."""


def _opening(room: int, grid: _Grid, adjacency: Adjacency) -> Iterator[Opening]:
    """For each compass move to a placed neighbour: opening a column or row for `room` on
    that bearing (`_Grid.opened`, `room` taken off the grid), and what the change costs:
    `_OPEN`, plus the pairs of rooms the opening moved apart, plus `room` on the free cell.
    Worked out on `grid` as it is (most openings are not taken)."""
    cells = grid.cells
    order = 0
    for neighbour, steps in adjacency[room].items():
        there = cells.get(neighbour)
        if there is None or neighbour == room:
            continue
        for step in steps:
            order += 1
            away = (-step[0], -step[1])
            axis, edge, free = cut(away, there)
            change = _OPEN + _opened_cost(room, free, grid, adjacency, axis, edge)
            # a moved room is one column (row) further from each neighbour that stayed
            sx, sy = (1, 0) if axis == 0 else (0, 1)
            for a, here in cells.items():
                if a == room or here[axis] < edge:
                    continue  # stays
                ax, ay = here
                for b, pair_steps in adjacency[a].items():
                    at = cells.get(b)
                    if b == room or at is None or at[axis] >= edge:
                        continue  # moved too, or not on the grid
                    ox, oy = at[0] - ax, at[1] - ay
                    change += offset_cost(ox - sx, oy - sy, pair_steps) - offset_cost(
                        ox, oy, pair_steps
                    )
            yield change, order, away, there


def _opened_cost(
    room: int, free: Cell, grid: _Grid, adjacency: Adjacency, axis: int, edge: int
) -> float:
    """`_cost` of `room` on `free` in the grid `grid.opened` gives (without `room`, the rooms
    from `edge` on along `axis` one further; see `placement_geometry.cut`), looked up in
    `grid` as it is."""
    cells, rooms, known = grid.cells, grid.rooms, grid.known
    fx, fy = free
    bearings = 0.0
    crossed = 0
    for neighbour, steps in adjacency[room].items():
        at = cells.get(neighbour)
        if at is None:
            continue
        if at[axis] >= edge:
            at = (at[0] + 1, at[1]) if axis == 0 else (at[0], at[1] + 1)
        tx, ty = at
        bearings += offset_cost(tx - fx, ty - fy, steps)
        if -1 <= tx - fx <= 1 and -1 <= ty - fy <= 1:
            continue
        line = known.lines.get((free, at))
        if line is None:
            line = known.lines[(free, at)] = line_cells(free, at, known)
        for cell in line:
            if cell[axis] == edge:
                continue  # the opened column (row) is empty
            if cell[axis] > edge:
                cell = (cell[0] - 1, cell[1]) if axis == 0 else (cell[0], cell[1] - 1)
            other = rooms.get(cell)
            if other is not None and other != room and other != neighbour:
                crossed += 1
    return bearings + _THROUGH * crossed


def _place(room: int, grid: _Grid, adjacency: Adjacency) -> _Grid:
    """`grid` with `room` on its best free cell, or on a column or row opened for it on the
    bearing of a compass neighbour, when that keeps the bearings better."""
    best = _best(room, grid, adjacency)
    if best is not None and best[0] == 0:
        grid.put(room, best[1])
        return grid
    opening = min(_opening(room, grid, adjacency), key=lambda option: option[:2], default=None)
    if best is not None and (opening is None or (best[0], 0) < opening[:2]):
        grid.put(room, best[1])
        return grid
    if opening is None:
        grid.put(room, _nearest_free(grid, (0, 0)))
        return grid
    wider, free = grid.opened(opening[2], opening[3], room)
    wider.put(room, free)
    return wider


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
            opening = min(
                _opening(room, grid, adjacency), key=lambda option: option[:2], default=None
            )
            if opening is not None and opening[0] < now - 1e-9:
                grid, free = grid.opened(opening[2], opening[3], room)
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
