"""Zork I's walkthrough map as the report draws it, measured in headless Chromium: the text
the browser lays out for each edge label fits the box the layout estimated for it, and covers
no other label and no room (DevTools protocol; skipped without /usr/bin/chromium or the story
file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.report.svg_map import MapMarks, map_svg
from tests.e2e.cdp import CHROMIUM, Chromium
from tests.report_maps import ZORK, Area, drawn_areas, walkthrough_map

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.is_file(), reason=f"no {CHROMIUM}"),
    pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file {ZORK}"),
]
MEASURE = """Array.from(document.querySelectorAll(
  '#map-svg .edge-label, #map-svg .room rect')).map(e => {
    const b = e.getBBox();
    return [e.getAttribute('class') || 'rect', e.textContent, b.x, b.y, b.width, b.height];
})"""


def test_the_browser_draws_each_label_inside_its_estimate_and_off_everything_else(
    tmp_path: Path,
) -> None:
    graph = walkthrough_map(ZORK, tmp_path / "replay")
    svg = map_svg(graph, MapMarks(start=180, current=193))
    page_file = tmp_path / "map.html"
    page_file.write_text(f"<!doctype html><html><body>{svg}</body></html>")
    with Chromium(tmp_path / "profile") as browser:
        page = browser.page()
        try:
            page.send("Page.enable")
            page.send("Page.navigate", url=page_file.resolve().as_uri())
            page.wait_for("Page.loadEventFired")
            drawn = page.evaluate(MEASURE)
        finally:
            page.close()
    labels = [
        Area(f"label {text!r}", x, y, x + w, y + h)
        for kind, text, x, y, w, h in drawn
        if kind == "edge-label"
    ]
    rooms = [
        Area("room", x, y, x + w, y + h) for kind, _, x, y, w, h in drawn if kind != "edge-label"
    ]
    _, estimates = drawn_areas(svg)
    assert len(labels) == len(estimates) >= 80
    for label, estimate in zip(labels, estimates, strict=True):
        assert estimate.left <= label.left and label.right <= estimate.right, (label, estimate)
        assert estimate.top <= label.top and label.bottom <= estimate.bottom, (label, estimate)
    overlaps = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :] if a.overlaps(b)]
    overlaps += [(a, b) for a in labels for b in rooms if a.overlaps(b)]
    assert overlaps == []
