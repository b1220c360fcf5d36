"""A killed run's temp files (issue 37, item 14): `atomic_write_text` writes report.json,
map.json and the like through `.NAME.*.tmp`; a kill mid-write left them in the workdir. The
next play removes those older than a live write could be, and leaves a fresh one alone."""

from __future__ import annotations

import os
import time
from pathlib import Path

from cairn.agents.scripted import ScriptedAgent
from cairn.play.runner import run_play
from cairn.settings import load_settings
from cairn.testing.fake_game import FakeGame


def play(workdir: Path) -> None:
    game = FakeGame()
    settings = load_settings(workdir=workdir)
    run_play(settings, game=game, agent=ScriptedAgent(game.walkthrough()), episodes=1, max_turns=3)


def test_the_next_play_removes_a_killed_writers_temp_files(tmp_path: Path) -> None:
    play(tmp_path)
    stale = tmp_path / ".report.json.k1ll3d.tmp"
    fresh = tmp_path / ".map.json.wr1t1ng.tmp"
    for temp in (stale, fresh):
        temp.write_text("{half a fi", encoding="utf-8")
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    play(tmp_path)
    assert not stale.exists()
    assert fresh.exists()  # a live writer's (younger than a write could take): left alone
