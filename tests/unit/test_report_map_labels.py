"""The report's map: edge labels cover no other label, no room and no unexplored exit's mark,
however the edges cross; rooms keep the bearings of their moves when the grid is crowded or the
moves disagree."""

from __future__ import annotations

import re

from cairn.report.edge_labels import line_forms
from cairn.report.layout import layout_map
from cairn.report.svg_map import map_svg
from cairn.services.map import MapGraph
from tests.report_maps import Area, drawn_areas, label_overlaps


def test_the_labels_of_crossing_edges_do_not_overlap() -> None:
    """Four rooms in a square joined corner to corner: both diagonals cross in the middle,
    where each label would go."""
    g = MapGraph()
    g.add_connection(1, 2, action="east")
    g.add_connection(1, 3, action="south")
    g.add_connection(2, 4, action="south")
    g.add_connection(1, 4, action="southeast")
    g.add_connection(4, 1, action="northwest")
    g.add_connection(2, 3, action="southwest")
    g.add_connection(3, 2, action="northeast")
    svg = map_svg(g)
    _, labels = drawn_areas(svg)
    assert len(labels) == 5
    assert label_overlaps(svg) == []


def test_a_long_label_between_rooms_side_by_side_stays_off_both_boxes() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="east")
    g.add_connection(1, 2, action="enter the dark doorway")
    g.add_connection(2, 1, action="west")
    svg = map_svg(g)
    assert label_overlaps(svg) == []
    assert "east, enter the dark doorway" in svg  # the whole label, on however many lines


def test_a_label_leaves_an_unexplored_exits_mark_visible() -> None:
    """Room 1's `up` stub rises into the gap above it, where the label of the edge to the
    room north of it goes."""
    g = MapGraph()
    g.add_connection(1, 2, action="north")
    g.add_connection(2, 1, action="south")
    g.note_exits(1, ["up"])
    svg = map_svg(g)
    [(x, y, r)] = [
        tuple(map(float, m))
        for m in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"', svg)
    ]
    circle = Area("up", x - r, y - r, x + r, y + r)
    _, labels = drawn_areas(svg)
    assert labels and not [label for label in labels if label.overlaps(circle)]


def test_long_labels_break_after_the_slash_then_the_commas() -> None:
    assert line_forms("east") == [("east",)]
    assert line_forms("west / east") == [("west / east",), ("west /", "east")]
    assert line_forms("west, up / east, down") == [
        ("west, up / east, down",),
        ("west, up /", "east, down"),
        ("west,", "up /", "east,", "down"),
    ]


def test_a_room_keeps_its_bearing_when_the_cell_there_is_taken() -> None:
    """Two rooms east of room 1: the second goes further east on the same row (a column opens
    for it, or it takes the next cell), not above or below room 1."""
    g = MapGraph()
    g.add_connection(1, 2, action="east")
    g.add_connection(2, 1, action="west")
    g.add_connection(3, 1, action="west")  # 3 is east of 1 too
    g.add_connection(1, 4, action="north")
    g.add_connection(1, 5, action="south")
    layout = layout_map(g, start=1)
    one, three = layout.boxes[1], layout.boxes[3]
    assert three.y == one.y and three.x > one.x


def test_moves_that_disagree_take_the_bearing_between_them() -> None:
    """Zork's house: `north` from West of House reaches North of House, whose `west` leads
    back. North of House is drawn up and to the right of West of House."""
    g = MapGraph()
    g.set_name(1, "West of House")
    g.set_name(2, "North of House")
    g.add_connection(1, 2, action="north")
    g.add_connection(2, 1, action="west")
    layout = layout_map(g, start=1)
    west, north = layout.boxes[1], layout.boxes[2]
    assert north.y < west.y and north.x > west.x


def test_a_label_too_long_for_the_drawing_widens_it_and_covers_nothing() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="north")
    g.add_connection(1, 2, action="say " + "xyzzy" * 30)
    layout = layout_map(g, start=1)
    [edge] = layout.edges
    assert edge.label is not None
    rect = edge.label.rect
    assert rect.left >= 0 and rect.right <= layout.width and rect.bottom <= layout.height
    assert layout.width > 700  # one box and margins are 256 px wide
    svg = map_svg(g)
    assert f'width="{layout.width:.0f}"' in svg
    assert label_overlaps(svg) == []
