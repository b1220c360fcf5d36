"""The report page from a run's data: memories with category, status and successors, the curves
(one point per episode, the baseline beside), the comparison, LLM use, nothing fetched."""

from __future__ import annotations

import json
import re
from typing import Any

from cairn.models.memory import (
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
    MemoryStatus,
)
from cairn.report.charts import CURVES
from cairn.report.compare import comparison_rows, render_comparison
from cairn.report.data import RunData
from cairn.report.page import render_page
from cairn.services.map import MapGraph


def episode(n: int, score: int | None, first: int | None) -> dict[str, Any]:
    return {
        "episode": n,
        "turns": 40,
        "score": score,
        "max_score": 10,
        "turns_to_first_score": first,
        "repeated_failed_action_rate": 0.1 / n,
        "summarizer_call_rate": 0.5 / n,
        "context_tokens_p50": 400 + 50 * n,
    }


def report(memory: bool = True, scores: tuple[int | None, ...] = (1, 4, 4)) -> dict[str, Any]:
    return {
        "game": "tw-demo",
        "llm": "anthropic",
        "store": "markdown",
        "memory": memory,
        "seed": 0,
        "run_id": "r1",
        "episodes": [
            episode(i, s, None if s is None else 10 - i) for i, s in enumerate(scores, start=1)
        ],
        "total": {"turns": 120, "best_score": 4, "max_score": 10, "locations_visited": 3},
        "llm_usage": {
            "calls": 12,
            "failures": 2,
            "input_tokens": 9000,
            "output_tokens": 700,
            "by_role": {
                "adventurer": {
                    "calls": 10,
                    "failures": 1,
                    "input_tokens": 8000,
                    "output_tokens": 600,
                },
                "synthesis": {
                    "calls": 2,
                    "failures": 1,
                    "input_tokens": 1000,
                    "output_tokens": 100,
                },
            },
            "failures_by_kind": {"rate_limited": 1, "timeout": 1},
            "circuit": {"state": "closed"},
        },
        "summary_failures": 1,
        "query_tool_failures": 0,
    }


def memories() -> list[MemoryEntry]:
    old = MemoryEntry(
        id="m-old",
        scope=MemoryScope.LOCATION,
        location_id=1,
        title="Door is locked",
        status=MemoryStatus.SUPERSEDED,
        superseded_by="m-new",
    )
    new = MemoryEntry(
        id="m-new",
        scope=MemoryScope.LOCATION,
        location_id=1,
        category=MemoryCategory.SUCCESS,
        title="Key opens the door",
        text="unlock door with key",
    )
    gone = MemoryEntry(
        id="m-gone",
        scope=MemoryScope.LOCATION,
        location_id=2,
        title="A draft from the north",
        status=MemoryStatus.SUPERSEDED,
    )
    pit = MemoryEntry(
        id="m-pit",
        scope=MemoryScope.LOCATION,
        location_id=2,
        category=MemoryCategory.DANGER,
        status=MemoryStatus.TENTATIVE,
        title="Pit <b>here</b>",
    )
    death = MemoryEntry(
        id="m-death",
        scope=MemoryScope.WORLD,
        location_id=2,
        category=MemoryCategory.DANGER,
        source=MemorySource.ENDING,
        title="Died in Hall at turn 9",
    )
    bram = MemoryEntry(id="m-bram", scope=MemoryScope.NPC, npc_ids=["bram"], title="Bram trades")
    far = MemoryEntry(id="m-far", scope=MemoryScope.LOCATION, location_id=7, title="Far away")
    return [old, new, gone, pit, death, bram, far]


def run(baseline: dict[str, Any] | None = None) -> RunData:
    g = MapGraph()
    g.set_name(1, "Porch")
    g.set_name(2, "Hall")
    g.add_connection(1, 2, action="north")
    g.add_connection(2, 1, action="south")
    g.add_connection(2, 3, action="east")
    return RunData(
        report=report(),
        graph=g,
        memories=memories(),
        locations={7: LocationRecord(id=7, name="Tower")},
        start=1,
        current=3,
        baseline=baseline,
    )


