"""Repeated failures on shared games (skipped, with the reason, without the story files): the
offline player, with memory, does not walk back into a room it found no way out of, and does
not send again what memory lists as failed where it has already been."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.adapters.game.jericho_game import JerichoGame
from cairn.agents.explorer import ExplorerAgent
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.play.runner import run_play
from cairn.settings import load_settings

ROMS = Path(__file__).resolve().parents[2].parent / "shared" / "roms"
ADVENTURELAND = ROMS / "adventureland.z5"
LOOSE = ROMS / "loose.z5"
BOG = 30
INTO_THE_BOG = ["east", "north", "take axe", "down"]
"""Meadow, Lakeside (the axe), then down into the quick-sand bog ("Obvious exits: none!")."""


def needs(story: Path) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        not story.is_file(), reason=f"no story files: {story} is absent (../shared/roms)"
    )


class ScriptThenExplore(IAgent):
    """Each episode's own commands first, then the offline player."""

    def __init__(self, scripts: dict[int, list[str]], seed: int = 1) -> None:
        self._scripts = scripts
        self._left: list[str] = []
        self._explorer = ExplorerAgent(seed=seed)

    def new_episode(self, episode: int) -> None:
        self._left = list(self._scripts.get(episode, []))
        self._explorer.new_episode(episode)

    def decide(self, view: AgentView) -> AgentDecision:
        if self._left:
            return AgentDecision(action=self._left.pop(0))
        return self._explorer.decide(view)


def rows(result_dir: Path) -> list[dict[str, object]]:
    lines = (result_dir / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@needs(ADVENTURELAND)
def test_a_room_with_no_way_out_is_noted_and_not_entered_again(tmp_path: Path) -> None:
    """Adventureland's bog: the player tried everything there, then sent its failures every turn
    for the rest of the episode (170 turns), and went back down into it the next episode."""
    settings = load_settings(workdir=tmp_path)
    result = run_play(
        settings,
        game=JerichoGame(ADVENTURELAND),
        agent=ScriptThenExplore({1: INTO_THE_BOG}),
        episodes=2,
        max_turns=90,
    )
    played = rows(result.run_dir)
    in_bog = [r for r in played if r["episode"] == 1 and r["location_before"] == BOG]
    notes = [str(r["remember"]) for r in in_bog if r["remember"]]
    assert any(n.startswith("No way out of Bog (L30) was found") for n in notes), notes
    assert not [r for r in played if r["episode"] == 2 and r["location_after"] == BOG]


@needs(LOOSE)
def test_what_memory_lists_as_failed_in_a_busy_room_is_not_sent_again(tmp_path: Path) -> None:
    """Loose Ends' first room: 27 failure ledgers, 12 in the prompt; `open tree` and the rest
    were sent again every episode."""
    settings = load_settings(workdir=tmp_path)
    result = run_play(
        settings,
        game=JerichoGame(LOOSE),
        agent=ExplorerAgent(seed=1),
        episodes=2,
        max_turns=200,
    )
    second = result.report["episodes"][1]
    assert second["repeated_failed_actions"] <= second["actions"] // 20, second
