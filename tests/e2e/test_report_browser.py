"""The HTML report of a 3-episode demo run, opened in headless Chromium (DevTools protocol):
one map node per visited room, a click on a room shows its memories, one point per episode on
every curve, the filter and the superseded toggle work, and no request leaves the page.

Skipped, with the reason, when /usr/bin/chromium is missing (`make test` installs it).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cairn.cli import main
from cairn.models.memory import MemoryScope
from tests.e2e.cdp import CHROMIUM, Chromium, Page

pytestmark = pytest.mark.skipif(
    not CHROMIUM.is_file(), reason=f"no {CHROMIUM} (make test installs Debian's chromium)"
)
EPISODES = 3


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workdir after `cairn play` on the built-in demo world, offline, 3 episodes."""
    work = tmp_path_factory.mktemp("demo-run")
    args = ["play", "--workdir", str(work), "--episodes", str(EPISODES), "--max-turns", "40"]
    result = CliRunner().invoke(main, [*args, "--fresh"])
    assert result.exit_code == 0, result.output
    assert f"html report: {work / 'report.html'}" in result.output
    return work


def visited_rooms(work: Path) -> set[int]:
    """Every room the run's transcript says the player stood in."""
    [transcript] = work.glob("runs/*/transcript.jsonl")
    rooms: set[int] = set()
    for line in transcript.read_text().splitlines():
        turn = json.loads(line)
        rooms.update(r for r in (turn["location_before"], turn["location_after"]) if r is not None)
    return rooms


def visible_titles(work: Path, room: int) -> list[str]:
    from cairn.container import build_container
    from cairn.settings import load_settings

    store = build_container(load_settings(workdir=work)).store()
    try:
        entries = store.entries(scope=MemoryScope.LOCATION, location_id=room)
    finally:
        store.close()
    return [e.title for e in entries if e.visible]


def open_report(page: Page, report: Path) -> str:
    url = report.resolve().as_uri()
    page.send("Network.enable")
    page.send("Page.enable")
    page.send("Page.navigate", url=url)
    page.wait_for("Page.loadEventFired")
    return url


def requests(page: Page) -> list[str]:
    return [
        e["params"]["request"]["url"]
        for e in page.events
        if e.get("method") == "Network.requestWillBeSent"
    ]


def shown_memories(page: Page) -> Any:
    return page.evaluate(
        "Array.from(document.querySelectorAll('#memories .group'))"
        ".filter(g => !g.hidden).map(g => [g.dataset.loc || g.id,"
        " Array.from(g.querySelectorAll('.memory')).filter(li => !li.hidden)"
        ".map(li => li.querySelector('.title').textContent)])"
    )


