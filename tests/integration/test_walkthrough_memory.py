"""What a walkthrough replay remembers on real games: the ending in the game's words (also when
the winning move scores), readable titles with no internal ids, nothing dropped silently.

Story files come from ../shared/roms (skipped, with the reason, without them). The full table
over all eighteen games is `bench/walkthrough_bench.py`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope
from cairn.replay.prepare import walkthrough_document
from cairn.replay.results import ReplayReport
from cairn.replay.runner import run_scenario

ROMS = Path(__file__).resolve().parents[2].parent / "shared" / "roms"
needs_roms = pytest.mark.skipif(not ROMS.is_dir(), reason=f"no story files at {ROMS}")
INTERNAL_ID = re.compile(r"\w+_id=|\bep\d+-t\d+\b|\([A-Za-z]+\d+\)|\b[A-Za-z]+_[A-Za-z0-9]+\b")
_cache: dict[str, ReplayReport] = {}


def replay(story: str, tmp_path_factory: pytest.TempPathFactory) -> ReplayReport:
    if story not in _cache:
        document = walkthrough_document(ROMS / story)
        _cache[story] = run_scenario(document, tmp_path_factory.mktemp(story.split(".")[0]))
    return _cache[story]


def entries(report: ReplayReport) -> list[MemoryEntry]:
    assert report.outcome is not None, report.render()
    return report.outcome.entries


@needs_roms
@pytest.mark.parametrize(
    ("story", "words"),
    [
        # 9:05's winning "yes" also scores its only point: the score memory must not hide the win
        ("905.z5", "You merge onto the freeway"),
        ("night.z5", "*** You have saved your job ***"),
        ("snacktime.z8", "Sandwich in hand, your pet heads for the sitting room."),
        ("zork1.z5", "As you enter the barrow, the door closes inexorably behind you."),
    ],
)
def test_a_win_is_remembered_once_in_the_world_and_at_its_room_in_the_games_words(
    story: str, words: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    stored = entries(replay(story, tmp_path_factory))
    [world] = [e for e in stored if e.scope is MemoryScope.WORLD and "ending" in e.tags]
    assert world.category is MemoryCategory.SUCCESS and world.title.startswith("Won the game")
    assert words in world.text
    assert "RESTART" not in world.text
    [room] = [e for e in stored if e.scope is MemoryScope.LOCATION and "ending:won" in e.tags]
    assert room.location_id == world.location_id and words in room.text


@needs_roms
def test_the_winning_move_that_scores_keeps_both_memories(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    stored = entries(replay("905.z5", tmp_path_factory))
    titles = [e.title for e in stored if e.scope is MemoryScope.WORLD]
    assert any(t.startswith("Scored 1 in ") and t.endswith("by 'yes'") for t in titles), titles
    assert any(t.startswith("Won the game in ") for t in titles), titles


@needs_roms
@pytest.mark.parametrize(
    ("story", "character"), [("night.z5", "little grey mouse"), ("zork1.z5", "troll")]
)
def test_the_npc_scope_fills_with_no_list_of_names(
    story: str, character: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # the characters are found from the game itself (issue 38, item 8): Night at the Computer
    # Center was never on a list, and Zork I's list is gone from the settings
    npc = [e for e in entries(replay(story, tmp_path_factory)) if e.scope is MemoryScope.NPC]
    assert character in {i for e in npc for i in e.npc_ids}
    assert all(e.location_id is not None for e in npc)


@needs_roms
@pytest.mark.parametrize("story", ["905.z5", "night.z5", "snacktime.z8", "zork1.z5"])
def test_no_title_or_text_holds_an_internal_id(
    story: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    stored = entries(replay(story, tmp_path_factory))
    bad = [e.title for e in stored if INTERNAL_ID.search(e.title)]
    assert not bad, bad
    scores = [e for e in stored if e.scope is MemoryScope.WORLD and e.title.startswith("Scored")]
    assert scores and all("objective" not in e.title.lower() for e in scores)


@needs_roms
def test_zork_walkthrough_reports_no_silently_dropped_turn(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    report = replay("zork1.z5", tmp_path_factory)
    assert report.unknown_location_turns == 0
    assert report.remembered == report.visited
