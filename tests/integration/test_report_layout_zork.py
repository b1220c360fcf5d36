"""The report's map layout on Zork I's full walkthrough map (built by replaying the walkthrough;
story files from $CAIRN_ROMS, skipped without them): sound boxes and edges, labels that cover
no other label and no room, and rooms on their compass bearings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cairn.report.layout import CELL_H, CELL_W, MapLayout, layout_map
from cairn.report.svg_map import MapMarks, map_svg
from cairn.services.map import MapGraph, connections
from tests.report_maps import (
    ZORK,
    compass_moves,
    label_overlaps,
    on_its_bearing,
    points_its_way,
    walkthrough_map,
)
from tests.unit.test_report_layout import assert_sound

pytestmark = pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file {ZORK}")


@pytest.fixture(scope="module")
def zork_map(tmp_path_factory: pytest.TempPathFactory) -> MapGraph:
    return walkthrough_map(ZORK, Path(tmp_path_factory.mktemp("zork-walkthrough")))


@pytest.fixture(scope="module")
def zork_layout(zork_map: MapGraph) -> MapLayout:
    return layout_map(zork_map, start=180)  # West of House


def test_the_walkthrough_map_is_zork_sized(zork_map: MapGraph) -> None:
    assert len(zork_map.location_ids()) >= 80
    assert len(connections(zork_map)) >= 80


def test_no_two_room_boxes_overlap_and_every_edge_ends_on_its_rooms(
    zork_map: MapGraph, zork_layout: MapLayout
) -> None:
    assert set(zork_layout.boxes) == set(zork_map.location_ids())
    assert len(zork_layout.edges) == len(connections(zork_map))
    assert_sound(zork_layout)


def test_few_edges_pass_through_other_rooms(zork_layout: MapLayout) -> None:
    """Readability: bends keep almost every edge clear of the boxes it does not join."""
    crossing = 0
    for edge in zork_layout.edges:
        others = [b for r, b in zork_layout.boxes.items() if r not in (edge.link.a, edge.link.b)]
        points = [edge.point_at(i / 50) for i in range(1, 50)]
        crossing += any(box.contains(p) for box in others for p in points)
    assert crossing <= len(zork_layout.edges) // 10, crossing


def test_the_svg_draws_every_room_once_with_its_id(zork_map: MapGraph) -> None:
    svg = map_svg(zork_map)
    ids = re.findall(r'class="room[^"]*" data-id="(\d+)"', svg)
    assert sorted(map(int, ids)) == zork_map.location_ids()
    assert "West of House (L180)" in svg


def test_no_edge_label_covers_another_label_or_a_room(zork_map: MapGraph) -> None:
    """The report's map of the whole game, start and current rooms badged: read back from the
    SVG's coordinates, no label overlaps another label or a room's box, ring or badge."""
    svg = map_svg(zork_map, MapMarks(start=180, current=193, memories={180: 3, 193: 1}))
    assert 'class="edge-label"' in svg
    assert label_overlaps(svg) == []


def test_compass_moves_point_their_way(zork_layout: MapLayout) -> None:
    """Of the map's 109 compass moves, at least 90% are drawn within 45 degrees of their
    bearing (`west`: the target left of the source) and at least 75% exactly on it (same
    row, left). The layout before the fix drew 82% and 63%."""
    moves = compass_moves(zork_layout)
    assert len(moves) >= 100
    their_way = sum(points_its_way(action, offset) for action, offset in moves)
    on_bearing = sum(on_its_bearing(action, offset) for action, offset in moves)
    assert their_way >= 0.90 * len(moves), (their_way, len(moves))
    assert on_bearing >= 0.75 * len(moves), (on_bearing, len(moves))


def test_the_living_room_sits_west_of_the_kitchen(
    zork_map: MapGraph, zork_layout: MapLayout
) -> None:
    """`west` from the Kitchen leads to the Living Room: its box is the next one left on the
    Kitchen's row (the layout before the fix drew it a row up and a column left, and the issue
    saw it above a Forest), and no Forest lies right under it."""
    assert zork_map.name_of(203) == "Kitchen" and zork_map.name_of(193) == "Living Room"
    kitchen, living = zork_layout.boxes[203], zork_layout.boxes[193]
    assert living.y == kitchen.y
    assert living.x == kitchen.x - CELL_W
    forests = [r for r in zork_map.location_ids() if zork_map.name_of(r) == "Forest"]
    below = [r for r in forests if zork_layout.boxes[r].x == living.x]
    assert not [r for r in below if zork_layout.boxes[r].y == living.y + CELL_H], below
