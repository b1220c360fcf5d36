"""Causes on a shared game (Zork I; skipped, with the reason, without the story file): a death in
the dark is the dark room's lesson, not a danger of the move last taken; a death in a fight is
the attacker's lesson; and the offline player, with the darkness lesson in its prompt, lights
its lamp before it goes up into the dark room, or does not go up at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.adapters.game.jericho_game import JerichoGame
from cairn.agents.explorer import ExplorerAgent, remembered_dangers
from cairn.container import build_container
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemoryStatus
from cairn.play.objectives import deadly_moves
from cairn.play.runner import run_play
from cairn.settings import load_settings

ROMS = Path(__file__).resolve().parents[2].parent / "shared" / "roms"
ZORK = ROMS / "zork1.z5"
needs_roms = pytest.mark.skipif(
    not ZORK.is_file(), reason=f"no story files: {ZORK} is absent (../shared/roms)"
)
KITCHEN, ATTIC, TROLL_ROOM = 203, 201, 102
TO_KITCHEN = ["north", "east", "open window", "west"]
DIE_IN_THE_ATTIC = [*TO_KITCHEN, "up", "northeast"]
"""Up the stairs into the dark attic, then a move in the dark: a grue (Jericho's seed is fixed)."""


class ScriptThenExplore(IAgent):
    """Each episode's own commands first, then the offline player; every view and command kept."""

    def __init__(self, scripts: dict[int, list[str]], seed: int = 1) -> None:
        self._scripts = scripts
        self._left: list[str] = []
        self._explorer = ExplorerAgent(seed=seed)
        self.episode = 0
        self.played: list[tuple[int, int | None, str]] = []
        """(episode, room, command) of every turn."""
        self.views: list[AgentView] = []

    def new_episode(self, episode: int) -> None:
        self.episode = episode
        self._left = list(self._scripts.get(episode, []))
        self._explorer.new_episode(episode)

    def decide(self, view: AgentView) -> AgentDecision:
        decision = (
            AgentDecision(action=self._left.pop(0)) if self._left else self._explorer.decide(view)
        )
        self.views.append(view)
        self.played.append((self.episode, view.observation.location_id, decision.action))
        return decision


def play(tmp_path: Path, agent: IAgent, episodes: int, turns: int) -> list[MemoryEntry]:
    settings = load_settings(workdir=tmp_path)
    run_play(settings, game=JerichoGame(ZORK), agent=agent, episodes=episodes, max_turns=turns)
    return build_container(settings).store().entries()


def visible(entries: list[MemoryEntry]) -> list[MemoryEntry]:
    return [e for e in entries if e.status is MemoryStatus.ACTIVE]


def at(entries: list[MemoryEntry], room: int) -> list[MemoryEntry]:
    return [
        e for e in visible(entries) if e.scope is MemoryScope.LOCATION and e.location_id == room
    ]


@needs_roms
def test_a_death_in_the_dark_is_the_dark_rooms_lesson_never_a_danger_of_the_move(
    tmp_path: Path,
) -> None:
    entries = play(tmp_path, ScriptThenExplore({1: DIE_IN_THE_ATTIC}), 1, len(DIE_IN_THE_ATTIC))
    [lesson] = [e for e in at(entries, ATTIC) if "cause:darkness" in e.tags]
    assert lesson.category is MemoryCategory.DANGER
    assert lesson.text.startswith("Attic (L201) is dark: entering without a lit light ends in")
    assert "Ways in: 'up' from Kitchen (L203)." in lesson.text
    assert "lurking grue" in lesson.text  # the game's own words, not ours
    # no move is blamed: not 'northeast' (taken in the dark), not 'up' (the way in)
    located = [e for e in visible(entries) if e.scope is MemoryScope.LOCATION]
    assert remembered_dangers(at(entries, ATTIC)) == set()
    assert remembered_dangers(at(entries, KITCHEN)) == set()
    assert deadly_moves(located) == set()
    [ending] = [e for e in visible(entries) if "ending" in e.tags]
    assert "cause:darkness" in ending.tags
    assert ending.title.endswith("(in the dark without a light)")


@needs_roms
def test_a_death_in_a_fight_is_the_attackers_lesson_at_its_room(tmp_path: Path) -> None:
    script = [
        *TO_KITCHEN, "west", "take lamp", "move rug", "open trap door", "turn on lamp", "down",
        "north", *["z"] * 12,
    ]
    entries = play(tmp_path, ScriptThenExplore({1: script}), 1, len(script))
    [lesson] = [e for e in at(entries, TROLL_ROOM) if "cause:combat" in e.tags]
    assert lesson.category is MemoryCategory.DANGER and lesson.title == "Attacked here by the troll"
    assert "(L102) the troll attacks and can kill" in lesson.text
    assert remembered_dangers(at(entries, TROLL_ROOM)) == set()
    [ending] = [e for e in visible(entries) if "ending" in e.tags]
    assert "cause:combat" in ending.tags


@needs_roms
@pytest.mark.parametrize(
    "second", [[*TO_KITCHEN, "west", "take lamp", "east"], TO_KITCHEN], ids=["lamp", "no-lamp"]
)
def test_the_offline_player_enters_the_remembered_dark_room_only_with_a_lit_lamp(
    tmp_path: Path, second: list[str]
) -> None:
    # episode 1 dies in the dark attic; episode 2 walks to the kitchen (with the lamp, or
    # without it: the player then fetches it from the living room) and plays on
    agent = ScriptThenExplore({1: DIE_IN_THE_ATTIC, 2: second})
    play(tmp_path, agent, 2, 80)
    turns = [
        (room, command, after.observation.text)
        for (episode, room, command), after in zip(agent.played, agent.views[1:], strict=False)
        if episode == 2
    ][len(second) :]
    ups = [i for i, (room, command, _) in enumerate(turns) if (room, command) == (KITCHEN, "up")]
    lit = [i for i, (_, command, _) in enumerate(turns) if command.startswith("turn on")]
    assert ups, "with a lamp to be had, the attic is worth entering"
    assert lit and lit[0] < ups[0], turns[: ups[0] + 1]
    assert not any("pitch black" in turns[i][2] for i in ups), "entered the attic in the dark"
    # the lesson reached it through the prompt: the attic's memory, shown as next door's
    in_kitchen = [v for v in agent.views if v.episode == 2 and v.observation.location_id == KITCHEN]
    assert any("cause:darkness" in m.tags for v in in_kitchen for m in v.nearby)
    assert not any(v.observation.died for v in agent.views if v.episode == 2)


@needs_roms
def test_the_first_time_in_the_dark_attic_without_a_lamp_the_player_goes_back_down(
    tmp_path: Path,
) -> None:
    # no death yet: the game's own "It is pitch black." is remembered at once, and obeyed
    agent = ScriptThenExplore({1: [*TO_KITCHEN, "up"]})
    entries = play(tmp_path, agent, 1, len(TO_KITCHEN) + 3)
    [lesson] = [e for e in at(entries, ATTIC) if "cause:darkness" in e.tags]
    assert "Ways in: 'up' from Kitchen (L203)." in lesson.text
    assert agent.played[len(TO_KITCHEN) + 1] == (1, ATTIC, "down")
    assert not any(v.observation.died for v in agent.views)
