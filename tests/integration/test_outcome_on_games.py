"""Outcomes on the shared story files (skipped, with the reason, without them): the world state
Jericho reports per step, the word faults on the games' own answers (a letter, a character's
words, waiting in the dark, a description after `look`, a polite refusal), one truth per action at
Zork I's mailbox, and no banner line in any game's memories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.game.jericho_game import JerichoGame
from cairn.agents.rule_based_summarizer import prose
from cairn.container import build_container
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.interfaces.game import GameObservation
from cairn.models.memory import MemoryCategory, MemoryEntry, MemorySource, MemoryStatus
from cairn.play.runner import run_play
from cairn.play.translator import turn_outcome
from cairn.services.outcomes import Verdict, failed_commands, is_failure, verdict
from cairn.settings import load_settings

ROMS = Path(__file__).resolve().parents[2].parent / "shared" / "roms"
ZORK = ROMS / "zork1.z5"
needs_roms = pytest.mark.skipif(
    not ZORK.is_file(), reason=f"no story files: {ZORK} is absent (../shared/roms)"
)
WEST_OF_HOUSE, NORTH_OF_HOUSE = 180, 81
BANNER_WORDS = ("copyright", "trademark", "serial number", "release ", "revision ", "inform v")


class EpisodeScripts(IAgent):
    """Sends each episode's own commands, then `look`."""

    def __init__(self, scripts: dict[int, list[str]]) -> None:
        self._scripts = scripts
        self._left: list[str] = []

    def new_episode(self, episode: int) -> None:
        self._left = list(self._scripts.get(episode, []))

    def decide(self, view: AgentView) -> AgentDecision:
        return AgentDecision(action=self._left.pop(0) if self._left else "look")


def play(tmp_path: Path, story: Path, scripts: dict[int, list[str]]) -> list[MemoryEntry]:
    settings = load_settings(workdir=tmp_path)
    run_play(
        settings,
        game=JerichoGame(story),
        agent=EpisodeScripts(scripts),
        episodes=len(scripts),
        max_turns=max(len(s) for s in scripts.values()),
    )
    return build_container(settings).store().entries()


def visible_at(entries: list[MemoryEntry], location: int) -> list[MemoryEntry]:
    return [e for e in entries if e.location_id == location and e.status is MemoryStatus.ACTIVE]


def failed_at(entries: list[MemoryEntry], location: int) -> list[str]:
    return [
        c for e in visible_at(entries, location) if e.category is MemoryCategory.FAILURE
        for c in failed_commands(e.text)
    ]


def walk_to(story: Path, step: int, action: str) -> tuple[GameObservation, GameObservation]:
    """The observations before and after walkthrough step `step`, which must be `action`."""
    game = JerichoGame(story)
    try:
        before = game.reset()
        walkthrough = game.walkthrough()
        assert walkthrough[step] == action, f"{story.name}: step {step} is {walkthrough[step]!r}"
        for command in walkthrough[:step]:
            before = game.step(command)
        return before, game.step(action)
    finally:
        game.close()


# -- the state --------------------------------------------------------------------------------


@needs_roms
def test_jericho_says_which_steps_changed_the_world() -> None:
    game = JerichoGame(ZORK)
    assert game.reset().world_changed is None
    steps = ["take leaflet", "open mailbox", "take leaflet", "take leaflet", "z", "look", "north"]
    changed = [game.step(action).world_changed for action in steps]
    # a refused take sets a flag on the player object (the parser's): not a change of the world
    assert changed == [False, True, True, False, False, False, True]
    game.close()


@needs_roms
def test_the_second_interpreter_loads_without_preprocessing_the_action_templates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second interpreter (what `wait` alone changes) reuses the first's per-story load:
    Jericho's action templates, ~60 ms a load and never used by cairn, are prepared once."""
    import jericho.jericho as frotz

    real = frotz.TemplateActionGenerator
    prepared: list[object] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        prepared.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(frotz, "TemplateActionGenerator", counted)
    game = JerichoGame(ZORK)
    game.reset()
    try:
        changed = [game.step(a).world_changed for a in ["open mailbox", "z", "take leaflet"]]
    finally:
        game.close()
    assert changed == [True, False, True]  # (the second interpreter answered)
    assert len(prepared) == 1


