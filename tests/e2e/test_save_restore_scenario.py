"""scenarios/save_restore.yaml through `cairn replay` on markdown, SQLite and PostgreSQL: a save,
a quest completed and an NPC met, the save loaded, play on; after the restore the prompts hold
neither the quest nor a second summary, and the archive holds the undone memories."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.cli import main
from tests.postgres import server

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "save_restore.yaml"


def scenario_on(tmp_path: Path, settings: dict[str, str]) -> Path:
    """A copy of the scenario (with its expected prompts) whose settings choose the store."""
    folder = tmp_path / "scenarios"
    (folder / "expected").mkdir(parents=True)
    for expected in (ROOT / "scenarios" / "expected").glob("save_restore.*.txt"):
        shutil.copy(expected, folder / "expected" / expected.name)
    lines = "".join(f"  {key}: {json.dumps(value)}\n" for key, value in settings.items())
    text = SCENARIO.read_text(encoding="utf-8")
    assert "\nllm: offline\n" in text
    path = folder / SCENARIO.name
    path.write_text(text.replace("\nllm: offline\n", f"\nllm: offline\nsettings:\n{lines}"))
    return path


def replayed(path: Path, workdir: Path) -> str:
    result = CliRunner().invoke(main, ["replay", str(path), "--workdir", str(workdir)])
    assert result.exit_code == 0, result.output
    assert "1 scenario(s): 1 passed, 0 failed" in result.output
    assert "FAIL" not in result.output
    for check in ("archived[0]", "prompts[0]", "prompts[1]", "prompts[2]", "cursors.world"):
        assert f"PASS {check} " in result.output
    return result.output


@pytest.mark.parametrize("store", ["markdown", "sqlite"])
def test_the_scenario_passes_on_a_file_store(tmp_path: Path, store: str) -> None:
    replayed(scenario_on(tmp_path, {"store": store}), tmp_path / "run")

    folder = tmp_path / "run" / "save_restore"
    if store == "markdown":
        archive = (folder / "Memories.archive.md").read_text(encoding="utf-8")
        assert archive.count('"undone"]') == 6 and "Completed quest 'The lost cargo'" in archive
        assert "undone" not in (folder / "Memories.md").read_text(encoding="utf-8")
    else:
        conn = sqlite3.connect(folder / "memories.sqlite3")
        try:
            rows = [json.loads(e) for (e,) in conn.execute("SELECT entry FROM memories_archive")]
            live = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        finally:
            conn.close()
        assert sum("undone" in row["tags"] for row in rows) == 6 and live == 6


def test_the_scenario_passes_on_postgres(tmp_path: Path) -> None:
    url = server().url
    path = scenario_on(
        tmp_path, {"store": "postgres", "database_url": url, "memory_space": str(tmp_path)}
    )
    output = replayed(path, tmp_path / "run")
    assert "6 memories" in output
