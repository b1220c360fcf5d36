"""`save` and `restore` typed by an agent on Zork I through Jericho: the interpreter's state and
memory go back together (skipped, with the reason, without the story file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.agents.scripted import ScriptedAgent
from cairn.container import build_container
from cairn.models.checkpoint import UNDONE_TAG
from cairn.play.runner import run_play
from cairn.settings import load_settings

ZORK = Path(__file__).resolve().parents[2].parent / "shared" / "roms" / "zork1.z5"


@pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file: {ZORK} is absent")
def test_a_restore_on_zork_takes_back_the_kitchen_and_the_sack(tmp_path: Path) -> None:
    from cairn.adapters.game.game_opener import open_game

    actions = [
        *("north", "east", "save", "open window", "enter window", "take sack", "west"),
        *("restore", "look", "open window", "enter window"),
    ]
    report = run_play(
        load_settings(workdir=tmp_path),
        game=open_game(ZORK),
        agent=ScriptedAgent(actions),
        episodes=1,
        max_turns=len(actions),
    ).report
    [path] = tmp_path.rglob("transcript.jsonl")
    turns = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(t["action"], t["score"]) for t in turns[6:9]] == [
        ("west", 10),
        ("restore", 0),  # the interpreter's own state: the window shut, no points
        ("look", 0),
    ]
    assert turns[8]["response"].startswith("Behind House")
    assert report["episodes"][0]["score"] == 10  # scored again, in the game played on

    store = build_container(load_settings(workdir=tmp_path)).store()
    try:
        live, archived = store.entries(), store.archived()
    finally:
        store.close()
    assert not [e for e in live if "sack" in e.title.lower()]
    assert "Got brown sack" in {e.title for e in archived if UNDONE_TAG in e.tags}
    scored = [e for e in live if e.title == "Scored 10 in Behind House by 'enter window'"]
    assert len(scored) == 1  # the new timeline's, not also the undone one