# -- word faults on the games' own answers -------------------------------------------------------


@needs_roms
@pytest.mark.parametrize(
    ("story", "step", "action"),
    [
        ("gold.z5", 243, "read leaflet"),  # printed words: 'Under normal circumstances there is no'
        ("awaken.z5", 23, "read journal"),  # a journal: "I cannot continue..."
        ("reverb.z5", 70, "break glass with hammer"),  # a character: "...you have to go and ruin"
    ],
)
def test_quoted_or_printed_words_are_no_refusal(story: str, step: int, action: str) -> None:
    before, after = walk_to(ROMS / story, step, action)
    outcome = turn_outcome(1, step + 1, action, before, after)
    assert not is_failure(after.text)
    assert verdict(outcome) is not Verdict.FAILURE


@needs_roms
def test_waiting_in_the_dark_is_no_failure() -> None:
    # "You can't hear anything, see anything, ..." answers `z`: the words refuse, waiting never
    before, after = walk_to(ROMS / "hhgg.z3", 140, "z")
    assert verdict(turn_outcome(1, 141, "z", before, after)) is Verdict.NEUTRAL


@needs_roms
def test_looking_at_a_place_that_says_what_it_lacks_is_no_failure(tmp_path: Path) -> None:
    # North of House: "There is no door here, and all the windows are boarded up."
    entries = play(tmp_path, ZORK, {1: ["north", "look", "l"]})
    assert failed_at(entries, NORTH_OF_HOUSE) == []


@needs_roms
def test_a_polite_refusal_is_remembered_and_counted_as_failing_again(tmp_path: Path) -> None:
    moonlit = ROMS / "moonlit.z5"
    settings = load_settings(workdir=tmp_path)
    report: dict[str, Any] = run_play(
        settings, game=JerichoGame(moonlit), agent=EpisodeScripts({1: ["dig", "dig"]}),
        episodes=1, max_turns=2,
    ).report
    assert report["episodes"][0]["repeated_failed_actions"] == 1  # "...would achieve nothing"
    entries = build_container(settings).store().entries()
    assert any(
        "dig" in failed_commands(e.text) for e in entries if e.category is MemoryCategory.FAILURE
    )


# -- one truth per action ---------------------------------------------------------------------


@needs_roms
def test_the_leaflet_has_one_truth_at_the_mailbox(tmp_path: Path) -> None:
    entries = play(
        tmp_path,
        ZORK,
        {1: ["open mailbox", "take leaflet", "take leaflet"], 2: ["take leaflet"]},
    )
    here = visible_at(entries, WEST_OF_HOUSE)
    about = [
        e for e in here if "leaflet" in f"{e.title} {e.text}"
        and e.source is not MemorySource.VISIT and not e.title.startswith("'open mailbox'")
    ]
    assert [e.title for e in about] == ["Got leaflet"]
    assert "'open mailbox' worked" in [e.title for e in here]  # the step before it
    assert "take leaflet: already held (Ep1, T3" in about[0].text
    assert "take leaflet: no leaflet in sight (Ep2, T1" in about[0].text
    assert "take leaflet" not in failed_at(entries, WEST_OF_HOUSE)


# -- no junk ----------------------------------------------------------------------------------


@needs_roms
def test_zork_remembers_west_of_house_without_its_banner(tmp_path: Path) -> None:
    entries = play(tmp_path, ZORK, {1: ["open mailbox", "north"]})
    texts = " ".join(e.text for e in visible_at(entries, WEST_OF_HOUSE)).lower()
    assert texts and not any(word in texts for word in BANNER_WORDS)


@needs_roms
def test_no_games_opening_keeps_a_banner_line_as_prose() -> None:
    kept: dict[str, list[str]] = {}
    for story in sorted(ROMS.glob("*.z[0-9]")):
        game = JerichoGame(story)
        try:
            words = prose(game.reset().text).lower()
        finally:
            game.close()
        kept[story.name] = [word for word in BANNER_WORDS if word in words]
    assert len(kept) >= 18 and {name: w for name, w in kept.items() if w} == {}
