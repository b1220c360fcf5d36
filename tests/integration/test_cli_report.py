"""`cairn report`, `cairn compare` and `cairn map --format svg` through the command line, and
their one-line errors (exit 2) for a folder with no report.json or a missing baseline."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.adapters.storage.map_repository import save_map
from cairn.cli import main
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope
from cairn.services.map import MapGraph
from cairn.testing import InMemoryStore
from tests.unit.test_report_page import report


def workdir_with_a_run(folder: Path, memory: bool = True) -> Path:
    """A workdir as `cairn play` leaves it: report.json, map.json, a markdown store."""
    from cairn.adapters.storage.markdown_store import MarkdownMemoryStore

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_text(json.dumps(report(memory=memory)))
    g = MapGraph()
    g.set_name(44, "Entrance Hall")
    g.set_name(46, "Garden")
    g.add_connection(44, 46, action="west")
    g.add_connection(46, 44, action="east")
    save_map(g, folder / "map.json")
    store = MarkdownMemoryStore(folder / "Memories.md")
    with store.transaction() as tx:
        tx.add(
            MemoryEntry(
                scope=MemoryScope.LOCATION,
                location_id=46,
                category=MemoryCategory.DANGER,
                title="Sinkhole to the west",
            )
        )
    store.close()
    return folder


def cairn(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed entry point (its CairnError -> one line, exit 2), in a fresh process."""
    code = "from cairn.cli import run; run()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


def test_report_writes_one_html_file_with_the_map_and_memories(tmp_path: Path) -> None:
    work = workdir_with_a_run(tmp_path / "run")
    out = tmp_path / "page.html"
    result = CliRunner().invoke(main, ["report", "--workdir", str(work), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"report: {out}"
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "Sinkhole to the west" in page
    assert re.search(r'class="room danger" data-id="46"', page)
    default = CliRunner().invoke(main, ["report", "--workdir", str(work)])
    assert default.exit_code == 0 and (work / "report.html").is_file()


def test_report_with_a_baseline_draws_both_runs(tmp_path: Path) -> None:
    work = workdir_with_a_run(tmp_path / "memory")
    base = workdir_with_a_run(tmp_path / "baseline", memory=False)
    result = CliRunner().invoke(main, ["report", "--workdir", str(work), "--baseline", str(base)])
    assert result.exit_code == 0, result.output
    page = (work / "report.html").read_text()
    assert 'class="point baseline"' in page and '<table id="comparison">' in page


def test_report_of_a_folder_without_report_json_is_a_one_line_error(tmp_path: Path) -> None:
    result = cairn("report", "--workdir", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'report.json'}: no report.json in this workdir"
        " (run `cairn play` there first)"
    ]
    assert not (tmp_path / "report.html").exists() and not (tmp_path / "Memories.md").exists()


def test_report_with_a_missing_baseline_is_a_one_line_error(tmp_path: Path) -> None:
    work = workdir_with_a_run(tmp_path / "run")
    missing = tmp_path / "nowhere"
    result = cairn("report", "--workdir", str(work), "--baseline", str(missing))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: baseline {missing} does not exist"]


def test_compare_prints_the_two_runs_per_episode(tmp_path: Path) -> None:
    work = workdir_with_a_run(tmp_path / "memory")
    base = workdir_with_a_run(tmp_path / "baseline", memory=False)
    result = CliRunner().invoke(main, ["compare", str(work), str(base)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"A: {work} (tw-demo, memory")
    assert lines[1].startswith(f"B: {base} (tw-demo, no memory")
    assert lines[2].split()[:3] == ["ep", "score", "A"]
    assert [line.split()[0] for line in lines[3:]] == ["1", "2", "3"]
    broken = cairn("compare", str(work), str(tmp_path))
    assert broken.returncode == 2 and broken.stderr.count("\n") == 1
    assert "no report.json in this run" in broken.stderr


def test_map_as_svg_has_ids_one_edge_per_connection_and_the_memories(tmp_path: Path) -> None:
    work = workdir_with_a_run(tmp_path / "run")
    result = CliRunner().invoke(main, ["map", "--workdir", str(work), "--format", "svg"])
    assert result.exit_code == 0, result.output
    svg = result.output
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert ">Garden (L46)</text>" in svg and 'data-memories="1"' in svg
    assert len(re.findall(r'<path class="edge two-way"', svg)) == 1
    assert '<path class="edge one-way"' not in svg
    mermaid = CliRunner().invoke(main, ["map", "--workdir", str(work)])
    assert 'L44["Entrance Hall (L44)"]' in mermaid.output
    assert "L44 <-->|west / east| L46" in mermaid.output


def test_an_in_memory_store_gives_the_same_memories_to_the_report(tmp_path: Path) -> None:
    from cairn.report.data import gather

    work = workdir_with_a_run(tmp_path / "run")
    store = InMemoryStore()
    with store.transaction() as tx:
        tx.add(MemoryEntry(scope=MemoryScope.WORLD, title="The world is round"))
    data = gather(work, store)
    assert [m.title for m in data.memories] == ["The world is round"]
    assert data.graph.name_of(46) == "Garden" and data.report["game"] == "tw-demo"


def test_a_report_reads_the_newest_of_a_long_lived_archive_and_counts_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The archive only grows: a report embeds its newest `ARCHIVE_SHOWN` memories and says
    how many older ones it left in the archive, so writing it costs what it shows."""
    from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
    from cairn.report import data as report_data
    from cairn.report.page import render_page

    monkeypatch.setattr(report_data, "ARCHIVE_SHOWN", 3)
    work = workdir_with_a_run(tmp_path / "run")
    store = MarkdownMemoryStore(work / "Memories.md")
    for n in range(5):  # five episodes, each archiving one memory
        with store.transaction() as tx:
            tx.add(MemoryEntry(id=f"m-{n}", scope=MemoryScope.WORLD, title=f"Belief {n}"))
        with store.transaction() as tx:
            tx.supersede(f"m-{n}", None)
        store.checkpoint()
    data = report_data.gather(work, store)
    assert sorted(m.id for m in data.memories if not m.visible) == ["m-2", "m-3", "m-4"]
    assert data.older_archived == 2
    page = render_page(data)
    assert "(5 superseded)" in page and "2 older superseded memories are in the archive" in page
    assert "Belief 4" in page and "Belief 1" not in page
    store.close()
