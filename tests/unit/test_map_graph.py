"""MapGraph: adjacency, routing (known before inferred), exits, rendering, persistence, ids."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.storage.map_repository import load_map, map_from_dict, map_to_dict, save_map
from cairn.errors import CairnError, InvalidLocationError, MapFileError
from cairn.services.map import (
    MapEdge,
    MapGraph,
    connections,
    exits_in_text,
    normalize_action,
    normalize_direction,
)

WEST_OF_HOUSE, NORTH_OF_HOUSE, BEHIND_HOUSE, SOUTH_OF_HOUSE, KITCHEN = 180, 81, 79, 93, 62


def zork_house() -> MapGraph:
    """West -n-> North -e-> Behind -"enter window"-> Kitchen; Behind -s-> South -w-> West."""
    g = MapGraph()
    names = {
        WEST_OF_HOUSE: "West of House",
        NORTH_OF_HOUSE: "North of House",
        BEHIND_HOUSE: "Behind House",
        SOUTH_OF_HOUSE: "South of House",
        KITCHEN: "Kitchen",
    }
    for room, name in names.items():
        g.set_name(room, name)
    g.add_connection(WEST_OF_HOUSE, NORTH_OF_HOUSE, action="n")
    g.add_connection(NORTH_OF_HOUSE, BEHIND_HOUSE, action="go east")
    g.add_connection(BEHIND_HOUSE, KITCHEN, action="Enter  Window")
    g.add_connection(BEHIND_HOUSE, SOUTH_OF_HOUSE, action="s")
    g.add_connection(SOUTH_OF_HOUSE, WEST_OF_HOUSE, action="w")
    return g


# -- actions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("n", "north"),
        ("S", "south"),
        ("ne", "northeast"),
        ("sw", "southwest"),
        ("u", "up"),
        ("d", "down"),
        ("go north", "north"),
        ("walk to the west", "west"),
        ("in", "in"),
        ("out", "out"),
        ("enter window", None),
        ("north of house", None),
        ("take lamp", None),
    ],
)
def test_normalize_direction(action: str, expected: str | None) -> None:
    assert normalize_direction(action) == expected


def test_non_direction_actions_are_kept_as_typed_only_tidied() -> None:
    assert normalize_action("  Enter   Window ") == "enter window"
    assert normalize_action("NW") == "northwest"


# -- adjacency ----------------------------------------------------------------------------------


def test_a_move_makes_each_room_a_neighbour_of_the_other() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="north")
    assert g.neighbors(1) == [2]
    assert g.neighbors(2) == [1]
    assert g.neighbors(3) == []


def test_moves_without_action_still_count_for_adjacency_but_not_routes() -> None:
    g = MapGraph()
    g.add_connection(1, 2)
    assert g.neighbors(2) == [1]
    assert g.route(1, 2) is None
    assert g.edges() == [MapEdge(1, 2, None)]
    g.add_connection(1, 2, action="north")  # the action learned later replaces the bare link
    assert g.edges() == [MapEdge(1, 2, "north")]


def test_a_move_that_stays_in_place_is_no_edge() -> None:
    g = MapGraph()
    g.note_exits(1, ["north"])
    g.add_connection(1, 1, action="north")
    assert g.neighbors(1) == []
    assert g.unexplored_exits(1) == []  # tried


def test_labels_are_normalised_and_the_latest_move_wins() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="N")
    assert g.exits_from(1) == {"north": 2}
    g.add_connection(1, 3, action="north")
    assert g.exits_from(1) == {"north": 3}
    assert g.neighbors(1) == [3]


# -- names and visits ---------------------------------------------------------------------------


def test_names_that_repeat_stay_distinct_nodes() -> None:
    g = MapGraph()
    for room in (10, 11, 12):
        g.set_name(room, "Forest")
    g.add_connection(10, 11, action="north")
    g.add_connection(11, 12, action="east")
    mermaid = g.render_mermaid()
    for room in (10, 11, 12):
        assert f'L{room}["Forest (L{room})"]' in mermaid
    assert g.route(10, 12) == ["north", "east"]


def test_empty_name_keeps_the_old_one_and_visits_count() -> None:
    g = MapGraph()
    g.set_name(5, "Kitchen")
    g.set_name(5, "")
    assert g.name_of(5) == "Kitchen"
    assert g.name_of(6) is None
    assert g.record_visit(5) == 1
    assert g.record_visit(5) == 2
    assert g.visit_count(5) == 2
    assert g.visit_count(6) == 0


# -- routing ------------------------------------------------------------------------------------


def test_route_over_several_rooms_gives_the_actions() -> None:
    g = zork_house()
    assert g.route(WEST_OF_HOUSE, KITCHEN) == ["north", "east", "enter window"]
    assert g.route(WEST_OF_HOUSE, WEST_OF_HOUSE) == []
    assert g.route(WEST_OF_HOUSE, 999) is None


def test_route_is_the_shortest_known_one() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="north")
    g.add_connection(2, 3, action="north")
    g.add_connection(3, 4, action="east")
    g.add_connection(1, 4, action="climb tree")
    assert g.route(1, 4) == ["climb tree"]


def test_known_route_is_preferred_to_a_shorter_inferred_one() -> None:
    g = zork_house()
    # Back from Behind House to West of House: known loop via south, west (2 steps); the
    # inferred reverse (west to North of House, then south) is also 2 steps, and from North
    # of House the only way back known is the loop: 3 steps, not the 1-step guess "south".
    assert g.route(BEHIND_HOUSE, WEST_OF_HOUSE) == ["south", "west"]
    assert g.route(NORTH_OF_HOUSE, WEST_OF_HOUSE) == ["east", "south", "west"]
    edges = g.route_edges(NORTH_OF_HOUSE, WEST_OF_HOUSE)
    assert edges is not None and not any(e.inferred for e in edges)


def test_inferred_reverse_edge_used_only_when_no_known_path() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="north")
    g.add_connection(2, 3, action="up")
    assert g.route(3, 1) == ["down", "south"]
    edges = g.route_edges(3, 1)
    assert edges is not None and all(e.inferred for e in edges)
    assert MapEdge(2, 1, "south", inferred=True) in g.edges(include_inferred=True)
    assert MapEdge(2, 1, "south", inferred=True) not in g.edges()


def test_no_inference_for_non_compass_or_in_out_or_refused_or_conflicting_moves() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="enter window")
    g.add_connection(3, 4, action="in")
    assert g.route(2, 1) is None
    assert g.route(4, 3) is None
    g.add_connection(5, 6, action="east")
    g.mark_failed_exit(6, "west")
    assert g.route(6, 5) is None
    g.add_connection(7, 9, action="north")
    g.add_connection(8, 9, action="north")  # which room would "south" from 9 reach?
    assert g.route(9, 7) is None and g.route(9, 8) is None


def test_inference_never_contradicts_a_known_edge() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="north")
    g.add_connection(2, 5, action="south")  # a bent passage: south from 2 is not 1
    assert g.route(2, 1) is None
    assert g.route(2, 5) == ["south"]


# -- unexplored and failed exits ----------------------------------------------------------------


def test_unexplored_exits_come_from_room_text_and_disappear_when_tried() -> None:
    g = MapGraph()
    text = "This is a small room with passages to the east and south and a hole leading west."
    g.note_exits(1, exits_in_text(text))
    assert g.unexplored_exits(1) == ["south", "east", "west"]
    g.add_connection(1, 2, action="e")
    assert g.unexplored_exits(1) == ["south", "west"]
    g.add_connection(1, 3, action="go south")
    assert g.unexplored_exits(1) == ["west"]


def test_failed_exits_are_not_suggested_again() -> None:
    g = MapGraph()
    g.note_exits(1, ["north", "east"])
    g.mark_failed_exit(1, "n")
    assert g.unexplored_exits(1) == ["east"]
    assert g.failed_exits(1) == ["north"]
    assert g.nearest_unexplored(1) == (1, [])
    g.mark_failed_exit(1, "east")
    assert g.unexplored_exits(1) == []
    assert g.nearest_unexplored(1) is None


def test_a_refused_exit_that_later_works_is_no_longer_failed() -> None:
    g = MapGraph()
    g.mark_failed_exit(1, "north")
    g.add_connection(1, 2, action="north")
    assert g.failed_exits(1) == []


def test_the_way_back_is_not_an_unexplored_exit() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="north")
    g.note_exits(2, exits_in_text("A path leads south, and a trail runs east."))
    assert g.unexplored_exits(2) == ["east"]


def test_nearest_unexplored_gives_the_room_and_route() -> None:
    g = zork_house()
    g.note_exits(KITCHEN, ["west", "up"])
    assert g.nearest_unexplored(WEST_OF_HOUSE) == (KITCHEN, ["north", "east", "enter window"])
    g.note_exits(NORTH_OF_HOUSE, ["north"])
    assert g.nearest_unexplored(WEST_OF_HOUSE) == (NORTH_OF_HOUSE, ["north"])
    g.note_exits(SOUTH_OF_HOUSE, ["east"])
    assert g.nearest_unexplored(BEHIND_HOUSE) == (SOUTH_OF_HOUSE, ["south"])
    assert g.nearest_unexplored(KITCHEN) == (KITCHEN, [])
    assert g.nearest_unexplored(12345) is None


# -- exits in text ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "You are in a clearing, with a forest surrounding you on all sides. "
            "A path leads south.",
            ["south"],
        ),
        (
            "This is a path winding through a dimly lit forest. The path heads north-south "
            "here. One particularly large tree with some low branches stands at the edge of "
            "the path.",
            ["north", "south"],
        ),
        ("There is a path leading north", ["north"]),
        ("Exits: east and west.", ["east", "west"]),
        ("To the south is a river bank.", ["south"]),
        (
            "You are in the kitchen of the white house. A table seems to have been used "
            "recently for the preparation of food. A passage leads to the west and a dark "
            "staircase can be seen leading upward. A dark chimney leads down and to the east "
            "is a small window which is open.",
            ["east", "west", "up", "down"],
        ),
        (
            "You are in a dark and damp cellar with a narrow passageway leading north, and a "
            "crawlway to the south. On the west is the bottom of a steep metal ramp which is "
            "unclimbable.",
            ["north", "south"],
        ),
        (
            "You are on the east edge of a chasm, the bottom of which cannot be seen. A narrow "
            "passage goes north, and the path you are on continues to the east.",
            ["north", "east"],
        ),
        ("The vandals left through either the north or west exits.", ["north", "west"]),
        (
            "This is an east-west passage. A crawlway leads northeast.",
            ["east", "west", "northeast"],
        ),
        # bare mentions are not exits
        (
            "You are standing in an open field west of a white house, with a boarded front door.",
            [],
        ),
        ("You are facing the north side of a white house. There is no door here.", []),
        ("It is pitch black. You are likely to be eaten by a grue.", []),
    ],
)
def test_exits_in_text(text: str, expected: list[str]) -> None:
    assert exits_in_text(text) == expected


def test_note_exits_ignores_non_directions() -> None:
    g = MapGraph()
    g.note_exits(1, ["n", "enter window", "UP"])
    assert g.noted_exits(1) == ["north", "up"]


# -- rendering ----------------------------------------------------------------------------------


def test_mermaid_has_id_nodes_and_labelled_edges_in_a_stable_order() -> None:
    g = zork_house()
    mermaid = g.render_mermaid()
    lines = mermaid.splitlines()
    assert lines[0] == "graph LR"
    assert '    L180["West of House (L180)"]' in lines
    assert "    L180 -->|north| L81" in lines
    assert "    L79 -->|enter window| L62" in lines
    assert mermaid == zork_house().render_mermaid()
    node_ids = [int(m) for m in re.findall(r"^\s+L(\d+)\[", mermaid, re.MULTILINE)]
    assert node_ids == sorted(node_ids)
    assert g.render_mermaid("TD").startswith("graph TD\n")


def test_mermaid_escapes_quotes_and_brackets_in_names() -> None:
    g = MapGraph()
    g.set_name(1, 'The "Grue\'s" [Lair] {x} (y) #1 | <b>')
    g.add_connection(1, 2, action='say "hi|there"')
    mermaid = g.render_mermaid()
    node = next(line for line in mermaid.splitlines() if line.strip().startswith("L1["))
    label = node.strip()[len('L1["') : -len(' (L1)"]')]
    assert not set(label) & set('"[]{}()|<>')
    assert "#quot;Grue's#quot;" in label and "#91;Lair#93;" in label
    edge = next(line for line in mermaid.splitlines() if "-->" in line)
    assert re.fullmatch(r"\s+L1 -->\|[^|\"]+\| L2", edge)


DOT_STRING = r'"((?:[^"\\]|\\.)*)"'


def _dot_unquote(body: str) -> str:
    return re.sub(r"\\(.)", r"\1", body)


def test_dot_output_quotes_names_and_labels() -> None:
    g = zork_house()
    g.set_name(7, 'Say "hello" \\ wave')
    g.add_connection(KITCHEN, 7, action="up")
    dot = g.render_dot()
    lines = dot.splitlines()
    assert lines[0] == "digraph map {" and lines[-1] == "}"
    names: dict[int, str] = {}
    edges: list[tuple[int, int, str]] = []
    for line in lines[1:-1]:
        node = re.fullmatch(rf"\s+L(\d+) \[label={DOT_STRING}\];", line)
        edge = re.fullmatch(rf"\s+L(\d+) -> L(\d+) \[label={DOT_STRING}\];", line)
        if node:
            names[int(node.group(1))] = _dot_unquote(node.group(2))
        elif edge:
            edges.append((int(edge.group(1)), int(edge.group(2)), _dot_unquote(edge.group(3))))
        else:
            assert re.fullmatch(r"\s+(rankdir=LR|node \[shape=box\]);", line), line
    assert names[180] == "West of House (L180)"
    assert names[7] == 'Say "hello" \\ wave (L7)'
    assert (BEHIND_HOUSE, KITCHEN, "enter window") in edges
    assert (KITCHEN, 7, "up") in edges


def test_a_two_way_connection_is_one_edge_in_every_format() -> None:
    g = zork_house()
    g.add_connection(NORTH_OF_HOUSE, WEST_OF_HOUSE, action="south")
    g.add_connection(KITCHEN, BEHIND_HOUSE, action=None)
    mermaid = g.render_mermaid().splitlines()
    assert "    L81 <-->|south / north| L180" in mermaid
    assert not [line for line in mermaid if re.search(r"L180 .*L81", line)]
    assert "    L79 <-->|enter window| L62" in mermaid
    assert "    L81 -->|east| L79" in mermaid
    dot = g.render_dot().splitlines()
    assert '    L81 -> L180 [label="south / north", dir=both];' in dot
    assert '    L81 -> L79 [label="east"];' in dot
    assert not [line for line in dot if "L180 -> L81" in line]
    links = {(c.a, c.b): c for c in connections(g)}
    assert len(links) == 5 and links[(BEHIND_HOUSE, KITCHEN)].back == ()
    assert links[(BEHIND_HOUSE, KITCHEN)].two_way


def test_unnamed_rooms_render_with_their_id() -> None:
    g = MapGraph()
    g.add_connection(3, 4, action="east")
    assert 'L3["Location 3 (L3)"]' in g.render_mermaid()


def test_routing_summary_lines() -> None:
    g = zork_house()
    g.note_exits(KITCHEN, ["west"])
    summary = g.routing_summary(WEST_OF_HOUSE)
    lines = summary.splitlines()
    assert lines[0] == "From West of House (180): north -> North of House (81)"
    assert "From North of House (81): east -> Behind House (79)" in lines
    assert "From South of House (93): west -> West of House (180) [back]" in lines
    assert lines[-1] == (
        "Nearest unexplored: Kitchen (62) via north, east, enter window (untried: west)"
    )
    assert len(g.routing_summary(WEST_OF_HOUSE, limit=1).splitlines()) == 3
    assert g.routing_summary(555) == "From Location 555 (555): no known exits"


def test_exploration_figures() -> None:
    g = zork_house()
    g.set_name(500, "Heard of, never seen")
    g.note_exits(KITCHEN, ["west", "up"])
    figures = g.exploration_figures()
    assert figures.rooms_known == 6
    assert figures.rooms_visited == 5
    assert figures.connections == 5
    assert figures.unexplored_exits == 2
    assert "unexplored exits: 2" in figures.render()


# -- persistence --------------------------------------------------------------------------------


def full_map() -> MapGraph:
    g = zork_house()
    g.add_connection(KITCHEN, 1)
    g.record_visit(WEST_OF_HOUSE)
    g.record_visit(WEST_OF_HOUSE)
    g.note_exits(KITCHEN, ["west", "up"])
    g.mark_failed_exit(WEST_OF_HOUSE, "east")
    g.add_connection(BEHIND_HOUSE, BEHIND_HOUSE, action="climb wall")
    return g


def test_dict_round_trip_keeps_everything() -> None:
    g = full_map()
    data = map_to_dict(g.snapshot())
    assert json.loads(json.dumps(data)) == data
    again = MapGraph.from_snapshot(map_from_dict(data))
    assert map_to_dict(again.snapshot()) == data
    assert again.render_mermaid() == g.render_mermaid()
    assert again.visit_count(WEST_OF_HOUSE) == 2
    assert again.failed_exits(WEST_OF_HOUSE) == ["east"]
    assert again.unexplored_exits(KITCHEN) == ["west", "up"]
    assert again.route(WEST_OF_HOUSE, KITCHEN) == ["north", "east", "enter window"]


def test_a_failed_action_that_is_also_a_known_edge_survives_a_round_trip() -> None:
    g = MapGraph()
    g.add_connection(1, 2, action="north")
    g.mark_failed_exit(1, "north")  # e.g. a door closed since
    again = MapGraph.from_snapshot(map_from_dict(map_to_dict(g.snapshot())))
    assert again.failed_exits(1) == ["north"]


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "map.json"
    g = full_map()
    save_map(g, path)
    assert load_map(path) == g.snapshot()
    assert [p.name for p in path.parent.iterdir()] == ["map.json"]  # no temp file left
    g.add_connection(KITCHEN, 2, action="west")
    save_map(g, path)  # replaces
    assert MapGraph.from_snapshot(load_map(path)).exits_from(KITCHEN) == {"west": 2}


def test_loading_a_missing_file_gives_an_empty_map(tmp_path: Path) -> None:
    g = MapGraph.from_snapshot(load_map(tmp_path / "nothing.json"))
    assert g.location_ids() == [] and g.edges() == []


def test_a_truncated_file_gives_map_file_error_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "map.json"
    save_map(full_map(), path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(MapFileError) as caught:
        load_map(path)
    assert caught.value.path == path
    assert str(path) in str(caught.value)
    assert "JSON" in str(caught.value)
    assert isinstance(caught.value, CairnError)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (
            {"version": 1, "connections": [{"from": 1, "to": "2", "action": "n"}]},
            "connections.0.to",
        ),
        ({"version": 1, "connections": [{"from": True, "to": 2}]}, "connections.0.from"),
        ({"version": 1, "rooms": [{"id": 1.5}]}, "rooms.0.id"),
        ({"version": 1, "rooms": [{"id": 1, "visits": -1}]}, "rooms.0.visits"),
        ({"version": 1, "rooms": [{"id": 1, "exits": ["sideways"]}]}, "rooms.0.exits.0"),
        ({"version": 2}, "version"),
        ({"version": 1, "rooms": [], "extra": 1}, "extra"),
        ([], "(top level)"),
    ],
)
def test_invalid_data_names_the_field(data: Any, field: str, tmp_path: Path) -> None:
    with pytest.raises(MapFileError) as caught:
        map_from_dict(data)
    assert field in str(caught.value)
    path = tmp_path / "map.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(MapFileError) as from_file:
        load_map(path)
    assert str(path) in str(from_file.value) and field in str(from_file.value)


def test_an_unreadable_file_gives_map_file_error(tmp_path: Path) -> None:
    path = tmp_path / "map.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(MapFileError, match=r"map\.json"):
        load_map(path)
    with pytest.raises(MapFileError, match="cannot read"):
        load_map(tmp_path)  # a directory


# -- ids ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [True, "180", 1.0, None])
def test_non_integer_ids_are_rejected_naming_the_argument(bad: Any) -> None:
    g = MapGraph()
    with pytest.raises(InvalidLocationError, match="from_id"):
        g.add_connection(bad, 1, action="north")
    with pytest.raises(InvalidLocationError, match="to_id"):
        g.add_connection(1, bad)
    with pytest.raises(InvalidLocationError, match="location_id"):
        g.set_name(bad, "Kitchen")
    with pytest.raises(InvalidLocationError, match="location_id"):
        g.neighbors(bad)
    with pytest.raises(InvalidLocationError, match="location_id"):
        g.note_exits(bad, ["north"])
    with pytest.raises(InvalidLocationError, match="to_id"):
        g.route(1, bad)
    with pytest.raises(InvalidLocationError, match="from_id"):
        g.nearest_unexplored(bad)
    assert g.location_ids() == []


def test_answers_kept_between_changes_equal_a_fresh_maps_answers() -> None:
    """Routes, neighbours and unexplored exits are kept until the map changes: after every
    change (of any kind, repeated ones too) they equal those of a map that never answered."""
    graph = MapGraph()
    graph.note_exits(1, ["north", "east"])
    assert graph.unexplored_exits(1) == ["north", "east"]
    graph.add_connection(1, 1, action="north")  # stayed here: tried, no longer unexplored
    assert graph.unexplored_exits(1) == ["east"]
    rng = random.Random(3)
    rooms = range(1, 6)
    directions = ["north", "south", "east", "west", "up", "enter"]
    kept = MapGraph()
    changes: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    for _ in range(300):
        roll, here, there = rng.random(), rng.choice(rooms), rng.choice(rooms)
        if roll < 0.45:
            change = ("add_connection", (here, there), {"action": rng.choice([*directions, None])})
        elif roll < 0.7:
            change = ("note_exits", (here, rng.sample(directions, 2)), {})
        else:
            change = ("mark_failed_exit", (here, rng.choice(directions)), {})
        changes.append(change)
        getattr(kept, change[0])(*change[1], **change[2])
        fresh = MapGraph()
        for name, args, kwargs in changes:
            getattr(fresh, name)(*args, **kwargs)
        for a in rooms:
            assert kept.nearest_unexplored(a) == fresh.nearest_unexplored(a)
            assert kept.unexplored_exits(a) == fresh.unexplored_exits(a)
            assert kept.neighbors(a) == fresh.neighbors(a)
            for b in rooms:
                assert kept.route_edges(a, b) == fresh.route_edges(a, b)
