"""Faithful memory: endings in the game's words, causes, one failure memory per object, exit
summaries only when they add something, unknown locations counted, readable titles, renames."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cairn.agents.scripted import ScriptedAgent
from cairn.container import build_container
from cairn.interfaces.game import GameObservation, IGame
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemoryStatus
from cairn.play.runner import run_play
from cairn.settings import load_settings

INTRO = (
    "WIDGET QUEST\nAn Interactive Test\nRelease 1 / Serial number 000000\n\n"
    "Cellar\nDamp walls drip quietly."
)


class StubGame(IGame):
    """Answers each command from a script of observations (the last one repeats)."""

    def __init__(self, start: GameObservation, script: dict[str, GameObservation]) -> None:
        self._start = start
        self._script = script
        self._now = start

    @property
    def name(self) -> str:
        return "stub"

    @property
    def fully_supported(self) -> bool:
        return True

    def reset(self) -> GameObservation:
        self._now = self._start
        return self._start

    def step(self, action: str) -> GameObservation:
        self._now = self._script.get(action, self._now.model_copy(update={"text": "Nothing."}))
        return self._now

    def save(self) -> bytes:
        return b""

    def restore(self, state: bytes) -> GameObservation:
        return self._now

    def walkthrough(self) -> list[str]:
        return []

    def close(self) -> None:
        pass


def obs(text: str, loc: int | None = 1, name: str = "Cellar", **kw: Any) -> GameObservation:
    fields: dict[str, Any] = {"score": 0, "max_score": 10}
    fields.update(kw)
    return GameObservation(text=text, location_id=loc, location_name=name, **fields)


def play(tmp_path: Path, game: IGame, actions: list[str], **kw: Any) -> dict[str, Any]:
    settings = load_settings(workdir=tmp_path)
    kw.setdefault("episodes", 1)
    kw.setdefault("max_turns", len(actions))
    return run_play(settings, game=game, agent=ScriptedAgent(actions), **kw).report


def stored(tmp_path: Path) -> list[MemoryEntry]:
    return build_container(load_settings(workdir=tmp_path)).store().entries()


def test_a_win_that_also_scores_is_remembered_in_the_world_and_at_the_room(
    tmp_path: Path,
) -> None:
    won = obs(
        "You place the widget on the altar. The temple glows.\n\n*** You have won ***\n\n"
        "Would you like to RESTART, RESTORE a saved game or QUIT?",
        score=10,
        done=True,
        won=True,
    )
    action = "put widget on altar"
    report = play(tmp_path, StubGame(obs(INTRO), {action: won}), [action])
    assert report["episodes"][0]["won"]
    memories = stored(tmp_path)
    world = [m for m in memories if m.scope is MemoryScope.WORLD and "ending" in m.tags]
    assert len(world) == 1 and world[0].title.startswith("Won the game in Cellar")
    assert "The temple glows." in world[0].text and "*** You have won ***" in world[0].text
    assert "RESTART" not in world[0].text
    here = [m for m in memories if m.location_id == 1 and "ending:won" in m.tags]
    assert len(here) == 1 and "The temple glows." in here[0].text
    scored = [m for m in memories if m.scope is MemoryScope.WORLD and "score:+10" in m.tags]
    assert [m.title for m in scored] == ["Scored 10 in Cellar by 'put widget on altar'"]


def test_a_clock_death_is_a_world_ending_never_a_danger_of_the_last_command(
    tmp_path: Path,
) -> None:
    death = obs(
        "Dropped.\n\nThe candle gutters out and the air runs thin. You can no longer breathe."
        "\n\n*** You have died ***",
        done=True,
        died=True,
    )
    play(tmp_path, StubGame(obs(INTRO), {"drop candle": death}), ["drop candle"])
    memories = stored(tmp_path)
    assert not [
        m
        for m in memories
        if m.category is MemoryCategory.DANGER and m.scope is MemoryScope.LOCATION
    ]
    [ending] = [m for m in memories if "ending" in m.tags]
    assert ending.scope is MemoryScope.WORLD and "cause:air" in ending.tags
    assert ending.title == "Died in Cellar at turn 1 (out of air)"
    assert "You can no longer breathe." in ending.text and "*** You have died ***" in ending.text
    assert "Deadly" not in " ".join(m.title for m in memories)


def test_a_death_the_command_caused_keeps_the_whole_death_text_at_the_room(
    tmp_path: Path,
) -> None:
    text = (
        "Oh, no! You have walked into the slavering fangs of a lurking grue!\n\n"
        "****  You have died  ****"
    )
    play(tmp_path, StubGame(obs(INTRO), {"north": obs(text, done=True, died=True)}), ["north"])
    memories = stored(tmp_path)
    [danger] = [
        m
        for m in memories
        if m.category is MemoryCategory.DANGER and m.scope is MemoryScope.LOCATION
    ]
    assert danger.title == "Died by 'north'"
    assert "slavering fangs of a lurking grue!" in danger.text
    [ending] = [m for m in memories if "ending" in m.tags]
    assert "cause:command" in ending.tags and "by 'north'" in ending.title


def test_failures_on_one_object_share_one_memory_updated_in_place(tmp_path: Path) -> None:
    refuse = obs("You can't do that to the window.")
    game = StubGame(obs(INTRO), {"take window": refuse, "break window": refuse, "take mat": refuse})
    actions = ["take window", "break window", "take window", "take mat"]
    report = play(tmp_path, game, actions)
    failures = [m for m in stored(tmp_path) if m.category is MemoryCategory.FAILURE]
    assert sorted(m.title for m in failures) == ["Take mat", "Take or break window"]
    window = next(m for m in failures if "window" in m.title)
    assert window.status is MemoryStatus.ACTIVE
    assert "'take window', 'break window'" in window.text
    assert (window.turn_start, window.turn_end) == (1, 2)
    # refusals cost no summarizer call
    assert report["total"]["summarizer_calls_by_kind"].get("synthesis", 0) == 0


def test_exit_summaries_only_when_they_add_something_and_never_quote_banners(
    tmp_path: Path,
) -> None:
    hall = obs("Hall\nA long hall.", loc=2, name="Hall")
    cellar = obs("Cellar\nDamp walls drip quietly.", loc=1, name="Cellar")
    game = StubGame(obs(INTRO), {"north": hall, "south": cellar})
    report = play(tmp_path, game, ["north", "south"] * 5)
    visits = [m for m in stored(tmp_path) if "session" in m.tags]
    # one per room, on its first exit: the intro's room text and the hall's
    assert sorted(m.text for m in visits) == ["A long hall.", "Damp walls drip quietly."]
    kinds = report["total"]["summarizer_calls_by_kind"]
    assert kinds["location"] == 2
    assert report["total"]["summarizer_calls"] == sum(kinds.values())
    assert report["total"]["summarizer_call_rate"] == pytest.approx(sum(kinds.values()) / 10)


def test_a_turn_with_no_location_goes_to_the_last_room_and_is_counted(tmp_path: Path) -> None:
    lost = obs("You are swept along in the dark. There is no way to stop.", loc=None, name="")
    report = play(tmp_path, StubGame(obs(INTRO), {"jump": lost}), ["jump", "jump"])
    assert report["total"]["unknown_location_turns"] == 2
    assert report["episodes"][0]["unknown_location_turns"] == 2
    assert all(m.location_id in (None, 1) for m in stored(tmp_path))


def test_a_better_name_renames_the_stored_location(tmp_path: Path) -> None:
    first = obs("It is dark.", loc=5, name="Cellar Obj")
    lit = obs("Wine Cellar\nRacks of dusty bottles.", loc=5, name="Wine Cellar")
    elsewhere = obs("Hall\nA long hall.", loc=2, name="Hall")
    game = StubGame(first, {"north": elsewhere, "south": lit})
    play(tmp_path, game, ["north", "south"])
    container = build_container(load_settings(workdir=tmp_path))
    record = container.store().location(5)
    assert record is not None and record.name == "Wine Cellar"
    names = {m.location_name for m in container.store().entries(location_id=5)}
    assert names <= {"Wine Cellar", None}


def test_titles_hold_no_internal_ids(tmp_path: Path) -> None:
    scored = obs("Taken. You feel richer.", score=5, inventory=["gold coin"])
    play(tmp_path, StubGame(obs(INTRO), {"take coin": scored}), ["take coin"])
    titles = [m.title for m in stored(tmp_path)]
    assert titles and not [t for t in titles if "objective_id" in t or "=" in t or "ep1-" in t]


def test_a_scoring_move_keeps_the_short_state_change_before_it_as_a_step(
    tmp_path: Path,
) -> None:
    opened = obs("Opened.")
    kitchen = obs("Kitchen\nA table seems to have been used recently.", loc=2, name="Kitchen",
                  score=10)
    game = StubGame(obs(INTRO), {"open window": opened, "look": obs(INTRO), "west": kitchen})
    play(tmp_path, game, ["open window", "look", "west"])
    [scored] = [m for m in stored(tmp_path) if m.scope is MemoryScope.LOCATION and m.score_delta]
    assert scored.title == "Scored 10 by 'west'"
    assert scored.lesson is not None and scored.lesson.steps_first == ["open window"]
    assert scored.text.endswith("Steps first: (1) open window (observed, untested).")


def test_a_richer_memory_with_the_same_title_supersedes_the_old_one(tmp_path: Path) -> None:
    kitchen = obs("Kitchen\nA table seems to have been used recently.", loc=2, name="Kitchen",
                  score=10)
    first = StubGame(obs(INTRO), {"west": kitchen})
    play(tmp_path, first, ["west"])
    second = StubGame(obs(INTRO), {"open window": obs("Opened."), "west": kitchen})
    play(tmp_path, second, ["open window", "west"])
    store = build_container(load_settings(workdir=tmp_path)).store()
    # the superseded one moved to the archive when its episode ended
    scored = [m for m in store.archived() + store.entries() if m.title == "Scored 10 by 'west'"]
    assert [m.status for m in scored] == [MemoryStatus.SUPERSEDED, MemoryStatus.ACTIVE]
    assert [m.title for m in store.entries()].count("Scored 10 by 'west'") == 1
    assert scored[0].superseded_by == scored[1].id
    assert "(1) open window" in scored[1].text
