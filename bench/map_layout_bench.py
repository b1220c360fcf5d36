"""The report's map on every shared game's walkthrough map: overlaps, bearings, time.

Replays each story file's walkthrough in ../shared/roms (or $CAIRN_ROMS; or the games named)
through Jericho, as the report's tests do, lays the map out and draws it, and prints one row
per game:

    rooms        rooms on the map
    labels       edge labels drawn
    lab/lab      pairs of labels that overlap (read back from the SVG, sizes estimated as the
                 layout estimates them); should be 0
    lab/room     labels overlapping a room's box, ring or badge; should be 0
    its way      compass moves drawn within 45 degrees of their bearing / all compass moves
    on bearing   compass moves whose target is exactly on their bearing (`west`: same row)
    through      edges passing through a room they do not join / all edges
    size         the drawing in pixels
    layout ms    layout_map's time, best of 3

Prints, asserts nothing.

    .venv/bin/python bench/map_layout_bench.py [GAME ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cairn.report.layout import MapLayout, layout_map
from cairn.report.svg_map import MapMarks, map_svg
from tests.report_maps import (
    ROMS,
    compass_moves,
    drawn_areas,
    label_overlaps,
    on_its_bearing,
    points_its_way,
    walkthrough_map,
)

COLUMNS = (
    ("game", 14),
    ("rooms", 6),
    ("labels", 7),
    ("lab/lab", 8),
    ("lab/room", 9),
    ("its way", 10),
    ("on bearing", 11),
    ("through", 9),
    ("size", 11),
    ("layout ms", 9),
)


def edges_through_rooms(layout: MapLayout) -> int:
    """Edges that pass through the box of a room they do not join (sampled at 50 points)."""
    through = 0
    for edge in layout.edges:
        others = [b for r, b in layout.boxes.items() if r not in (edge.link.a, edge.link.b)]
        points = [edge.point_at(i / 50) for i in range(1, 50)]
        through += any(box.contains(p) for box in others for p in points)
    return through


def row(story: Path) -> list[str]:
    with tempfile.TemporaryDirectory() as workdir, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = walkthrough_map(story, Path(workdir))
    start = 180 if story.stem == "zork1" else min(graph.location_ids(), default=None)
    times = []
    for _ in range(3):
        began = time.perf_counter()
        layout = layout_map(graph, start=start)
        times.append(time.perf_counter() - began)
    svg = map_svg(graph, MapMarks(start=start))
    _, labels = drawn_areas(svg)
    overlaps = label_overlaps(svg)
    between_labels = sum(1 for a, b in overlaps if b.startswith("label"))
    moves = compass_moves(layout)
    its_way = sum(points_its_way(action, offset) for action, offset in moves)
    on_bearing = sum(on_its_bearing(action, offset) for action, offset in moves)
    return [
        story.stem,
        str(len(layout.boxes)),
        str(len(labels)),
        str(between_labels),
        str(len(overlaps) - between_labels),
        f"{its_way}/{len(moves)}",
        f"{on_bearing}/{len(moves)}",
        f"{edges_through_rooms(layout)}/{len(layout.edges)}",
        f"{layout.width:.0f}x{layout.height:.0f}",
        f"{min(times) * 1000:.0f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help="story file names (default: all in the roms)")
    args = parser.parse_args()
    if not ROMS.is_dir():
        sys.exit(f"no story files: {ROMS} is absent (set CAIRN_ROMS)")
    names = args.games or sorted(p.name for p in ROMS.iterdir() if p.suffix[:2] == ".z")
    print("  ".join(title.ljust(width) for title, width in COLUMNS).rstrip())
    totals = [0, 0, 0]
    for name in names:
        cells = row(ROMS / name)
        totals[0] += int(cells[3])
        totals[1] += int(cells[4])
        totals[2] += 1
        print("  ".join(c.ljust(w) for c, (_, w) in zip(cells, COLUMNS, strict=True)).rstrip())
    print(f"{totals[2]} games: {totals[0]} label/label and {totals[1]} label/room overlaps")


if __name__ == "__main__":
    main()
