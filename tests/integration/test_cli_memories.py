"""`cairn memories show | check | export` and `cairn demo` through the command line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.cli import main
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope


def seeded(tmp_path: Path) -> Path:
    store = MarkdownMemoryStore(tmp_path / "Memories.md")
    with store.transaction() as tx:
        tx.record_visit(79, "Behind House", 1)
        tx.add(
            MemoryEntry(
                scope=MemoryScope.LOCATION,
                location_id=79,
                location_name="Behind House",
                category=MemoryCategory.SUCCESS,
                title="Enter kitchen through window",
                text="Open the window, then enter it.",
                episode=1,
                turn_start=47,
                turn_end=49,
            )
        )
        tx.add(MemoryEntry(scope=MemoryScope.WORLD, title="Storm coming", text="Rain at dusk."))
    return tmp_path / "Memories.md"


def test_check_accepts_a_valid_file_and_names_each_bad_line(tmp_path: Path) -> None:
    path = seeded(tmp_path)
    runner = CliRunner()
    ok = runner.invoke(main, ["memories", "check", str(path)])
    assert ok.exit_code == 0 and "OK, 2 memories" in ok.output
    lines = path.read_text().splitlines()
    lines += ["", "**[BOGUS] Not a category** *(Ep1, T3)*", "text"]
    path.write_text("\n".join(lines) + "\n")
    bad = runner.invoke(main, ["memories", "check", str(path)])
    assert bad.exit_code == 1
    assert f"{path}:{len(lines) - 1}:" in bad.output and "BOGUS" in bad.output


def test_show_filters_by_scope_and_export_writes_json(tmp_path: Path) -> None:
    seeded(tmp_path)
    runner = CliRunner()
    shown = runner.invoke(
        main, ["memories", "show", "--workdir", str(tmp_path), "--location", "79"]
    )
    assert shown.exit_code == 0
    assert "Location 79: Behind House" in shown.output and "[SUCCESS] Enter kitchen" in shown.output
    assert "Storm coming" not in shown.output
    world = runner.invoke(main, ["memories", "show", "--workdir", str(tmp_path), "--world"])
    assert "Storm coming" in world.output and "Enter kitchen" not in world.output
    both = runner.invoke(
        main, ["memories", "show", "--workdir", str(tmp_path), "--world", "--location", "1"]
    )
    assert both.exit_code == 2
    exported = runner.invoke(main, ["memories", "export", "--workdir", str(tmp_path)])
    payload = json.loads(exported.output)
    assert {m["title"] for m in payload["memories"]} == {
        "Enter kitchen through window",
        "Storm coming",
    }
    assert payload["locations"] == [
        {"id": 79, "name": "Behind House", "visits": 1, "episodes": [1]}
    ]


def test_narrative_demo_prints_memories_and_the_prompt(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "--workdir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "# Narrative prompt" in result.output and "## NPC Memory" in result.output
    assert (tmp_path / "Memories.md").exists()


def test_show_heads_each_room_by_its_record_else_by_each_memory_s_room_name(
    tmp_path: Path,
) -> None:
    """A heading is made once per room and name: a room whose record is not found (location 0)
    is headed by the name its memories carry, one heading per name."""
    from cairn.adapters.storage.sqlite_store import SqliteMemoryStore

    store = SqliteMemoryStore(tmp_path / "memories.sqlite3")
    with store.transaction() as tx:
        tx.record_visit(79, "Behind House", 2)
        for n, (room, name) in enumerate([(79, "Old"), (0, "Cellar"), (0, "Dark cellar")] * 2):
            tx.add(
                MemoryEntry(
                    scope=MemoryScope.LOCATION,
                    location_id=room,
                    location_name=name,
                    title=f"M{n}",
                    importance=900 - n,
                )
            )
    store.close()
    shown = CliRunner().invoke(main, ["memories", "show", "--workdir", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    headings = [line for line in shown.output.splitlines() if line.startswith("== ")]
    assert headings == [
        "== Location 0: Cellar",
        "== Location 0: Dark cellar",
        "== Location 79: Behind House  (visits 1, episodes 2)",
    ]
    assert shown.output.count("[NOTE] M") == 6
