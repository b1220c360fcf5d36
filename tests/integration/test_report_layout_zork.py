"""The report's map layout on Zork I's full walkthrough map (built by replaying the walkthrough;
story files from $CAIRN_ROMS, skipped without them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cairn.report.layout import MapLayout, layout_map
from cairn.report.svg_map import map_svg
from cairn.services.map import MapGraph, connections
from tests.report_maps import ZORK, walkthrough_map
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
