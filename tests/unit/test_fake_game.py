"""FakeGame (the scripted IGame of play-loop tests) and the NPC matching it shares with Jericho."""

from __future__ import annotations

from cairn.adapters.game.npcs import match_npcs, npcs_among_objects, npcs_in_text
from cairn.interfaces.game import GameObservation, IGame
from cairn.testing.fake_game import FakeDoor, FakeGame, FakeItem, FakeRoom, FakeWorld

TO_THE_KEY = ["north", "open chest", "take key", "south"]


def run(game: FakeGame, actions: list[str]) -> GameObservation:
    obs = game.reset()
    for action in actions:
        obs = game.step(action)
    return obs


def test_it_is_an_igame_starting_in_the_hall() -> None:
    game = FakeGame()
    assert isinstance(game, IGame) and game.name == "fake" and game.fully_supported
    start = game.reset()
    assert (start.location_id, start.location_name) == (1, "Hall")
    assert start.text.startswith("Hall\n") and (start.score, start.max_score) == (0, 3)
    assert (start.moves, start.done, start.inventory) == (0, False, [])


def test_exits_by_direction_with_aliases_and_walls() -> None:
    game = FakeGame()
    game.reset()
    assert game.step("n").location_id == 2
    assert game.step("go south").location_id == 1
    wall = game.step("north east")
    assert wall.text == "You can't do that here." and wall.location_id == 1
    assert game.step("up").text == "You can't go that way."
    assert game.step("look").text.startswith("Hall\n")


def test_the_locked_door_needs_the_key() -> None:
    game = FakeGame()
    game.reset()
    assert game.step("east").text == "The door is closed."
    assert game.step("open door").text == "You can't, it is locked."
    assert game.step("unlock door with key").text == "You can't do that here."  # no key yet
    for action in TO_THE_KEY:
        game.step(action)
    assert game.step("unlock door with key").text == "You unlock the door."
    assert game.step("open door").text == "You open the door."
    assert game.step("east").location_name == "Vault"


def test_taking_the_key_from_the_chest_scores_once() -> None:
    game = FakeGame()
    game.reset()
    game.step("north")
    assert game.step("take key").text == "You can't do that here."  # still in the closed chest
    assert game.step("open chest").text == "You open the chest, revealing a brass key."
    taken = game.step("take key")
    assert taken.inventory == ["brass key"] and taken.score == 1
    assert taken.text == "Taken. Your score has gone up by one point."
    again = game.step("take key")
    assert again.score == 1 and again.inventory == ["brass key"]
    assert game.step("open chest").text == "You open the chest."
    assert "brass key" in game.step("inventory").text


def test_the_walkthrough_wins_with_the_max_score() -> None:
    game = FakeGame()
    won = run(game, game.walkthrough())
    assert won.done and won.won and not won.died and won.score == won.max_score == 3
    assert won.inventory == ["brass key", "silver crown"] and won.moves == 8
    assert game.actions == game.walkthrough()


def test_the_pit_is_deadly_and_the_game_then_stays_over() -> None:
    game = FakeGame()
    dead = run(game, ["west"])
    assert dead.done and dead.died and not dead.won and "*** You have died ***" in dead.text
    after = game.step("east")
    assert after.text == "The game is over." and after.moves == 1 and after.location_id == 4


def test_save_and_restore_return_to_the_saved_state() -> None:
    game = FakeGame()
    run(game, TO_THE_KEY)
    saved = game.save()
    game.step("west")
    back = game.restore(saved)
    assert back.text == "" and back.location_id == 1 and not back.done
    assert back.inventory == ["brass key"] and (back.score, back.moves) == (1, 4)
    assert game.step("unlock door with key").text == "You unlock the door."


def test_it_is_deterministic() -> None:
    actions = [*TO_THE_KEY, "west", "north", "look"]
    assert [run(FakeGame(), actions[:n]) for n in range(len(actions) + 1)] == [
        run(FakeGame(), actions[:n]) for n in range(len(actions) + 1)
    ]


def test_an_unsupported_game_reports_unknown_scores_and_no_victory() -> None:
    game = FakeGame(supported=False)
    won = run(game, game.walkthrough())
    assert not game.fully_supported
    assert won.score is None and won.max_score is None and won.done and not won.won


def test_a_lost_location_at_the_end_is_none_not_invented() -> None:
    game = FakeGame(lose_location_at_end=True)
    won = run(game, game.walkthrough())
    assert won.done and won.location_id is None and won.location_name == ""


def test_a_custom_world_with_items_on_the_floor_npcs_and_a_second_door() -> None:
    world = FakeWorld(
        rooms={
            10: FakeRoom("Gate", "A gate. A guard watches you.", {"up": 11}, npcs=("guard",)),
            11: FakeRoom("Tower", "A tower. A lamp lies here.", {"down": 10, "north": 12}),
            12: FakeRoom("Top", "The top.", {"south": 11}),
        },
        start=10,
        items={"lamp": FakeItem(room=11), "gold ring": FakeItem(room=12, points=5, wins=True)},
        doors=(FakeDoor(room=11, direction="north", key="lamp"),),
        walkthrough=("u", "take lamp", "unlock door with lamp", "open door", "n", "take ring"),
    )
    game = FakeGame(world=world)
    start = game.reset()
    assert start.location_id == 10 and start.npcs_present == ["guard"]
    assert start.npcs_mentioned == ["guard"] and start.max_score == 5
    tower = game.step("u")
    assert tower.npcs_present == [] and tower.npcs_mentioned == []
    assert game.step("take lamp").text == "Taken."
    won = run(game, game.walkthrough())
    assert won.won and won.score == 5 and won.inventory == ["lamp", "gold ring"]


# -- NPC matching ---------------------------------------------------------------------------------


def test_npcs_match_case_insensitively_on_word_boundaries() -> None:
    present, mentioned = match_npcs(
        ["troll", "thief", "cyclops"],
        ["troll", "bloody axe"],
        "A nasty-looking Troll, brandishing a bloody axe, blocks all passages. Thieves?",
    )
    assert present == ["troll"] and mentioned == ["troll"]
    assert match_npcs(["bat"], ["battery"], "A battered sign.") == ([], [])
    assert npcs_in_text(["troll"], "The troll's axe.") == ["troll"]


def test_npc_names_keep_their_order_and_spelling_without_duplicates() -> None:
    names = ["Thief", "troll", "THIEF", "  ", "old man"]
    text = "The thief and an OLD  MAN watch the troll."
    assert npcs_in_text(names, text) == ["Thief", "troll", "old man"]
    assert npcs_among_objects(names, ["", "old man", "troll"]) == ["troll", "old man"]


def test_npc_names_with_punctuation_still_match_whole_words() -> None:
    assert npcs_in_text(["Mr. Blue"], "You see Mr. Blue here.") == ["Mr. Blue"]
    assert npcs_in_text(["Mr. Blue"], "You see Mr. Bluebell here.") == []
    assert npcs_in_text(["troll"], "") == [] and npcs_in_text([], "troll") == []
