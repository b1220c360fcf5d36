"""`cairn play` and `cairn map` through the command line (click's runner, real Jericho)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.cli import main


def test_play_prints_the_table_and_map_renders_what_it_learned(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "play",
            "--workdir",
            str(tmp_path),
            "--episodes",
            "2",
            "--max-turns",
            "30",
            "--fresh",
            "--store",
            "sqlite",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "tw-cairn-demo-1 (memory), llm offline" in result.output
    table = [
        line.split() for line in result.output.splitlines() if line.strip()[:2] in ("1 ", "2 ")
    ]
    assert [row[0] for row in table] == ["1", "2"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["store"] == "sqlite" and (tmp_path / "memories.sqlite3").exists()
    mermaid = runner.invoke(main, ["map", "--workdir", str(tmp_path)])
    assert mermaid.exit_code == 0 and 'L44["Entrance Hall (L44)"]' in mermaid.output
    dot = runner.invoke(main, ["map", "--workdir", str(tmp_path), "--format", "dot"])
    assert dot.exit_code == 0 and dot.output.startswith("digraph")
    shown = runner.invoke(
        main,
        ["memories", "show", "--workdir", str(tmp_path), "--store", "sqlite", "--location", "44"],
    )
    assert shown.exit_code == 0 and "Location 44: Entrance Hall" in shown.output


def test_play_with_a_missing_story_file_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["play", "--workdir", str(tmp_path), "--game", str(tmp_path / "none.z5")]
    )
    assert result.exit_code == 2 and "none.z5" in result.output


MY_AGENT = '''
class Pacer:
    """Not an IAgent subclass: only the shape (decide, new_episode)."""

    episodes = []

    def new_episode(self, episode):
        self.episodes.append(episode)

    def decide(self, view):
        return "north" if view.turn % 2 else "south"
'''


def test_play_with_your_own_agent_by_module_and_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_agents.py").write_text(MY_AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    work = tmp_path / "work"
    args = ["play", "--workdir", str(work), "--episodes", "1", "--max-turns", "6"]
    result = CliRunner().invoke(main, [*args, "--agent", "my_agents:Pacer"])
    assert result.exit_code == 0, result.output
    (transcript,) = work.glob("runs/*/transcript.jsonl")
    actions = [json.loads(line)["action"] for line in transcript.read_text().splitlines()]
    assert actions == ["north", "south"] * 3


def test_an_agent_that_cannot_be_loaded_is_named(tmp_path: Path) -> None:
    for spec, problem in [
        ("no_such_module:X", "cannot import 'no_such_module'"),
        ("json:NoSuchClass", "json has no class or function 'NoSuchClass'"),
        ("just-a-name", "expected module:Class"),
    ]:
        result = CliRunner().invoke(main, ["play", "--workdir", str(tmp_path), "--agent", spec])
        assert result.exit_code != 0 and problem in str(result.exception), spec
