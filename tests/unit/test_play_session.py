"""The play loop on FakeGame: bus commands, source-location memories, objectives, deaths, report."""

from __future__ import annotations

import gc
import html
import itertools
from pathlib import Path
from typing import Any

from pytest_mock import MockerFixture

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.agents.explorer import ExplorerAgent
from cairn.agents.scripted import ScriptedAgent
from cairn.container import build_container
from cairn.events.bus import MessageBus
from cairn.interfaces.agent import EMPTY_COMMAND, AgentDecision, AgentView, IAgent
from cairn.interfaces.game import GameObservation
from cairn.models.memory import MemoryCategory, MemoryScope
from cairn.play.runner import run_play
from cairn.settings import load_settings
from cairn.testing.fake_game import FakeGame


def play(tmp_path: Path, game: FakeGame, agent: IAgent | None = None, **kw: Any) -> dict[str, Any]:
    settings = load_settings(workdir=tmp_path, objective_every=kw.pop("objective_every", 20))
    return run_play(settings, game=game, agent=agent, **kw).report


def memories(tmp_path: Path) -> list[Any]:
    return build_container(load_settings(workdir=tmp_path)).store().entries()


def test_fake_game_walkthrough_wins_with_max_score() -> None:
    game = FakeGame()
    game.reset()
    for action in game.walkthrough():
        obs = game.step(action)
    assert obs.won and obs.done and obs.score == 3 and not obs.died
    state = game.save()
    game.reset()
    assert game.restore(state).location_id == 3


def test_scoring_memory_is_stored_at_the_source_location(tmp_path: Path) -> None:
    game = FakeGame()
    report = play(tmp_path, game, ScriptedAgent(game.walkthrough()), episodes=1, max_turns=20)
    [ep] = report["episodes"]
    assert ep["won"] and ep["score"] == 3 and ep["turns"] == 8 and ep["turns_to_first_score"] == 3
    scored = [m for m in memories(tmp_path) if m.score_delta and m.score_delta > 0]
    assert {(m.location_id, m.score_delta) for m in scored} == {(2, 1), (3, 2)}
    assert any(m.location_id == 1 and "east" in m.title for m in memories(tmp_path)), (
        "the move through the door is remembered where it was made (the Hall)"
    )


def test_an_empty_walkthrough_step_is_an_empty_line_and_a_blank_action_is_look(
    tmp_path: Path,
) -> None:
    """Walkthroughs that wait for Enter have empty steps (curses: without its one empty line
    the walkthrough ends with 334 points, not 450): the scripted agent sends them as
    EMPTY_COMMAND, which the game gets as an empty line; an agent's blank action is `look`."""

    class Blank(IAgent):
        def decide(self, view: AgentView) -> AgentDecision:
            return AgentDecision(action="  ")

    game = FakeGame()
    play(tmp_path / "a", game, ScriptedAgent(["north", "", "   "]), episodes=1, max_turns=3)
    assert game.actions == ["north", "", ""]
    blank = FakeGame()
    play(tmp_path / "b", blank, Blank(), episodes=1, max_turns=2)
    assert blank.actions == ["look", "look"]
    assert ScriptedAgent([""]).decide(None).action == EMPTY_COMMAND  # type: ignore[arg-type]


def test_death_ends_the_episode_and_is_remembered_as_danger_and_world_event(
    tmp_path: Path,
) -> None:
    report = play(tmp_path, FakeGame(), ScriptedAgent(["west"]), episodes=1, max_turns=5)
    [ep] = report["episodes"]
    assert ep["died"] and not ep["won"] and ep["turns"] == 1
    stored = memories(tmp_path)
    assert any(m.category is MemoryCategory.DANGER and m.location_id == 1 for m in stored)
    assert any(m.scope is MemoryScope.WORLD and "died" in " ".join(m.tags) for m in stored)


def test_a_room_only_a_death_put_the_player_in_is_not_counted_as_reached(
    tmp_path: Path,
) -> None:
    """Walking into the Pit kills: the Hall counts, the Pit (entered dead) does not."""
    report = play(tmp_path, FakeGame(), ScriptedAgent(["west"]), episodes=1, max_turns=5)
    [ep] = report["episodes"]
    assert ep["died"] and ep["locations_visited"] == 1


class _Respawning(FakeGame):
    """A death puts the player, alive, in the Study and play goes on (as some games do)."""

    def reset(self) -> GameObservation:
        first = super().reset()
        start = self.save()
        super().step("north")
        self._study = self.save()
        super().restore(start)
        self.actions.clear()
        return first

    def step(self, action: str) -> GameObservation:
        obs = super().step(action)
        if not obs.died:
            return obs
        study = super().restore(self._study)
        return study.model_copy(update={"died": True, "done": False})


def test_a_room_a_death_moved_the_player_to_counts_once_the_player_is_alive_there(
    tmp_path: Path,
) -> None:
    game = _Respawning()
    report = play(tmp_path, game, ScriptedAgent(["west", "look"]), episodes=1, max_turns=2)
    [ep] = report["episodes"]
    assert ep["locations_visited"] == 2  # the Hall, then the Study once alive in it


def test_unknown_score_is_reported_as_null_not_zero(tmp_path: Path) -> None:
    report = play(
        tmp_path, FakeGame(supported=False), ScriptedAgent(["north"]), max_turns=2, episodes=1
    )
    [ep] = report["episodes"]
    assert ep["score"] is None and ep["max_score"] is None and report["fully_supported"] is False


