"""Characters found from the game itself on all 18 games of ../shared/roms (issue 38, item 8).

No list of names: each walkthrough is replayed through `JerichoGame` (the replay of
`test_jericho_rooms`, shared), and the NPC scope's "present" is what the object tree and the
parser's answers give (`cast`, `characters`). `FOUND` is every name present on the way, per
game: the characters a reader would name, plus a few objects the games themselves flag as
animate (marked below); never a door, a button, furniture or scenery. The NPC memories a
walkthrough replay then stores: `test_walkthrough_memory.py`. The table with the figures:
`bench/characters_bench.py`.
"""

from __future__ import annotations

import pytest

from tests.integration.test_jericho_rooms import each_game, needs, replay

FOUND: dict[str, set[str]] = {
    "905": set(),
    "adventureland": {"bear", "sleeping dragon"},
    "awaken": {"guard dog"},
    "curses": {
        "austin",
        "jemima",
        "hollow man",  # a suit of armour the game lets one address
        "sir joshua meldrewe",
        "anxious-looking goat",
        "madame sosostris",
        "andromeda",
        "homer",
        "bartender",
        "oracle",
        "callimachus",
        "apollonius",
        "gambling sailor",
        "napoleonic officers",
        "adamantine knight",  # a statue, flagged animate by the game
        "old evans",
        "corn crake",
        "unconscious saxon spy",
        "surly shopkeeper",
    },
    "dragon": {"little man", "monkey", "huge troll with a club", "huge dragon"},
    "gold": {"pedlar", "daisy the cow", "big bad wolf", "sleeping beauty", "fairy godmother"},
    "hhgg": {
        "ford prefect",
        "barman",
        "vogon captain",
        "eddie",
        "trillian",
        "zaphod beeblebrox",
        "nutrimat",
        "marvin",
        "ravenous bugblatter beast of traal",
        "phil",
        "arthur dent",
        "hostess",
        "engineer robot",
        "mr. prosser",
        "bulldozer driver",
    },
    "inhumane": set(),
    "loose": {"wolf", "mary", "bernice", "kitten", "egg", "field mouse", "mother loose"},
    "lostpig": {"pig", "statue of gnome", "shadow", "gnome"},  # the statue: flagged animate
    "moonlit": set(),
    "night": {"little grey mouse", "geeky-looking gnome"},
    "planetfall": {"mobile man-eating plant", "lurking fanged creature", "hairy growling biped"},
    "reverb": {
        "district attorney",
        "lackey",
        "mayor",
        "jill",
        "people",
        "store clerk",
        "thug",
        "security guard",
        "robert tasty tasker",
        "huge crowd of mafia guys",
    },
    "snacktime": set(),  # its tree has no names: nothing can be asked
    "theatre": {
        "vicious thug",
        "rienhart's corpse",  # the dead, flagged animate by the game
        "ghostly presence",
        "large slug",
        "battered crow",
        "ragged skeleton",  # the dead, flagged animate by the game
        "shadow creature",
        "swarm of rats",
        "trent",
        "younger woman",
        "old hag",
    },
    "zork1": {"troll", "number of ghosts", "cyclops", "thief", "bat"},
    "ztuu": {"salesman", "rat-ants"},
}


@pytest.mark.parametrize("story", each_game())
def test_the_characters_present_are_found_from_the_game_itself(story: str) -> None:
    steps = replay(story).steps
    present = {name for step in steps for name in step.obs.npcs_present}
    assert present == FOUND[story.split(".")[0]]
    # a character is present only where the player is, and is never the room's own name
    assert not [s.action for s in steps if s.obs.npcs_present and s.obs.location_id is None]
    assert not [s for s in steps if s.obs.location_name.lower() in s.obs.npcs_present]


@needs("zork1.z5")
def test_zorks_troll_blocks_the_way_in_the_troll_room_with_no_list_of_names() -> None:
    steps = replay("zork1.z5").steps
    troll_room = steps[27]  # ... "D", "Light lamp", "N"
    assert troll_room.obs.location_name == "The Troll Room"
    assert troll_room.obs.npcs_present == ["troll"] and troll_room.obs.npcs_mentioned == ["troll"]
    thief = [s.obs for s in steps if "thief" in s.obs.npcs_present]
    assert thief and all(o.location_name == "Treasure Room" for o in thief)
