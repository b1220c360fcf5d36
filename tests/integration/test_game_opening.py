"""Play and replay open games in one place: the same demo-world cache for both."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.adapters.game.game_opener import cache_dir, open_game
from cairn.container import build_container
from cairn.replay.prepare import open_story
from cairn.replay.scenario import load_scenario
from cairn.settings import load_settings

SCENARIO = """kind: jericho
name: demo-open
story: "demo:1"
actions: [look]
"""


def test_play_and_replay_compile_the_demo_world_into_one_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_CACHE_DIR", str(tmp_path / "cache"))
    assert cache_dir() == tmp_path / "cache"
    played = build_container(load_settings(workdir=tmp_path / "work")).game_opener().open(None)
    played.close()
    compiled = sorted(p.name for p in (tmp_path / "cache").rglob("tw-*.z8"))
    assert compiled, "the demo world is compiled into the shared cache"
    (tmp_path / "demo.yaml").write_text(SCENARIO)
    document = load_scenario(tmp_path / "demo.yaml")
    replayed = open_story(document, document.scenario, None)  # type: ignore[arg-type]
    replayed.close()
    assert sorted(p.name for p in (tmp_path / "cache").rglob("tw-*.z8")) == compiled
    assert not (tmp_path / "work" / ".cairn-cache").exists()
    direct = open_game(None)
    assert direct.name == played.name
    direct.close()
