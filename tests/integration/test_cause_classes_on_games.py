"""Every cause class on a shared game that shows it (issue 29), beside darkness and combat on
Zork I (test_causes_on_games.py): a light running out (ztuu), a need or a timer (Zork I's
flooded maintenance room: drowning), a trap or a fall (inhumane's pivot into a pit of snakes),
the plot (hhgg's bulldozer) and the command itself (Zork I's jump at Canyon View). Each game is
driven by scripted commands through `run_play`, the path play takes; each test is skipped, with
the reason, without its story file. The death must be classed right, and only a death the
command caused (the command, a trap or a fall) leaves a danger on a move."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.adapters.game.jericho_game import JerichoGame
from cairn.agents.explorer import remembered_dangers
from cairn.container import build_container
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.models.memory import MemoryEntry, MemoryScope, MemoryStatus
from cairn.play.objectives import deadly_moves
from cairn.play.runner import run_play
from cairn.settings import load_settings

ROMS = Path(__file__).resolve().parents[2].parent / "shared" / "roms"


def story(name: str) -> pytest.MarkDecorator:
    """Skip, saying which file is absent, without the story file `name`."""
    path = ROMS / name
    return pytest.mark.skipif(
        not path.is_file(), reason=f"no story file: {path} is absent (../shared/roms)"
    )


class Script(IAgent):
    """The given commands, in order; every view kept."""

    def __init__(self, commands: list[str]) -> None:
        self._left = list(commands)
        self.views: list[AgentView] = []

    def decide(self, view: AgentView) -> AgentDecision:
        self.views.append(view)
        return AgentDecision(action=self._left.pop(0) if self._left else "look")


def play(tmp_path: Path, name: str, commands: list[str]) -> tuple[list[MemoryEntry], Script]:
    settings = load_settings(workdir=tmp_path)
    agent = Script(commands)
    run_play(
        settings, game=JerichoGame(ROMS / name), agent=agent, episodes=1, max_turns=len(commands)
    )
    entries = [e for e in build_container(settings).store().entries()]
    return [e for e in entries if e.status is MemoryStatus.ACTIVE], agent


def ending(entries: list[MemoryEntry]) -> MemoryEntry:
    [found] = [e for e in entries if "ending" in e.tags]
    return found


def located(entries: list[MemoryEntry], room: int | None = None) -> list[MemoryEntry]:
    return [
        e
        for e in entries
        if e.scope is MemoryScope.LOCATION and (room is None or e.location_id == room)
    ]


THEATER = 95
"""ztuu's Theater: the lantern (it starts lit, with little power) goes out there."""
MAINTENANCE_ROOM, CANYON_VIEW = 199, 25
SOUTH_BRANCH = 50
"""inhumane's South Branch: 'north' from it, carrying the cube, tips the floor into a pit."""
ZORK_TO_THE_DAM = [
    "north", "north", "up", "get egg", "down", "south", "east", "open window", "west",
    "open sack", "get garlic", "west", "get lamp", "east", "up", "light lamp", "get rope",
    "get knife", "down", "douse lamp", "west", "get sword", "move rug", "open trapdoor", "down",
    "light lamp", "north", "kill troll with sword", "drop egg", "east", "east", "east", "up",
    "east", "north", "north",
]
"""Jericho's walkthrough of Zork I (its seed fixed: the troll dies) to the Maintenance Room."""
INHUMANE_TO_THE_PIVOT = [
    "get amulet", "s", "w", "get torch", "get shovel", "e", "e", "e", "e", "e", "n", "dig",
    "put amulet in slot", "x note", "s", "w", "w", "w", "w", "s", "open toilet", "d",
    "push button", "w", "s", "s", "take pebble", "put pebble on second disk", "take cube",
    "north", "north",
]
"""Jericho's walkthrough of inhumane: the last 'north', from the South Branch with the silver
cube held, tips the floor into a pit."""


@story("ztuu.z5")
def test_a_light_running_out_is_the_dark_rooms_lesson_never_a_danger_of_a_move(
    tmp_path: Path,
) -> None:
    # into the Theater, then wait: the lantern dims, goes out, and a grue comes for the player
    script = ["northeast", "northeast", "east", *["z"] * 34]
    entries, _ = play(tmp_path, "ztuu.z5", script)
    last = ending(entries)
    assert "cause:light" in last.tags, last.tags
    assert last.title.endswith("(a light ran out)"), last.title
    assert "lurking grue" in last.text
    assert any("cause:darkness" in e.tags for e in located(entries, THEATER))
    assert remembered_dangers(located(entries, THEATER)) == set()
    assert deadly_moves(located(entries)) == set()


@story("zork1.z5")
def test_drowning_in_a_flooding_room_is_a_need_never_a_danger_of_a_move(tmp_path: Path) -> None:
    # the blue button bursts a pipe; the water rises a level every other turn while we wait
    script = [*ZORK_TO_THE_DAM, "push blue button", *["z"] * 12]
    entries, _ = play(tmp_path, "zork1.z5", script)
    last = ending(entries)
    assert "cause:air" in last.tags, last.tags
    assert last.title.startswith("Died in Maintenance Room"), last.title
    assert last.title.endswith("(out of air)"), last.title
    assert "drowned" in last.text
    assert remembered_dangers(located(entries, MAINTENANCE_ROOM)) == set()
    assert deadly_moves(located(entries)) == set()


@story("inhumane.z5")
def test_a_trap_the_move_set_off_is_a_danger_of_that_move(tmp_path: Path) -> None:
    entries, _ = play(tmp_path, "inhumane.z5", INHUMANE_TO_THE_PIVOT)
    last = ending(entries)
    assert "cause:trap" in last.tags, last.tags
    assert last.title.endswith("by 'north'"), last.title
    assert "pit full of snakes" in last.text
    assert remembered_dangers(located(entries, SOUTH_BRANCH)) == {"north"}
    assert (SOUTH_BRANCH, "north") in deadly_moves(located(entries))


@story("hhgg.z3")
def test_the_bulldozer_is_the_plot_never_a_danger_of_a_move(tmp_path: Path) -> None:
    # lying in bed while the bulldozer comes: the story kills, not the command waited
    entries, agent = play(tmp_path, "hhgg.z3", ["z"] * 14)
    assert any("a bulldozer pokes through your wall" in v.observation.text for v in agent.views)
    last = ending(entries)
    assert "cause:plot" in last.tags, last.tags
    assert last.title.endswith("(an event)"), last.title
    assert remembered_dangers(located(entries)) == set()
    assert deadly_moves(located(entries)) == set()


@story("zork1.z5")
def test_a_jump_off_the_canyon_is_the_commands_own_danger(tmp_path: Path) -> None:
    entries, _ = play(tmp_path, "zork1.z5", ["south", "east", "east", "east", "jump"])
    last = ending(entries)
    assert "cause:command" in last.tags, last.tags
    assert last.title == "Died in Canyon View at turn 5 by 'jump'", last.title
    assert remembered_dangers(located(entries, CANYON_VIEW)) == {"jump"}
    assert (CANYON_VIEW, "jump") in deadly_moves(located(entries))