def test_memories_show_category_status_and_link_superseded_ones_to_their_successor() -> None:
    page = render_page(run())
    # superseded memories are data the page's script makes into items when asked for
    assert 'id="mem-m-old"' not in page and 'id="mem-m-gone"' not in page
    later = superseded_rows(page)
    assert [row[:4] for row in later] == [
        ["loc-1", "m-old", "NOTE", "SUPERSEDED"],
        ["loc-2", "m-gone", "NOTE", "SUPERSEDED"],
    ]
    assert later[0][4] == "Door is locked" and later[0][7:] == ["m-new", "Key opens the door"]
    assert later[1][7:] == [None, None]  # "superseded, with no successor"
    assert "show superseded (2)" in page
    new = re.search(r'<li class="([^"]*)" id="mem-m-new">(.*?)</li>', page)
    assert new is not None and "superseded" not in new.group(1).split()
    assert '<span class="cat">SUCCESS</span> <span class="status">ACTIVE</span>' in new[2]
    assert '<span class="status">TENTATIVE</span>' in page
    assert "Pit &lt;b&gt;here&lt;/b&gt;" in page and "<b>here</b>" not in page
    assert 'id="filter"' in page and 'id="show-superseded"' in page
    assert "body.classList.toggle('show-superseded'" in page
    groups = re.findall(r'<section class="group" id="group-([^"]+)"', page)
    assert groups == ["loc-1", "loc-2", "loc-7", "npc-bram", "world"]
    assert ">Tower (L7) <small>(1)</small>" in page  # a room only the store names


def superseded_rows(page: str) -> list[list[Any]]:
    found = re.search(
        r'<script type="application/json" id="superseded-memories">(.*?)</script>', page, re.S
    )
    assert found is not None
    rows: list[list[Any]] = json.loads(found.group(1))
    return rows


def test_no_superseded_memory_can_close_the_data_script_or_add_markup() -> None:
    """Titles and texts go into the page's JSON with no `<` left: `</script>` in a memory
    cannot end the element early; the script sets them as text, never as markup."""
    data = run()
    hostile = "</script><script>alert(1)</script><!-- \u2028"
    data.memories.append(
        MemoryEntry(
            id="m-x</script>",
            scope=MemoryScope.NPC,
            npc_ids=["bram"],
            title=hostile,
            text=hostile,
            status=MemoryStatus.SUPERSEDED,
            superseded_by="m-bram",
        )
    )
    page = render_page(data)
    block = page[page.index('id="superseded-memories">') :]
    block = block[: block.index("</script>")]
    assert "<" not in block.removeprefix('id="superseded-memories">')
    row = superseded_rows(page)[-1]
    assert row[:2] == ["npc-bram", "m-x</script>"] and row[4] == row[6] == hostile
    assert row[7:] == ["m-bram", "Bram trades"]
    assert "alert(1)" not in page.replace(block, "")
    assert "textContent" in page and "innerHTML" not in page


def test_the_map_marks_memories_danger_deaths_start_and_current() -> None:
    data = run()
    marks = data.marks
    assert marks.memories == {1: 1, 2: 1, 7: 1}  # visible location memories only
    assert marks.danger == frozenset({2}) and marks.deaths == {2: 1}
    page = render_page(data)
    assert re.search(r'class="room danger death" data-id="2"', page)
    assert re.search(r'class="room current" data-id="3"', page)
    assert re.search(r'class="room start" data-id="1"', page)
    assert re.search(r'class="room" data-id="7"', page)


def test_each_curve_has_one_point_per_episode_and_the_baseline_beside_it() -> None:
    base = report(memory=False, scores=(0, None, 1))
    page = render_page(run(baseline=base))
    charts = re.findall(r'<svg [^>]*class="chart" data-metric="(\w+)".*?</svg>', page, re.S)
    assert charts == [curve.key for curve in CURVES]
    for curve in CURVES:
        chart = re.search(rf'data-metric="{curve.key}".*?</svg>', page, re.S)
        assert chart is not None
        assert len(re.findall(r'class="point (?:missing )?run"', chart.group(0))) == 3
        assert len(re.findall(r'class="point (?:missing )?baseline"', chart.group(0))) == 3
    score = re.search(r'data-metric="turns_to_first_score".*?</svg>', page, re.S)
    assert score is not None and 'class="point missing baseline" data-episode="2"' in score[0]
    assert "no memory, episode 3: 1" in page
    assert '<table id="comparison">' in page


