"""Issue 37 item 6: the memory commands that read make no store where there is none."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.cli import main
from cairn.memory_api import Memory

READS = (
    ["show"],
    ["show", "--all"],
    ["show", "--json"],
    ["search", "lamp"],
    ["search", "--json", "lamp"],
    ["export"],
    ["export", "--format", "jsonl"],
)


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("store", ["markdown", "sqlite"])
@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_a_read_on_a_folder_with_no_store_says_so_and_writes_nothing(
    tmp_path: Path, store: str, args: list[str]
) -> None:
    folder = tmp_path / "someone's folder"
    folder.mkdir()
    (folder / "notes.txt").write_text("not cairn's\n")
    before = _listing(folder)
    result = CliRunner().invoke(
        main, ["memories", *args, "--workdir", str(folder), "--store", store]
    )
    assert result.exit_code == 0, result.output
    assert _listing(folder) == before
    if "--json" not in args and "export" not in args:
        assert "No memories in" in result.output


@pytest.mark.parametrize("store", ["markdown", "sqlite"])
def test_edit_on_a_folder_with_no_store_refuses_and_writes_nothing(
    tmp_path: Path, store: str
) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    before = _listing(folder)
    result = CliRunner().invoke(
        main,
        ["memories", "edit", "--workdir", str(folder), "--store", store],
        env={"EDITOR": "true", "VISUAL": "true"},
    )
    assert result.exit_code == 1
    assert "No memories in" in result.output and "nothing to edit" in result.output
    assert _listing(folder) == before


def test_a_read_of_an_existing_sqlite_store_still_finds_its_memories(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with Memory.open(run, store="sqlite") as memory:
        memory.add("The brass lamp lies in the cellar.", title="Lamp")
    result = CliRunner().invoke(
        main, ["memories", "search", "lamp", "--workdir", str(run), "--store", "sqlite"]
    )
    assert result.exit_code == 0, result.output
    assert "brass lamp" in result.output
