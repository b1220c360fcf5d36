"""JerichoGame on real story files: ids, header names, inventory, score, death, save/restore."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.adapters.game.jericho_game import JerichoGame, parse_inventory, room_header
from app.adapters.game.npcs import match_npcs
from app.errors import GameError

ROMS = Path(__file__).resolve().parents[2].parent / "shared" / "roms"
ZORK = ROMS / "zork1.z5"
needs_zork = pytest.mark.skipif(not ZORK.exists(), reason=f"no Zork I story file in {ROMS}")


@pytest.fixture
def zork() -> JerichoGame:
    return JerichoGame(ZORK, npc_names=["troll", "thief"])


@needs_zork
def test_reset_is_west_of_house_by_integer_id_and_header_name(zork: JerichoGame) -> None:
    obs = zork.reset()
    assert obs.location_id == 180 and type(obs.location_id) is int
    assert obs.location_name == "West of House"  # the object tree says "West House"
    assert obs.score == 0 and obs.max_score == 350 and zork.fully_supported


@needs_zork
def test_window_entry_reaches_the_kitchen_and_scores(zork: JerichoGame) -> None:
    zork.reset()
    steps = [zork.step(a) for a in ["north", "east", "open window", "enter window"]]
    assert [(o.location_id, o.location_name) for o in steps] == [
        (81, "North of House"),
        (79, "Behind House"),
        (79, "Behind House"),
        (203, "Kitchen"),
    ]
    assert steps[-1].score == 10
    assert "brown sack" in zork.step("take sack").inventory


@needs_zork
def test_save_and_restore_return_to_the_saved_place_and_score(zork: JerichoGame) -> None:
    zork.reset()
    for action in ["north", "east", "open window", "enter window"]:
        zork.step(action)
    saved = zork.save()
    zork.step("west")
    back = zork.restore(saved)
    assert back.location_id == 203 and back.score == 10 and back.text == ""


@needs_zork
def test_a_death_is_told_apart_from_a_victory(zork: JerichoGame) -> None:
    zork.reset()
    actions = ["north", "east", "open window", "enter window", "west", "take lamp", "move rug"]
    for action in [*actions, "open trap door", "down", "south"]:
        obs = zork.step(action)
    assert obs.died and obs.done and not obs.won


@needs_zork
def test_the_walkthrough_wins_and_every_id_is_an_int(zork: JerichoGame) -> None:
    zork.reset()
    seen: set[tuple[int | None, str]] = set()
    for action in zork.walkthrough():
        obs = zork.step(action)
        assert obs.location_id is None or type(obs.location_id) is int
        seen.add((obs.location_id, obs.location_name))
    assert obs.won and obs.done and obs.score == 350 and not obs.died
    names = {name for _, name in seen}
    assert "West House" not in names and "Living Room" in names


def test_a_missing_story_file_is_a_game_error(tmp_path: Path) -> None:
    with pytest.raises(GameError, match="no such story file"):
        JerichoGame(tmp_path / "nothing.z5")


def test_room_headers_and_inventory_answers_are_parsed() -> None:
    assert room_header("-= Entrance Hall =-\nA draughty hall.") == "Entrance Hall"
    intro = (
        "Copyright (c) 1981 Infocom, Inc.\nRevision 88 / Serial 840726\n\nWest of House\nYou are"
    )
    assert room_header(intro) == "West of House"
    assert room_header("Taken.") is None
    assert parse_inventory("You are carrying: an iron key, a lamp and some rope.") == [
        "iron key",
        "lamp",
        "rope",
    ]
    assert parse_inventory("You are carrying nothing.") == []


def test_npcs_match_on_word_boundaries() -> None:
    present, mentioned = match_npcs(
        ["troll", "thief"], ["troll", "axe"], "A nasty-looking troll blocks the way. Thieves?"
    )
    assert present == ["troll"] and mentioned == ["troll"]
    assert match_npcs(["bat"], ["battery"], "A battered sign.") == ([], [])