def test_without_a_baseline_there_is_one_series_and_no_comparison() -> None:
    page = render_page(run())
    assert 'class="point baseline"' not in page and 'id="comparison"' not in page
    assert len(re.findall(r'<circle class="point run"', page)) == 3 * len(CURVES)


def test_llm_use_shows_calls_failures_by_kind_and_tokens_by_role() -> None:
    page = render_page(run())
    llm = re.search(r'<section class="panel" id="llm">.*?</section>', page, re.S)
    assert llm is not None
    section = llm.group(0)
    assert "<td>12</td><td>2</td><td>9000</td><td>700</td>" in section
    assert "<td>adventurer</td><td>10</td><td>1</td><td>8000</td><td>600</td>" in section
    assert "<td>rate_limited</td><td>1</td>" in section and "<td>timeout</td><td>1</td>" in section
    assert "Circuit breaker: closed" in section


def test_the_page_is_self_contained() -> None:
    page = render_page(run(baseline=report(memory=False)))
    assert not re.search(r"<(?:link|img|iframe|object|embed)\b", page)
    assert not re.search(r"\bsrc=", page) and "@import" not in page
    assert set(re.findall(r"url\(([^)]*)\)", page)) == {"#arrow"}
    assert not re.search(r'href="(?!#)', page)
    assert not re.findall(r"https?://(?!www\.w3\.org/2000/svg)", page)
    assert not re.search(r"\b(?:fetch|XMLHttpRequest|import\()", page)


def test_compare_prints_both_runs_episode_by_episode() -> None:
    a, b = report(), report(memory=False, scores=(0, 1))
    rows = comparison_rows(a, b)
    assert rows[0][:3] == ["ep", "score A", "score B"]
    assert [row[:3] for row in rows[1:]] == [["1", "1", "0"], ["2", "4", "1"], ["3", "4", "-"]]
    text = render_comparison(a, b, "runs/mem", "runs/base")
    assert text.splitlines()[0] == "A: runs/mem (tw-demo, memory, llm anthropic)"
    assert text.splitlines()[1] == "B: runs/base (tw-demo, no memory, llm anthropic)"
    assert len(text.splitlines()) == 2 + 4


def test_the_run_starts_and_ends_in_the_rooms_its_transcript_names_first_and_last(
    tmp_path: Any, mocker: Any
) -> None:
    """The first turn that names its room and the last one, past broken or roomless lines;
    the turns between are not decoded (a long run's transcript is tens of megabytes)."""
    import json

    from cairn.report import data

    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    turns = [{"location_before": None, "location_after": None}, "not an object"]
    turns += [{"location_before": n, "location_after": n + 1} for n in range(5, 1005)]
    lines = [json.dumps(t) for t in turns] + ["{broken", json.dumps({"location_after": None})]
    (run / "transcript.jsonl").write_text("\n".join(lines) + "\n")
    decode = mocker.spy(data.json, "loads")
    assert data.run_ends(tmp_path, {"run_id": "r1"}) == (5, 1005)
    assert decode.call_count <= 8
    assert data.run_ends(tmp_path, {"run_id": "gone"}) == (None, None)


def test_the_page_says_which_turns_the_stand_in_played_and_why_the_run_failed() -> None:
    data = run()
    assert "offline stand-in" not in render_page(data)
    data.report["total"]["stand_in_turns"] = 7
    data.report["model_failure"] = "the model at <server> never gave a usable answer"
    page = render_page(data)
    assert "7 turns played by the offline stand-in" in page
    assert "the run failed: the model at &lt;server&gt; never gave a usable answer" in page
