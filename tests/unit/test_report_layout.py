"""The report's map layout: compass placement, distinct cells, edges ending on their rooms, bends
around other rooms; the SVG drawing of it (one node per room, one edge per connection)."""

from __future__ import annotations

import itertools
import math
import re

from cairn.report.layout import BOX_H, BOX_W, Box, MapLayout, layout_map
from cairn.report.svg_map import MapMarks, map_svg, shade
from cairn.services.map import MapGraph


def on_border(box: Box, point: tuple[float, float], tolerance: float = 0.01) -> bool:
    """Whether `point` lies on the box's outline."""
    x, y = point
    inside_x = box.x - tolerance <= x <= box.x + box.w + tolerance
    inside_y = box.y - tolerance <= y <= box.y + box.h + tolerance
    on_vertical = min(abs(x - box.x), abs(x - box.x - box.w)) <= tolerance and inside_y
    on_horizontal = min(abs(y - box.y), abs(y - box.y - box.h)) <= tolerance and inside_x
    return on_vertical or on_horizontal


def assert_sound(layout: MapLayout) -> None:
    """No two boxes overlap; every edge starts on its first room's box, ends on its second's."""
    for first, second in itertools.combinations(layout.boxes.values(), 2):
        assert not first.overlaps(second), (first, second)
    for edge in layout.edges:
        assert on_border(layout.boxes[edge.link.a], edge.start), edge
        assert on_border(layout.boxes[edge.link.b], edge.end), edge
    for box in layout.boxes.values():
        assert box.x >= 0 and box.y >= 0
        assert box.x + box.w <= layout.width and box.y + box.h <= layout.height


def crossroads() -> MapGraph:
    g = MapGraph()
    for room, name in ((1, "Square"), (2, "North St"), (3, "East St"), (4, "South St")):
        g.set_name(room, name)
    g.add_connection(1, 2, action="north")
    g.add_connection(2, 1, action="south")
    g.add_connection(1, 3, action="e")
    g.add_connection(4, 1, action="north")  # learned from the other side: 4 is south of 1
    g.add_connection(3, 5, action="enter shop")
    return g


def test_compass_moves_place_rooms_where_the_compass_says() -> None:
    layout = layout_map(crossroads(), start=1)
    assert_sound(layout)
    square = layout.boxes[1].center
    assert layout.boxes[2].center[1] < square[1] and layout.boxes[2].center[0] == square[0]
    assert layout.boxes[3].center[0] > square[0] and layout.boxes[3].center[1] == square[1]
    assert layout.boxes[4].center[1] > square[1] and layout.boxes[4].center[0] == square[0]
    assert 5 in layout.boxes  # reached by a non-compass action: placed next to the shop street


def test_rooms_that_want_the_same_cell_get_cells_of_their_own() -> None:
    g = MapGraph()
    for room in range(2, 10):  # eight rooms all "north" of room 1 (a maze)
        g.add_connection(1, room, action=f"north {room}" if room % 2 else "north")
        g.add_connection(room, 1, action="south")
    for room in range(10, 20):
        g.add_connection(room - 8, room, action="north")
    layout = layout_map(g, start=1)
    assert len(layout.boxes) == len(g.location_ids())
    assert_sound(layout)


def test_separate_parts_and_rooms_known_only_from_memories_are_packed_apart() -> None:
    g = crossroads()
    g.add_connection(20, 21, action="west")
    g.add_connection(30, 31, action="down")
    layout = layout_map(g, extra_rooms=[40, 41, *range(50, 70)], start=1)
    assert {40, 41, 50, 69} <= set(layout.boxes)
    assert_sound(layout)


def test_an_edge_that_would_cross_a_room_bends_around_it() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="east")
    g.add_connection(2, 3, action="east")
    g.add_connection(1, 3, action="run")  # a straight line from 1 to 3 passes through 2
    layout = layout_map(g, start=1)
    assert_sound(layout)
    middle = layout.boxes[2]
    [edge] = [e for e in layout.edges if {e.link.a, e.link.b} == {1, 3}]
    for step in range(1, 40):
        point = edge.point_at(step / 40)
        assert not middle.contains(point), point
    assert not math.isclose(edge.control[1], middle.center[1])


def test_the_svg_has_one_node_per_room_and_one_edge_per_connection() -> None:
    g = crossroads()
    g.note_exits(3, ["north", "up"])
    marks = MapMarks(
        memories={1: 4, 2: 1},
        danger=frozenset({2}),
        deaths={4: 2},
        start=1,
        current=3,
        names={9: "Vault"},
    )
    svg = map_svg(g, marks)
    assert sorted(int(i) for i in re.findall(r'class="room[^"]*" data-id="(\d+)"', svg)) == [
        1,
        2,
        3,
        4,
        5,
    ]
    edges = re.findall(r'<path class="edge (one-way|two-way)" data-a="(\d+)" data-b="(\d+)"', svg)
    assert sorted(edges) == [
        ("one-way", "1", "3"),
        ("one-way", "3", "5"),
        ("one-way", "4", "1"),
        ("two-way", "1", "2"),
    ]
    assert ">north / south</text>" in svg or ">south / north</text>" in svg
    assert re.search(r'class="room danger" data-id="2"', svg)
    assert re.search(r'class="room death" data-id="4"[^>]*>.*?\u26202', svg)
    assert re.search(r'class="room current" data-id="3"', svg)
    assert re.search(r'class="room start" data-id="1"', svg)
    assert 'data-label="Square (L1)"' in svg and ">Square (L1)</text>" in svg
    exits = re.findall(r'class="unexplored" data-room="(\d+)" data-direction="(\w+)"', svg)
    assert sorted(exits) == [("3", "north"), ("3", "up")]
    assert f'fill="{shade(4, 4)}"' in svg and shade(0, 4) == "#ffffff" != shade(1, 4)
    assert "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_a_room_known_only_by_its_store_record_is_drawn_with_that_name() -> None:
    svg = map_svg(crossroads(), MapMarks(memories={9: 1}, names={9: "Vault"}))
    assert 'data-id="9"' in svg and ">Vault (L9)</text>" in svg


def test_long_names_wrap_under_the_box_width() -> None:
    g = MapGraph()
    g.set_name(1, "The Extremely Long Winding Corridor of Doom and Despair")
    g.add_connection(1, 2, action="north")
    svg = map_svg(g)
    lines = re.findall(r'<text class="name"[^>]*>([^<]*)</text>', svg)
    assert "(L1)" in lines and all(len(line) <= 26 for line in lines)
    assert BOX_W > 6 * 26 and BOX_H > 2 * 14


def test_the_placements_fast_pair_cost_is_the_bearing_rule() -> None:
    """`placement_geometry.offset_cost` is `bearing_cost` summed over a pair's compass moves,
    written out for speed (the placement's most frequent sum): every offset within 6 cells,
    every compass step and pair of steps, and the no-move nearness, agree exactly."""
    from cairn.report.placement_geometry import _NEARNESS, bearing_cost, offset_cost

    compass = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)]
    step_sets = [(), *((s,) for s in compass), *itertools.combinations(compass, 2)]
    for ox, oy in itertools.product(range(-6, 7), repeat=2):
        if (ox, oy) == (0, 0):
            continue
        for steps in step_sets:
            expected = (
                sum(bearing_cost((ox, oy), step) for step in steps)
                if steps
                else _NEARNESS * max(max(abs(ox), abs(oy)) - 1, 0)
            )
            assert offset_cost(ox, oy, steps) == expected, (ox, oy, steps)
