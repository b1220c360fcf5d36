"""Episode numbers go on across `cairn play` runs in one folder, on every store (issue 38, item
7): a second run after two episodes plays episode 3, labels its memories Ep3, and its rooms'
visits count episode 3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cairn.cli import main
from cairn.container import build_container
from cairn.play.episode_numbers import next_episode
from cairn.play.runner import run_play
from cairn.settings import CairnSettings, load_settings
from cairn.testing import FakeGame

STORES = ("markdown", "sqlite", "postgres")


def settings_for(store: str, tmp_path: Path) -> CairnSettings:
    options: dict[str, Any] = {"workdir": tmp_path / "run", "store": store}
    if store == "postgres":
        from tests.postgres import server

        options.update(database_url=server().url, memory_space=str(tmp_path))
    return load_settings(**options)


@pytest.mark.parametrize("store", STORES)
def test_a_second_run_goes_on_from_the_episodes_the_store_holds(
    store: str, tmp_path: Path
) -> None:
    settings = settings_for(store, tmp_path)
    first = run_play(settings, game=FakeGame(), episodes=2, max_turns=6).report
    assert [e["episode"] for e in first["episodes"]] == [1, 2]
    second = run_play(settings, game=FakeGame(), episodes=1, max_turns=6).report
    assert [e["episode"] for e in second["episodes"]] == [3]

    container = build_container(settings)
    reader = container.store()
    try:
        labelled = {e.episode for e in reader.entries()}
        assert 3 in labelled and labelled <= {None, 1, 2, 3}  # new memories: Ep3, not Ep1
        start = reader.location(FakeGame().reset().location_id or 0)
        assert start is not None and start.episodes == [1, 2, 3]
        assert next_episode(reader) == 4
    finally:
        reader.close()
    if store == "markdown":
        text = (settings.workdir / "Memories.md").read_text(encoding="utf-8")
        assert "**Episodes:** 1, 2, 3" in text and "Ep3" in text
    knowledge = (settings.workdir / "knowledgebase.md").read_text(encoding="utf-8")
    assert [line.split(":")[0] for line in knowledge.splitlines() if line.startswith("- Ep")] == [
        "- Episode 1",
        "- Episode 2",
        "- Episode 3",
    ]


def test_an_empty_store_starts_at_episode_one(tmp_path: Path) -> None:
    container = build_container(load_settings(workdir=tmp_path, store="sqlite"))
    store = container.store()
    try:
        assert next_episode(store) == 1
    finally:
        store.close()


def test_the_command_line_table_and_progress_go_on_from_the_last_run(tmp_path: Path) -> None:
    args = ["play", "--workdir", str(tmp_path / "w"), "--episodes", "1", "--max-turns", "4"]
    runs = [CliRunner().invoke(main, args) for _ in range(2)]  # the demo world, twice
    for result in runs:
        assert result.exit_code == 0, result.output
    head, row = _table(runs[1].output)
    assert head[0] == "ep" and row[0] == "2"
    report = json.loads((tmp_path / "w" / "report.json").read_text())
    assert [e["episode"] for e in report["episodes"]] == [2]


def _table(output: str) -> tuple[list[str], list[str]]:
    lines = output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:2] == ["ep", "turns"])
    return lines[at].split(), lines[at + 1].split()
