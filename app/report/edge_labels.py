"""Where each edge's label goes: on or beside its own edge, over no room box, no unexplored
exit's circle and no other label.

A label's size is estimated from its font size and character count: `CHAR_EM` of the font
size per character (an upper bound of the widths Chromium gives DejaVu Sans, a wide font, for
every edge label of the shared games' maps), `LINE_EM` per line. Labels are placed one by one,
shortest edge first. The candidates are points along the edge's curve, with the label on one
line or broken after ` / ` (then after `, `), shifted across the edge by up to twice its size;
the nearest to the edge's middle that covers nothing wins, one that sits on other edges paying
extra. A room box is kept clear with `BOX_PAD` around it (`BOX_PAD_TOP` above, for badges).
When no candidate is free, the nearest free spot around the edge's middle is taken (the drawing
grows right or down if it must), so no label ever covers another label or a room.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

LABEL_FONT_PX = 10
"""The font size of edge labels (the map's style uses it)."""
CHAR_EM = 0.56
"""The estimated width of one character of label text, in font sizes."""
LINE_EM = 1.2
"""The height of one line of label text, in font sizes."""
ASCENT_EM = 0.9
"""From a line's top to its baseline, in font sizes."""
CHAR_W = CHAR_EM * LABEL_FONT_PX
LINE_H = LINE_EM * LABEL_FONT_PX
ASCENT = ASCENT_EM * LABEL_FONT_PX
TEXT_PAD = 3.0
"""Room kept around a label's text on each side (its halo is 1.5 px)."""
BOX_PAD = 6.0
"""Room kept clear around every room box (the current room's ring is 5 px out)..."""
BOX_PAD_TOP = 10.0
"""... and above it (badges stand 9 px above the box)."""
_BUCKET = 64.0
_ALONG = (0.5, 0.42, 0.58, 0.34, 0.66, 0.26, 0.74, 0.18, 0.82)
_ACROSS = (0.0, 1.0, -1.0, 2.0, -2.0)
_SPIRAL_STEP = 6.0
_PER_LINE = 25.0
"""What each line after the first costs a candidate, in pixels of distance from the middle."""
_PER_SHIFT = 6.0
"""What each step across the edge costs a candidate."""
_PER_EDGE = 60.0
"""What sitting on another edge costs a candidate."""

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Rect:
    """An axis-aligned rectangle: left, top, right, bottom."""

    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Rect) -> bool:
        """Whether the two share any area (touching borders do not count)."""
        return (
            self.left < other.right
            and other.left < self.right
            and self.top < other.bottom
            and other.top < self.bottom
        )

    def contains(self, point: Point) -> bool:
        return self.left <= point[0] <= self.right and self.top <= point[1] <= self.bottom

    def grown(self, pad: float) -> Rect:
        return Rect(self.left - pad, self.top - pad, self.right + pad, self.bottom + pad)


@dataclass(frozen=True, slots=True)
class EdgeLabel:
    """A label as drawn: its lines, centred on (`x`, `y`)."""

    lines: tuple[str, ...]
    x: float
    y: float

    @property
    def rect(self) -> Rect:
        """The estimated area the label's text covers (with `TEXT_PAD` around it)."""
        return text_rect(self.lines, self.x, self.y)

    def baselines(self) -> list[float]:
        """The baseline of each line (SVG text's `y`)."""
        top = self.y - len(self.lines) * LINE_H / 2
        return [top + ASCENT + i * LINE_H for i in range(len(self.lines))]


def text_rect(lines: Iterable[str], x: float, y: float) -> Rect:
    """The estimated area of centred `lines` of label text around (`x`, `y`)."""
    lines = list(lines)
    width = CHAR_W * max((len(line) for line in lines), default=0) + 2 * TEXT_PAD
    height = LINE_H * len(lines) + 2 * TEXT_PAD
    return Rect(x - width / 2, y - height / 2, x + width / 2, y + height / 2)


