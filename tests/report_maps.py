"""Maps for the report's tests and bench: the shared games' full walkthrough maps, built by
replaying each walkthrough through Jericho (story files from $CAIRN_ROMS, never copied); and
what a drawn map's SVG shows, read back from its coordinates."""

from __future__ import annotations

import itertools
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from cairn.report.edge_labels import ASCENT_EM, CHAR_EM, LINE_EM, TEXT_PAD
from cairn.report.layout import CELL_H, CELL_W, MapLayout
from cairn.report.placement_geometry import COMPASS
from cairn.services.map import MapGraph

ROMS = Path(
    os.environ.get("CAIRN_ROMS") or Path(__file__).resolve().parents[1].parent / "shared" / "roms"
)
ZORK = ROMS / "zork1.z5"
GAMES = ("zork1.z5", "curses.z5", "planetfall.z3", "theatre.z5", "inhumane.z5", "hhgg.z3")
"""The largest walkthrough maps of the shared games (35 to 135 rooms)."""
_SVG = "{http://www.w3.org/2000/svg}"


def walkthrough_map(story: Path, workdir: Path) -> MapGraph:
    """The map a replay of `story`'s whole walkthrough learns (its workdir: `workdir`)."""
    from cairn.container import build_container
    from cairn.replay.prepare import open_story, replay_settings, walkthrough_document
    from cairn.replay.runner import JerichoReplay
    from cairn.replay.scenario_models import JerichoScenario

    document = walkthrough_document(story)
    spec = document.scenario
    assert isinstance(spec, JerichoScenario)
    settings = replay_settings(document, workdir)
    container = build_container(settings)
    try:
        JerichoReplay(document, spec, container, open_story(document, spec, None)).run()
    finally:
        container.store().close()
    graph: MapGraph = container.map_graph()
    return graph


@dataclass(frozen=True)
class Area:
    """Something drawn, by what it shows, and the rectangle it covers."""

    what: str
    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Area) -> bool:
        return (
            self.left < other.right
            and other.left < self.right
            and self.top < other.bottom
            and other.top < self.bottom
        )


def drawn_areas(svg: str) -> tuple[list[Area], list[Area]]:
    """The room boxes (every `rect` of a room: its box, ring and badges) and the edge labels of
    a map's SVG. A label's area is estimated from the font size the SVG's style gives edge
    labels and its character count, as the layout estimates it: `CHAR_EM` font sizes a
    character, `LINE_EM` a line, the first baseline `ASCENT_EM` below the top, `TEXT_PAD`
    around."""
    root = ET.fromstring(svg)
    style = "".join(node.text or "" for node in root.iter(f"{_SVG}style"))
    font = re.search(r"\.edge-label \{ font-size: (\d+(?:\.\d+)?)px", style)
    assert font, "the style gives edge labels no font size"
    size = float(font.group(1))
    rooms = [
        Area(
            f"room {group.get('data-label')}",
            float(rect.get("x", 0)),
            float(rect.get("y", 0)),
            float(rect.get("x", 0)) + float(rect.get("width", 0)),
            float(rect.get("y", 0)) + float(rect.get("height", 0)),
        )
        for group in root.iter(f"{_SVG}g")
        if "room" in (group.get("class") or "").split()
        for rect in group.iter(f"{_SVG}rect")
    ]
    labels = []
    for text in root.iter(f"{_SVG}text"):
        if text.get("class") != "edge-label":
            continue
        lines = [span for span in text.iter(f"{_SVG}tspan")] or [text]
        words = [line.text or "" for line in lines]
        x, first = float(lines[0].get("x", 0)), float(lines[0].get("y", 0))
        last = float(lines[-1].get("y", 0))
        half = CHAR_EM * size * max(map(len, words)) / 2 + TEXT_PAD
        top = first - ASCENT_EM * size - TEXT_PAD
        bottom = last - ASCENT_EM * size + LINE_EM * size + TEXT_PAD
        labels.append(Area(f"label {' '.join(words)!r}", x - half, top, x + half, bottom))
    return rooms, labels


def label_overlaps(svg: str) -> list[tuple[str, str]]:
    """Every edge label that overlaps another label or a room box, with what it overlaps."""
    rooms, labels = drawn_areas(svg)
    found = [(a.what, b.what) for a, b in itertools.combinations(labels, 2) if a.overlaps(b)]
    found += [(label.what, room.what) for label in labels for room in rooms if label.overlaps(room)]
    return found


def compass_moves(layout: MapLayout) -> list[tuple[str, tuple[int, int]]]:
    """Each compass move of the drawn map (both ways of a two-way edge), with where its
    target's box lies from its source's, in grid cells (x right, y down)."""
    moves = []
    for edge in layout.edges:
        link = edge.link
        for actions, (source, target) in (
            (link.forward, (link.a, link.b)),
            (link.back, (link.b, link.a)),
        ):
            for action in actions:
                if action in COMPASS:
                    (sx, sy), (tx, ty) = layout.boxes[source].center, layout.boxes[target].center
                    moves.append((action, (round((tx - sx) / CELL_W), round((ty - sy) / CELL_H))))
    return moves


def points_its_way(action: str, offset: tuple[int, int]) -> bool:
    """Whether a move drawn to `offset` points the way it says: within 45 degrees of it on
    the grid (`west`: the target left of the source, no more rows off than columns)."""
    (sx, sy), (ox, oy) = COMPASS[action], offset
    dot = sx * ox + sy * oy
    return dot > 0 and dot * dot >= 0.5 * (sx * sx + sy * sy) * (ox * ox + oy * oy)


def on_its_bearing(action: str, offset: tuple[int, int]) -> bool:
    """Whether the target lies exactly on the move's bearing (`west`: same row, left)."""
    (sx, sy), (ox, oy) = COMPASS[action], offset
    return sx * oy == sy * ox and sx * ox + sy * oy > 0
