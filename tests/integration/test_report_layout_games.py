"""The report's map on the largest walkthrough maps of the shared games (replayed through
Jericho; story files from $CAIRN_ROMS, each game skipped without its file): labels cover no
other label and no room, and compass moves point their way."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.report.layout import layout_map
from cairn.report.svg_map import MapMarks, map_svg
from tests.report_maps import (
    GAMES,
    ROMS,
    compass_moves,
    label_overlaps,
    points_its_way,
    walkthrough_map,
)


@pytest.mark.parametrize("game", GAMES)
def test_labels_cover_nothing_and_moves_point_their_way(game: str, tmp_path: Path) -> None:
    story = ROMS / game
    if not story.is_file():
        pytest.skip(f"no story file {story}")
    graph = walkthrough_map(story, tmp_path)
    start = min(graph.location_ids())
    svg = map_svg(graph, MapMarks(start=start, current=max(graph.location_ids())))
    assert label_overlaps(svg) == []
    moves = compass_moves(layout_map(graph, start=start))
    their_way = sum(points_its_way(action, offset) for action, offset in moves)
    assert their_way >= 0.9 * len(moves), (their_way, len(moves))