def line_forms(label: str) -> list[tuple[str, ...]]:
    """The ways to write `label`: one line, then broken after ` / ` (each side on its own
    line), then also after each `, ` when a side is still long."""
    forms: list[tuple[str, ...]] = [(label,)]
    if " / " in label:
        sides = label.split(" / ")
        forms.append((*(f"{side} /" for side in sides[:-1]), sides[-1]))
    if ", " in label:
        pieces = [piece for side in forms[-1] for piece in _break_commas(side)]
        if tuple(pieces) not in forms:
            forms.append(tuple(pieces))
    return forms


def _break_commas(line: str) -> list[str]:
    parts = line.split(", ")
    return [f"{part}," for part in parts[:-1]] + [parts[-1]]


class Obstacles:
    """Rectangles that must not be covered, bucketed on a coarse grid for quick look-ups."""

    def __init__(self) -> None:
        self._buckets: dict[tuple[int, int], list[Rect]] = {}

    def add(self, rect: Rect) -> None:
        for key in _keys(rect):
            self._buckets.setdefault(key, []).append(rect)

    def hit(self, rect: Rect) -> bool:
        """Whether `rect` overlaps any of the rectangles."""
        return self.hit_area(rect.left, rect.top, rect.right, rect.bottom)

    def hit_area(self, left: float, top: float, right: float, bottom: float) -> bool:
        """`hit` for the rectangle with these sides (`Rect.overlaps` written out: a label's
        candidates are many, and most are turned down here)."""
        buckets = self._buckets
        for bx in range(int(left // _BUCKET), int(right // _BUCKET) + 1):
            for by in range(int(top // _BUCKET), int(bottom // _BUCKET) + 1):
                for other in buckets.get((bx, by), ()):
                    if (
                        other.left < right
                        and left < other.right
                        and other.top < bottom
                        and top < other.bottom
                    ):
                        return True
        return False


class Strokes:
    """Sampled points of the drawn edges, to count how many edges a label would sit on."""

    def __init__(self) -> None:
        self._buckets: dict[tuple[int, int], list[tuple[int, Point]]] = {}

    def add(self, edge: int, points: Iterable[Point]) -> None:
        buckets = self._buckets
        for point in points:
            key = (int(point[0] // _BUCKET), int(point[1] // _BUCKET))
            bucket = buckets.get(key)
            if bucket is None:
                buckets[key] = [(edge, point)]
            else:
                bucket.append((edge, point))

    def crossed(self, rect: Rect, own: int) -> int:
        """How many edges other than `own` pass through `rect`."""
        return self.crossed_area(rect.left, rect.top, rect.right, rect.bottom, own)

    def crossed_area(self, left: float, top: float, right: float, bottom: float, own: int) -> int:
        """`crossed` for the rectangle with these sides."""
        buckets = self._buckets
        edges: set[int] = set()
        for bx in range(int(left // _BUCKET), int(right // _BUCKET) + 1):
            for by in range(int(top // _BUCKET), int(bottom // _BUCKET) + 1):
                for edge, (x, y) in buckets.get((bx, by), ()):
                    if edge != own and left <= x <= right and top <= y <= bottom:
                        edges.add(edge)
        return len(edges)


def _keys(rect: Rect) -> Iterator[tuple[int, int]]:
    for bx in range(int(rect.left // _BUCKET), int(rect.right // _BUCKET) + 1):
        for by in range(int(rect.top // _BUCKET), int(rect.bottom // _BUCKET) + 1):
            yield (bx, by)


@dataclass(frozen=True, slots=True)
class LabelRequest:
    """One edge to label: its index among the edges, its text and its curve."""

    index: int
    text: str
    curve: list[Point]
    """Points at t = 0, 1/40, ..., 1."""


def place_labels(
    requests: list[LabelRequest], rooms: list[Rect], bounds: Rect, marks: list[Rect]
) -> tuple[dict[int, EdgeLabel], Rect]:
    """A label for each request, by index, clear of the `rooms` (boxes) and of `marks` (the
    unexplored exits' circles); see the module docstring. And `bounds`, grown to hold labels
    that had to go outside it."""
    obstacles = Obstacles()
    for room in rooms:
        obstacles.add(room.grown(BOX_PAD))
        obstacles.add(Rect(room.left, room.top - BOX_PAD_TOP, room.right, room.top))
    for mark in marks:
        obstacles.add(mark)
    strokes = Strokes()
    for request in requests:
        strokes.add(request.index, request.curve)
    placed: dict[int, EdgeLabel] = {}
    order = sorted(requests, key=lambda r: (_length(r.curve), r.index))
    for request in order:
        label = _choose(request, obstacles, strokes, bounds) or _spiral(request, obstacles, bounds)
        placed[request.index] = label
        rect = label.rect
        obstacles.add(rect)
        bounds = Rect(
            min(bounds.left, rect.left),
            min(bounds.top, rect.top),
            max(bounds.right, rect.right),
            max(bounds.bottom, rect.bottom),
        )
    return placed, bounds


def _length(curve: list[Point]) -> float:
    return sum(map(math.dist, curve, curve[1:]))


def _choose(
    request: LabelRequest, obstacles: Obstacles, strokes: Strokes, bounds: Rect
) -> EdgeLabel | None:
    """The free candidate inside `bounds` of least cost: its distance from the edge's middle,
    plus a price for each extra line, each step across the edge and each other edge it sits
    on; None when every candidate covers something."""
    curve = request.curve
    last = len(curve) - 1
    mid = curve[last // 2]
    spots = []  # each point of `_ALONG` on the curve, with the unit normal there
    for t in _ALONG:
        i = round(t * last)
        x, y = curve[i]
        ahead, behind = curve[min(i + 1, last)], curve[max(i - 1, 0)]
        nx, ny = -(ahead[1] - behind[1]), ahead[0] - behind[0]
        norm = math.hypot(nx, ny) or 1.0
        spots.append((x, y, nx / norm, ny / norm))
    mx, my = mid
    left, top, right, bottom = bounds.left, bounds.top, bounds.right, bounds.bottom
    best: tuple[float, EdgeLabel] | None = None
    for rank, lines in enumerate(line_forms(request.text)):
        per_line = _PER_LINE * rank
        if best is not None and per_line >= best[0]:
            break  # a candidate costs at least its lines' price: none of these is better
        probe = text_rect(lines, 0, 0)
        half_w, half_h = probe.right, probe.bottom
        for x, y, nx, ny in spots:
            # a shift across the edge that clears the label off the line, in units of
            # the label's extent along the normal
            reach = abs(nx) * half_w + abs(ny) * half_h
            for k in _ACROSS:
                cx, cy = x + nx * reach * k, y + ny * reach * k
                # math.hypot of the differences is math.dist, without the tuples
                cost = math.hypot(cx - mx, cy - my) + per_line + _PER_SHIFT * abs(k)
                if best is not None and cost >= best[0]:
                    continue
                rect_left, rect_right = cx - half_w, cx + half_w
                rect_top, rect_bottom = cy - half_h, cy + half_h
                if not (
                    left <= rect_left
                    and rect_right <= right
                    and top <= rect_top
                    and rect_bottom <= bottom
                ):
                    continue
                if obstacles.hit_area(rect_left, rect_top, rect_right, rect_bottom):
                    continue
                cost += _PER_EDGE * strokes.crossed_area(
                    rect_left, rect_top, rect_right, rect_bottom, request.index
                )
                if best is None or cost < best[0]:
                    best = (cost, EdgeLabel(lines, cx, cy))
    return None if best is None else best[1]


def _spiral(request: LabelRequest, obstacles: Obstacles, bounds: Rect) -> EdgeLabel:
    """The nearest free spot around the edge's middle, right of and below the drawing's
    top-left corner, in the label's most broken form (always found: the drawing can grow
    right and down)."""
    mid = request.curve[(len(request.curve) - 1) // 2]
    lines = line_forms(request.text)[-1]
    for ring in range(1, 10_000):
        radius = ring * _SPIRAL_STEP
        steps = max(8, int(2 * math.pi * radius / _SPIRAL_STEP))
        for j in range(steps):
            angle = 2 * math.pi * j / steps
            label = EdgeLabel(
                lines, mid[0] + radius * math.cos(angle), mid[1] + radius * math.sin(angle)
            )
            rect = label.rect
            if rect.left >= bounds.left and rect.top >= bounds.top and not obstacles.hit(rect):
                return label
    raise AssertionError("no free spot for a label")  # pragma: no cover
