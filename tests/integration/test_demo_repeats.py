"""`cairn demo` run again into the same folder shows the same, and leaves the same memories.

A new user tries the demo, then runs it again (to show a colleague, after an upgrade, by habit).
The demo is a replay of one scripted session: each run starts from the demo's own fresh state,
so the memories and the narrative prompt are the same every time (they grew with each run: the
script's messages were summarized again into a store that already held their summaries).
Anything else the folder's store holds is set aside, never lost.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cairn import Memory
from cairn.cli import main
from cairn.container import build_container
from cairn.settings import load_settings

STORE_FILES = {"markdown": "Memories.md", "sqlite": "memories.sqlite3"}


def demo(workdir: Path, store: str) -> Result:
    result = CliRunner().invoke(main, ["demo", "--workdir", str(workdir), "--store", store])
    assert result.exit_code == 0, result.output
    return result


def prompt_of(output: str) -> str:
    return output.split("# Narrative prompt", 1)[1]


@pytest.mark.parametrize("store", ["markdown", "sqlite"])
def test_running_the_demo_four_times_shows_and_keeps_the_same(tmp_path: Path, store: str) -> None:
    first = demo(tmp_path, store)
    stored = (tmp_path / STORE_FILES[store]).read_bytes()
    runs = [first, *(demo(tmp_path, store) for _ in range(3))]
    for again in runs[1:]:
        assert again.stdout == first.stdout  # the memories (ids too) and the prompt
        assert prompt_of(again.stdout) == prompt_of(first.stdout)
        assert again.stderr == ""
    assert (tmp_path / STORE_FILES[store]).read_bytes() == stored
    assert first.stdout.count("Visit to Rainy Street") == 1
    assert "(227 tokens estimated" in first.stdout
    assert not (tmp_path / "backups").exists()


def test_a_store_holding_more_than_the_demo_is_set_aside_not_lost(tmp_path: Path) -> None:
    """The user added a memory of their own to the demo's store (or it holds an older demo's
    duplicates): the next run sets that store aside, says where, and shows a first run's."""
    clean = demo(tmp_path / "clean", "markdown")
    workdir = tmp_path / "used"
    demo(workdir, "markdown")
    container = build_container(load_settings(workdir=workdir))
    Memory(container).add("The landlord waters the beer.", importance=900)
    container.store().close()
    again = demo(workdir, "markdown")
    assert again.stdout.replace(str(workdir), "W") == clean.stdout.replace(
        str(tmp_path / "clean"), "W"
    )
    (aside,) = (workdir / "backups").iterdir()
    assert again.stderr.strip() == f"demo: the store's previous memories are in {aside}"
    assert "The landlord waters the beer." in (aside / "Memories.md").read_text()
    assert "The landlord waters the beer." not in (workdir / "Memories.md").read_text()