def test_the_demo_report_in_a_browser(demo_run: Path, tmp_path: Path) -> None:
    report = demo_run / "report.html"
    with Chromium(tmp_path / "profile") as browser:
        page = browser.page()
        try:
            url = open_report(page, report)

            # the map: one node per visited room
            ids = page.evaluate(
                "Array.from(document.querySelectorAll('#map-svg .room')).map(g => +g.dataset.id)"
            )
            assert sorted(ids) == sorted(visited_rooms(demo_run))

            # clicking the room with the most memories shows exactly its visible memories
            room = page.evaluate(
                "Array.from(document.querySelectorAll('#map-svg .room'))"
                ".sort((a, b) => b.dataset.memories - a.dataset.memories)[0].dataset.id"
            )
            box = page.evaluate(
                f"(() => {{ const r = document.querySelector("
                f"'#map-svg .room[data-id=\"{room}\"] rect.box');"
                " r.scrollIntoView({block: 'center', inline: 'center'});"
                " const b = r.getBoundingClientRect();"
                " return [b.x + b.width / 2, b.y + b.height / 2]; })()"
            )
            page.click(box[0], box[1])
            expected = visible_titles(demo_run, int(room))
            assert expected, "the busiest room holds memories"
            assert shown_memories(page) == [[room, expected]]
            label = page.evaluate("document.getElementById('selection-label').textContent")
            assert label.endswith(f"(L{room})")
            assert page.evaluate(
                f"document.querySelector('#map-svg .room[data-id=\"{room}\"]')"
                ".classList.contains('selected')"
            )

            # the filter narrows the list; "show all" brings every group back
            page.evaluate("document.getElementById('show-all').click()")
            everything = sum(len(titles) for _, titles in shown_memories(page))
            word = expected[0].split()[0]
            page.evaluate(
                f"(() => {{ const f = document.getElementById('filter'); f.value = {word!r};"
                " f.dispatchEvent(new Event('input')); })()"
            )
            narrowed = [t for _, titles in shown_memories(page) for t in titles]
            assert 0 < len(narrowed) < everything
            assert page.evaluate(
                "Array.from(document.querySelectorAll('#memories .memory')).filter(li =>"
                f" !li.hidden).every(li => li.textContent.toLowerCase().includes({word.lower()!r}))"
            )

            # the curves: one point per episode on each of them
            points = page.evaluate(
                "Array.from(document.querySelectorAll('svg.chart')).map(c =>"
                " [c.dataset.metric, c.querySelectorAll('.point.run').length])"
            )
            assert len(points) == 5
            assert all(count == EPISODES for _, count in points), points

            shot = page.send("Page.captureScreenshot", format="png")
            (tmp_path / "report.png").write_bytes(base64.b64decode(shot["data"]))

            # nothing but the file itself was requested, during the load or the clicks
            page.drain()
            assert set(requests(page)) <= {url} and requests(page), requests(page)
        finally:
            page.close()
    png = (tmp_path / "report.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_superseded_memories_hide_until_asked_and_link_to_their_successor(tmp_path: Path) -> None:
    from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
    from cairn.models.memory import MemoryEntry
    from tests.integration.test_cli_report import workdir_with_a_run

    work = workdir_with_a_run(tmp_path / "run")
    store = MarkdownMemoryStore(work / "Memories.md")
    with store.transaction() as tx:
        for ident, title in (
            ("m-old", "Door is locked"),
            ("m-new", "Key opens the door"),
            ("m-odd", "<img src=x onerror=\"document.title='owned'\"></script>"),
        ):
            tx.add(MemoryEntry(id=ident, scope=MemoryScope.LOCATION, location_id=44, title=title))
        tx.supersede("m-old", "m-new")
        tx.supersede("m-odd", "m-new")
    store.close()
    result = CliRunner().invoke(main, ["report", "--workdir", str(work)])
    assert result.exit_code == 0, result.output
    with Chromium(tmp_path / "profile") as browser:
        page = browser.page()
        try:
            open_report(page, work / "report.html")
            # superseded memories are made into items the first time they are asked for
            assert page.evaluate("document.getElementById('mem-m-old') === null")
            assert page.evaluate("document.getElementById('mem-m-new').hidden") is False
            page.evaluate("document.getElementById('show-superseded').click()")
            assert page.evaluate("document.getElementById('mem-m-old').hidden") is False
            order = "[...document.querySelectorAll('#group-loc-44 li')].map(li => li.id)"
            assert page.evaluate(order) == ["mem-m-old", "mem-m-odd", "mem-m-new"]
            odd = "document.querySelector('#mem-m-odd .title').textContent"
            assert page.evaluate(odd).startswith("<img src=x")  # text, not markup
            assert page.evaluate("document.querySelectorAll('#memories img').length") == 0
            assert page.evaluate("document.title") != "owned"
            page.evaluate("document.getElementById('show-superseded').click()")
            assert page.evaluate("document.getElementById('mem-m-old').hidden") is True
            page.evaluate("document.getElementById('filter').value = 'locked'")
            page.evaluate("document.getElementById('show-superseded').click()")
            page.evaluate("document.getElementById('filter').dispatchEvent(new Event('input'))")
            assert page.evaluate("document.getElementById('mem-m-odd').hidden") is True
            assert page.evaluate("document.getElementById('mem-m-old').hidden") is False
            page.evaluate("document.querySelector('#mem-m-old a.to-successor').click()")
            assert page.evaluate("document.getElementById('mem-m-new').classList.contains('flash')")

            width = "+document.getElementById('map-svg').getAttribute('width')"
            before = page.evaluate(width)
            page.evaluate("document.querySelector('[data-zoom=in]').click()")
            assert page.evaluate(width) > before
        finally:
            page.close()