def test_an_unknown_location_never_becomes_an_id(tmp_path: Path) -> None:
    game = FakeGame(lose_location_at_end=True)
    play(tmp_path, game, ScriptedAgent(game.walkthrough()), episodes=1, max_turns=20)
    assert all(type(m.location_id) is int or m.location_id is None for m in memories(tmp_path))


class Recording(IAgent):
    def __init__(self) -> None:
        self.views: list[AgentView] = []
        self.inner = ExplorerAgent(seed=2)

    def decide(self, view: AgentView) -> AgentDecision:
        self.views.append(view)
        decision = self.inner.decide(view)
        return decision.model_copy(
            update={"reasoning": f"<thinking>step {view.turn}</thinking> {decision.reasoning}"}
        )


def test_reasoning_and_memory_reach_the_agents_next_prompts(tmp_path: Path) -> None:
    agent = Recording()
    play(tmp_path, FakeGame(), agent, episodes=2, max_turns=15, objective_every=5)
    later = [v for v in agent.views if v.episode == 2 and v.turn > 3]
    assert any("step" in v.prompt for v in later), "recent reasoning is in the prompt"
    assert any(v.memories for v in agent.views if v.episode == 2)
    assert any("Location" in v.prompt for v in agent.views if v.episode == 2)


def test_memory_beats_the_baseline_on_the_fake_game(tmp_path: Path) -> None:
    with_memory = play(tmp_path / "m", FakeGame(), ExplorerAgent(seed=4), episodes=3, max_turns=40)
    baseline = play(
        tmp_path / "b",
        FakeGame(),
        ExplorerAgent(seed=4),
        episodes=3,
        max_turns=40,
        use_memory=False,
    )
    assert with_memory["episodes"][0]["turns_to_first_score"] is not None
    first = with_memory["episodes"][0]["turns_to_first_score"]
    assert all(e["turns_to_first_score"] < first for e in with_memory["episodes"][1:])
    assert (
        with_memory["total"]["repeated_failed_action_rate"]
        < baseline["total"]["repeated_failed_action_rate"]
    )


def test_a_run_keeps_what_it_loaded_out_of_the_collectors_sight_and_gives_it_back(
    tmp_path: Path,
) -> None:
    game = FakeGame()
    frozen_during: list[int] = []
    before = gc.get_freeze_count()
    play(
        tmp_path,
        game,
        ScriptedAgent(game.walkthrough()),
        episodes=1,
        max_turns=5,
        on_turn=lambda episode, turn, obs: frozen_during.append(gc.get_freeze_count()),
    )
    assert frozen_during and min(frozen_during) > before  # the loaded store is frozen
    assert gc.get_freeze_count() == before  # and given back when the run ends


def test_a_run_opens_its_store_once_and_writes_its_report_from_it(
    tmp_path: Path, mocker: MockerFixture
) -> None:
    opened = mocker.spy(MarkdownMemoryStore, "__init__")
    game = FakeGame()
    play(tmp_path, game, ScriptedAgent(game.walkthrough()), episodes=1, max_turns=10)
    assert opened.call_count == 1  # report.html came from the run's store, not a second load
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert all(m.title in page or html.escape(m.title) in page for m in memories(tmp_path))


def calls_per_turn(tmp_path: Path, *spies: Any) -> list[tuple[int, ...]]:
    """How many times each of `spies` was called in each turn after the first of an 8-turn
    episode."""
    per_turn: list[tuple[int, ...]] = []
    game = FakeGame()
    play(
        tmp_path,
        game,
        ScriptedAgent(game.walkthrough()),
        episodes=1,
        max_turns=8,
        on_turn=lambda episode, turn, obs: per_turn.append(tuple(s.call_count for s in spies)),
    )
    pairs = itertools.pairwise(per_turn)
    return [tuple(b - a for a, b in zip(x, y, strict=True)) for x, y in pairs]


def test_a_turn_looks_for_others_writes_once_and_at_each_commit_not_once_per_read(
    tmp_path: Path, mocker: MockerFixture
) -> None:
    counts = calls_per_turn(
        tmp_path,
        mocker.spy(MarkdownMemoryStore, "_refresh"),
        mocker.spy(MarkdownMemoryStore, "_commit"),
    )
    # one look at the turn's first read, one at each commit (a write merges what others wrote
    # first); without the turn's steady block every read of the prompt and the handlers looks
    assert counts and all(looks <= 1 + commits for looks, commits in counts), counts
    assert any(commits for _, commits in counts)


def test_each_command_of_a_turn_is_one_unit_of_work_written_once(
    tmp_path: Path, mocker: MockerFixture
) -> None:
    """A turn's commands (the move, the turn's memories, the score) are units of work of their
    own, each written at most once: the model calls of a turn hold no unit (see
    test_turn_interpreter.py), and a crash keeps every command that was acknowledged."""
    counts = calls_per_turn(
        tmp_path,
        mocker.spy(MarkdownMemoryStore, "_commit"),
        mocker.spy(MessageBus, "handle"),
    )
    assert counts and all(commits <= commands for commits, commands in counts), counts
    assert max(commands for _, commands in counts) > 1  # a turn with several commands
