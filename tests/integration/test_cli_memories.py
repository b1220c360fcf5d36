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


def line_number(path: Path, line: str) -> int:
    return path.read_text().split("\n").index(line) + 1


def test_check_keeps_the_paragraph_readme_invites_and_fails_only_what_it_cannot_read(
    tmp_path: Path,
) -> None:
    """README's "Editing Memories.md by hand": "add your own paragraphs". A person does, and
    checks the file: their note is content, listed as kept, and the file is valid (every
    check of a hand-edited file failed on its notes). A block cairn cannot read still fails."""
    path = seeded(tmp_path)
    note = "My own note: the window sticks when it rains."
    path.write_text(path.read_text().replace("### Memories\n", f"### Memories\n\n{note}\n", 1))
    runner = CliRunner()
    checked = runner.invoke(main, ["memories", "check", str(path)])
    assert checked.exit_code == 0, checked.output
    at = line_number(path, note)
    assert f"{path}: kept 1 hand-written note: {path}:{at}\n" in checked.output
    assert f"{path}: OK, 2 memories" in checked.output
    shown = runner.invoke(main, ["memories", "show", "--workdir", str(tmp_path)])
    assert shown.exit_code == 0 and "warning" not in shown.output
    store = MarkdownMemoryStore(path)  # a write rewrites the file: the note stays
    with store.transaction() as tx:
        tx.add(MemoryEntry(scope=MemoryScope.WORLD, title="Later", text="Written by cairn."))
    store.close()
    assert note in path.read_text()
    broken = '**[NOTE] Broken**\n<!-- cairn {"id": "m-broken", -->'
    path.write_text(path.read_text() + f"\n{broken}\n")
    bad = runner.invoke(main, ["memories", "check", str(path)])
    assert bad.exit_code == 1
    assert f"{path}:{line_number(path, '**[NOTE] Broken**')}: the cairn comment" in bad.output
    assert f"kept 1 hand-written note: {path}:{line_number(path, note)}\n" in bad.output


def test_a_comment_nested_2000_levels_deep_stops_no_command(tmp_path: Path) -> None:
    """The attack: a metadata comment nested 2,000 levels deep. `check`, `show`, `export` and
    `play` died with a RecursionError (play could not start until the file was fixed by
    hand); now it is one problem on its line, every other memory is read, and play keeps the
    block verbatim."""
    path = seeded(tmp_path)
    block = '**[NOTE] Deep**\n<!-- cairn {"x": ' + "[" * 2000 + "]" * 2000 + "} -->\ntext"
    path.write_text(path.read_text() + f"\n{block}\n")
    at = line_number(path, "**[NOTE] Deep**")
    runner = CliRunner()
    checked = runner.invoke(main, ["memories", "check", str(path)])
    assert checked.exit_code == 1, checked.output
    problem = f"{path}:{at}: the cairn comment nests more than 32 levels deep"
    assert [line for line in checked.output.splitlines() if line.startswith(f"{path}:")] == [
        f"{problem}; the block is kept verbatim",
        f"{path}: 1 problem(s); 2 memories parsed",
    ]
    shown = runner.invoke(main, ["memories", "show", "--workdir", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert "Enter kitchen through window" in shown.output and problem in shown.output
    exported = runner.invoke(main, ["memories", "export", "--workdir", str(tmp_path)])
    assert exported.exit_code == 0, exported.output
    start = exported.output.index("{")
    payload = json.loads(exported.output[start : exported.output.rindex("}") + 1])
    assert {m["title"] for m in payload["memories"]} == {
        "Enter kitchen through window",
        "Storm coming",
    }
    args = ["play", "--workdir", str(tmp_path), "--episodes", "1", "--max-turns", "2"]
    played = runner.invoke(main, args)
    assert played.exit_code == 0, played.output
    assert block in path.read_text()


def test_play_on_a_file_of_empty_sections_adds_only_what_play_adds(tmp_path: Path) -> None:
    """A Memories.md of empty location sections (`## Location N:` with nothing under it; a
    million of them grew from 22 MB to 74 MB in one `play --max-turns 2`): play grows it by
    no more than it writes into an empty workdir, and keeps every section it did not visit,
    once."""
    sections = [f"## Location {n}:" for n in range(1, 3001)]
    text = "# Location Memories\n\n" + "".join(f"{s}\n\n" for s in sections)
    text += "# NPC Memories\n\n# World Memories\n"
    runner = CliRunner()
    sizes = {}
    for name, start in (("sections", text), ("empty", None)):
        work = tmp_path / name
        work.mkdir()
        if start is not None:
            (work / "Memories.md").write_text(start)
        args = ["play", "--workdir", str(work), "--episodes", "1", "--max-turns", "2"]
        played = runner.invoke(main, args)
        assert played.exit_code == 0, played.output
        sizes[name] = (work / "Memories.md").stat().st_size
    assert 0 < sizes["sections"] - len(text) <= sizes["empty"], sizes
    after = (tmp_path / "sections" / "Memories.md").read_text().split("\n")
    kept = [s for s in sections if s in after]
    assert len(kept) >= 2990 and all(after.count(s) == 1 for s in kept)


def test_import_of_a_line_nested_thousands_deep_is_one_error_naming_it(tmp_path: Path) -> None:
    """The attack of issue 28 on the export reader: json.loads raised RecursionError, a
    traceback instead of `file:line: reason`."""
    path = tmp_path / "export.jsonl"
    deep = '{"memory": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path.write_text('{"cairn_export": 1}\n' + deep + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        main, ["memories", "import", str(path), "--workdir", str(tmp_path / "work")]
    )
    assert result.exit_code != 0
    assert not isinstance(result.exception, RecursionError), result.exception
    assert f"{path}:2: nested too deeply" in str(result.exception)
    assert not (tmp_path / "work" / "Memories.md").exists()
