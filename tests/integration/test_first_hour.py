"""A new user's first hour with `cairn play`, step by step: their own agent from their own
folder, Ctrl-C twice, the files the run leaves and the table it prints (issue 28)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.interfaces.game import GameObservation
from cairn.play.runner import episode_table, run_play
from cairn.settings import load_settings
from cairn.testing.fake_game import FakeGame
from tests.conftest import interrupt_after_turns

CAIRN_SCRIPT = Path(sys.executable).with_name("cairn")
"""The console script `pip install` made, beside the interpreter."""

AGENTS = '''
import time


class Pacer:
    def decide(self, view):
        return "north" if view.turn % 2 else "south"


class Slow:
    """Takes a while to think: a Ctrl-C lands inside a turn."""

    def decide(self, view):
        time.sleep(0.4)
        return "look"
'''


def _my_package(folder: Path) -> None:
    package = folder / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "agents.py").write_text(AGENTS)


def _clean_env() -> dict[str, str]:
    """The user's shell: no PYTHONPATH pointing at their folder."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _actions(work: Path) -> list[str]:
    (transcript,) = work.glob("runs/*/transcript.jsonl")
    return [json.loads(line)["action"] for line in transcript.read_text().splitlines()]


@pytest.mark.skipif(not CAIRN_SCRIPT.is_file(), reason=f"no console script at {CAIRN_SCRIPT}")
def test_own_agent_loads_from_the_current_folder_with_the_script_as_with_python_m(
    tmp_path: Path,
) -> None:
    """README: `python -m cairn ...` is the same command as `cairn ...`. The script failed
    with "No module named 'mypkg'" from the folder holding mypkg."""
    _my_package(tmp_path)
    play = ["play", "--episodes", "1", "--max-turns", "4", "--agent", "mypkg.agents:Pacer"]
    runs = {
        "script": [str(CAIRN_SCRIPT), *play, "--workdir", "by-script"],
        "module": [sys.executable, "-m", "cairn", *play, "--workdir", "by-module"],
    }
    for name, command in runs.items():
        done = subprocess.run(
            command, cwd=tmp_path, env=_clean_env(), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{name}: {done.stderr}"
    assert _actions(tmp_path / "by-script") == _actions(tmp_path / "by-module")
    assert _actions(tmp_path / "by-script") == ["north", "south"] * 2


@pytest.mark.skipif(not CAIRN_SCRIPT.is_file(), reason=f"no console script at {CAIRN_SCRIPT}")
def test_a_second_ctrl_c_stops_at_once_exits_130_and_keeps_the_store(tmp_path: Path) -> None:
    """README: Ctrl-C ends the turn and exits 130 (twice: at once). The second one exited 1
    with "Aborted!" and wrote no report."""
    _my_package(tmp_path)
    work = tmp_path / "work"
    process = subprocess.Popen(
        [
            *(str(CAIRN_SCRIPT), "play", "--agent", "mypkg.agents:Slow"),
            *("--workdir", str(work), "--episodes", "3", "--max-turns", "200"),
        ],
        cwd=tmp_path,
        env=_clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # the first Ctrl-C asks the run to end after the slow turn; the second lands inside it
    err = interrupt_after_turns(process, work, turns=3, signals=2, gap=0.1)
    assert process.returncode == 130, err
    assert "Aborted!" not in err and "Traceback" not in err
    report = json.loads((work / "report.json").read_text())
    assert report["interrupted"] is True
    check = subprocess.run(
        [str(CAIRN_SCRIPT), "memories", "check", str(work / "Memories.md")],
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "<!-- cairn " in (work / "Memories.md").read_text()


def test_run_files_follow_the_umask_as_memories_md_does(tmp_path: Path) -> None:
    """report.json, report.html, map.json were 0600 (mkstemp's mode) while Memories.md
    followed the umask."""
    previous = os.umask(0o022)
    try:
        settings = load_settings(workdir=tmp_path / "work")
        run_play(settings, game=FakeGame(), episodes=1, max_turns=3)
    finally:
        os.umask(previous)
    work = tmp_path / "work"
    modes = {
        name: stat.S_IMODE((work / name).stat().st_mode)
        for name in ("Memories.md", "report.json", "report.html", "map.json", "knowledgebase.md")
    }
    assert modes == dict.fromkeys(modes, 0o644), modes


class _DeathCosts(FakeGame):
    """The fake game, where dying costs the points scored (as Zork I's death does)."""

    def step(self, action: str) -> GameObservation:
        obs = super().step(action)
        return obs.model_copy(update={"score": 0}) if obs.died else obs


def test_the_table_shows_the_best_score_of_an_episode_that_scored_and_then_died(
    tmp_path: Path,
) -> None:
    """An episode that scored and then died read "0/3" only."""
    from cairn.agents.scripted import ScriptedAgent

    settings = load_settings(workdir=tmp_path / "work")
    agent = ScriptedAgent(["north", "open chest", "take key", "south", "west"])
    report = run_play(settings, game=_DeathCosts(), agent=agent, episodes=1, max_turns=8).report
    (episode,) = report["episodes"]
    assert episode["died"] and episode["score"] == 0 and episode["best_score"] == 1
    assert report["total"]["best_score"] == 1
    head, row = episode_table(report).splitlines()
    cells = dict(zip(head.split()[:4], row.split()[:4], strict=True))  # ep turns score best
    assert cells["score"] == "0/3" and cells["best"] == "1"
