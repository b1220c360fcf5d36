"""An agent's `save` and `restore` in `cairn play`: the game's own state and memory's checkpoint
go back together. Before, both went to the interpreter ("You can't do that here." in the fake
game; a file name prompt in Jericho) and memory kept the score made after the save."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cairn.agents.scripted import ScriptedAgent
from cairn.container import build_container
from cairn.models.checkpoint import UNDONE_TAG
from cairn.models.memory import MemoryEntry
from cairn.play.runner import run_play
from cairn.settings import load_settings
from cairn.testing.fake_game import FakeGame


def play(tmp_path: Path, actions: list[str]) -> dict[str, Any]:
    settings = load_settings(workdir=tmp_path)
    report = run_play(
        settings, game=FakeGame(), agent=ScriptedAgent(actions), episodes=1, max_turns=len(actions)
    ).report
    [episode] = report["episodes"]
    return dict(episode)


def stored(tmp_path: Path) -> tuple[list[MemoryEntry], list[MemoryEntry]]:
    store = build_container(load_settings(workdir=tmp_path)).store()
    try:
        return store.entries(), store.archived()
    finally:
        store.close()


def answers(tmp_path: Path) -> list[tuple[str, str]]:
    [path] = tmp_path.rglob("transcript.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [(line["action"], line["response"].splitlines()[0]) for line in lines]


def test_a_restore_takes_back_the_score_in_the_game_and_in_memory(tmp_path: Path) -> None:
    actions = ["north", "save", "open chest", "take key", "south", "restore", "look", "south"]
    episode = play(tmp_path, actions)

    assert episode["score"] == 0 and not episode["won"]  # the game's key is back in the chest
    assert answers(tmp_path)[1] == ("save", "Saved.")
    assert answers(tmp_path)[5:7] == [("restore", "Restored."), ("look", "Study")]
    live, archived = stored(tmp_path)
    assert not [e for e in live if "take key" in e.title or e.score_delta]
    undone = {e.title for e in archived if UNDONE_TAG in e.tags}
    assert {"Scored 1 in Study by 'take key'", "Scored 1 by 'take key'"} <= undone
    assert not [e for e in live if UNDONE_TAG in e.tags]


def test_restore_without_a_save_is_answered_and_changes_nothing(tmp_path: Path) -> None:
    episode = play(tmp_path, ["north", "restore", "south"])
    assert answers(tmp_path)[1] == ("restore", "There is no saved game to restore.")
    assert episode["turns"] == 3
    live, archived = stored(tmp_path)
    assert archived == [] and {e.location_id for e in live} == {1, 2}
