"""Location identity and room names on all 18 games of ../shared/roms (skipped without them).

Each game's Jericho walkthrough is replayed once (from reset, walkthrough seed) through
JerichoGame, with a raw FrotzEnv stepped alongside as the oracle: after every step the raw
interpreter is asked `look` (on a saved state, restored) and its object tree is read. Each rule
is asserted on every game, and on a named game that shows it: Zork I's magic boat (156) and
9:05's bed (27) are never locations; start rooms carry their own names, not the title banner;
names agree with the `look` header; no name is a parser reply; no item name keeps an internal
code. The helpers (header parsing, name cleaning, the room rule on a synthetic tree) are tested
at the end without any story file.
"""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.game.jericho_game import JerichoGame, room_header
from cairn.adapters.game.names import (
    clean_item_name,
    clean_room_name,
    is_parser_reply,
    nouns_in_text,
    object_name,
    read_look,
    split_suffix,
)
from cairn.adapters.game.rooms import find_rooms_root, place_player, visible_things
from cairn.adapters.game.ztree import ZStory
from cairn.interfaces.game import GameObservation

ROMS = Path(__file__).resolve().parents[2].parent / "shared" / "roms"
GAMES = [
    "905.z5",
    "adventureland.z5",
    "awaken.z5",
    "curses.z5",
    "dragon.z5",
    "gold.z5",
    "hhgg.z3",
    "inhumane.z5",
    "loose.z5",
    "lostpig.z8",
    "moonlit.z5",
    "night.z5",
    "planetfall.z3",
    "reverb.z5",
    "snacktime.z8",
    "theatre.z5",
    "zork1.z5",
    "ztuu.z5",
]
# An internal code in a name: an underscore, letters run into digits ("Ball0"), a camel-case
# identifier, or a whole name in parentheses ("(Steeple_Door)").
CODE = re.compile(r"_|\b[A-Za-z]+\d+\b|\b[a-z]+[A-Z]\w*|^\(.*\)$")
PARSER_REPLIES = [
    "I don't understand that",
    "I don't understand that.",
    "You can't go in that direction",
    "You can't go that way.",
    "The door is open",
    "That's not a verb I recognise.",
    "Please answer yes or no",
    "Taken",
    "Time passes...",
]


def needs(story: str) -> pytest.MarkDecorator:
    path = ROMS / story
    return pytest.mark.skipif(
        not path.is_file(), reason=f"no story file: {path} is absent (../shared/roms)"
    )


def each_game() -> list[Any]:
    return [pytest.param(g, marks=needs(g), id=g.split(".")[0]) for g in GAMES]


# -- the replay and its oracle ------------------------------------------------------------------


@dataclass
class Step:
    """One observation and what the raw interpreter said at the same point."""

    action: str
    obs: GameObservation
    look: str  # the raw interpreter's answer to `look` (restored)
    chain: list[int]  # the raw player's ancestors in the object tree
    tree_names: dict[int, str]  # object-tree names of the chain and of the location
    location_parent: int  # the location's parent in the raw tree (0 when it has none)
    score: int
    moves: int
    text: str


@dataclass
class Replay:
    """A whole walkthrough: the steps, the ids ever used as locations, the rooms root."""

    story: str
    steps: list[Step] = field(default_factory=list)
    rooms_root: int | None = None
    room_names: dict[int, str] = field(default_factory=dict)  # every room's tree name

    @property
    def ids(self) -> set[int]:
        return {s.obs.location_id for s in self.steps if s.obs.location_id is not None}


def raw_look(env: Any) -> str:
    state = env.get_state()
    try:
        text, *_ = env.step("look")
    finally:
        env.set_state(state)
    return str(text)


@functools.cache
def replay(story: str) -> Replay:
    """The walkthrough of `story` through JerichoGame, a raw FrotzEnv alongside (cached)."""
    from jericho import FrotzEnv

    path = ROMS / story
    game = JerichoGame(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = FrotzEnv(str(path))
    tree_of = ZStory(path.read_bytes())
    result = Replay(story)

    def record(action: str, obs: GameObservation, text: str) -> None:
        tree = tree_of.tree(raw.get_state()[0])
        chain = tree.ancestors(raw.player_obj_num)
        if action == "(reset)":
            result.rooms_root = find_rooms_root(tree, raw.player_obj_num)
            top = result.rooms_root or 0
            rooms = [n for n in range(1, tree.count + 1) if tree.parent(n) == top]
            result.room_names = {n: tree.name(n) for n in rooms}
        loc = obs.location_id or 0
        result.steps.append(
            Step(
                action,
                obs,
                raw_look(raw),
                chain,
                {a: tree.name(a) for a in [*chain, loc]},
                tree.parent(loc),
                int(raw.get_score()),
                int(raw.get_moves()),
                text,
            )
        )

    obs = game.reset()
    text, _ = raw.reset()
    record("(reset)", obs, text)
    for action in game.walkthrough():
        obs = game.step(action)
        text, *_ = raw.step(action)
        record(action, obs, text)
    game.close()
    raw.close()
    return result


def printed_header(look: str) -> str | None:
    """The oracle's header: the first line of a `look` answer when it is plainly a room name.

    Independent of the adapter's parser: a capitalised first line (after lines wholly in
    parentheses), short, with no sentence punctuation or quotes, followed by more text, and not
    "Darkness". TextWorld's "-= Name =-" counts wherever it is.
    """
    found = re.search(r"^-= (.+?) =-\s*$", look, re.MULTILINE)
    if found:
        return found.group(1)
    lines = [line.strip() for line in look.splitlines() if line.strip()]
    while lines and lines[0].startswith("(") and lines[0].endswith(")"):
        lines.pop(0)
    if len(lines) < 2 or len(lines[0]) > 60 or not lines[0][0].isupper():
        return None
    if lines[0][-1] in ".!?" or any(c in lines[0] for c in '":;'):
        return None
    return None if lines[0] == "Darkness" else lines[0]


def own_header(header: str, step: Step) -> str:
    """The header without what follows the room's name when the player is in (or lying on)
    something: "Frigid River, in the magic boat" -> "Frigid River", "Bedroom (in bed)" ->
    "Bedroom", "Front of House, lying down" -> "Front of House"."""
    found = re.match(r"^(.*?)(?:, .*| \([^()]*\))$", header)
    if found is None:
        return header
    tree_name = step.tree_names.get(step.obs.location_id or 0, "")
    return found.group(1) if step.obs.location_context or found.group(1) == tree_name else header


def elsewhere(header: str, step: Step, run: Replay) -> bool:
    """Whether `header` names another room of the tree than the player's (Curses's dreams move
    the game's location while the player object sleeps in bed)."""
    here = step.obs.location_id
    return any(name == header and n != here for n, name in run.room_names.items())


# -- every game ---------------------------------------------------------------------------------


@pytest.mark.parametrize("story", each_game())
def test_every_location_is_the_room_around_the_player(story: str) -> None:
    run = replay(story)
    top = [] if run.rooms_root is None else [run.rooms_root]
    for step in run.steps:
        loc = step.obs.location_id
        assert loc is not None, (story, step.action, "a supported game always has a room")
        # a room: a top-level object (Inform, TextWorld) or in the rooms object (Infocom)
        assert [step.location_parent] == (top or [0]), (story, step.action, loc)
        if loc not in step.chain:  # Planetfall's bed lies outside every room (status line)
            assert top and top[0] not in step.chain, (story, step.action, loc, step.chain)
            continue
        # the room is the player's ancestor just under the top, nothing in between is a location
        inner = step.chain[: step.chain.index(loc)]
        assert step.chain[step.chain.index(loc) + 1 :] == top, (story, step.action, step.chain)
        assert not set(inner) & run.ids, (story, step.action, inner)
        if not inner:
            assert step.obs.location_context == "", (story, step.action)
        elif any(step.tree_names[i].strip() for i in inner):
            assert step.obs.location_context, (story, step.action, inner)


@pytest.mark.parametrize("story", each_game())
def test_every_name_agrees_with_the_look_header_where_the_game_prints_one(story: str) -> None:
    run = replay(story)
    checked = away = 0
    for step in run.steps:
        header = printed_header(step.look)
        if header is None or step.obs.done:
            continue
        expected = own_header(header, step)
        if step.obs.location_name != expected and elsewhere(expected, step, run):
            away += 1
            continue
        assert step.obs.location_name == expected, (story, step.action, step.look[:80])
        checked += 1
    assert checked >= len(run.steps) // 2, (story, checked, len(run.steps))
    assert away <= len(run.steps) // 20, (story, away)


@pytest.mark.parametrize("story", each_game())
def test_names_come_from_the_game_never_from_a_reply_or_banner(story: str) -> None:
    run = replay(story)
    headers: dict[int, set[str]] = {}
    for step in run.steps:
        header = printed_header(step.look)
        if header is not None and step.obs.location_id is not None:
            headers.setdefault(step.obs.location_id, set()).add(own_header(header, step))
    for step in run.steps:
        name, loc = step.obs.location_name, step.obs.location_id
        assert loc is not None
        assert name, (story, step.action, "a room always has a name")
        tree_name = clean_room_name(step.tree_names[loc])
        assert name in headers.get(loc, set()) | {tree_name}, (story, step.action, name)
        assert name not in PARSER_REPLIES and not name.isupper(), (story, step.action, name)


@pytest.mark.parametrize("story", each_game())
def test_no_inventory_or_object_name_keeps_an_internal_code(story: str) -> None:
    run = replay(story)
    for step in run.steps:
        for name in [*step.obs.inventory, *step.obs.objects]:
            assert name.strip() and not CODE.search(name), (story, step.action, name)
        assert all(n == n.lower() for n in step.obs.objects), (story, step.obs.objects)


@pytest.mark.parametrize("story", each_game())
def test_the_looks_spend_no_move_and_change_no_score(story: str) -> None:
    run = replay(story)
    for step in run.steps:
        assert (step.obs.moves, step.obs.score) == (step.moves, step.score), (story, step.action)
    assert run.steps[-1].obs.done and run.steps[-1].obs.won and not run.steps[-1].obs.died


# -- the rules, each on a game that shows it ----------------------------------------------------


@needs("zork1.z5")
def test_zork_the_magic_boat_is_context_on_the_river_never_a_location() -> None:
    run = replay("zork1.z5")
    assert 156 not in run.ids and run.rooms_root == 82
    afloat = [s.obs for s in run.steps if 156 in s.chain]
    assert afloat and all(o.location_context == "in the magic boat" for o in afloat)
    assert {(o.location_id, o.location_name) for o in afloat} >= {
        (33, "White Cliffs Beach"),
        (34, "Frigid River"),
        (30, "Shore"),
    }
    assert run.steps[0].obs.location_name == "West of House"  # not "ZORK I: The Great..."


@needs("905.z5")
def test_9_05_the_bed_is_context_in_the_bedroom() -> None:
    run = replay("905.z5")
    assert 27 not in run.ids
    start = run.steps[0].obs
    assert (start.location_id, start.location_name, start.location_context) == (
        25,
        "Bedroom",
        "in bed",  # from the game's own header "Bedroom (in bed)"
    )
    assert "bed" in start.objects and "dresser" in start.objects
    up = next(s.obs for s in run.steps if s.action == "stand up")
    assert (up.location_id, up.location_name, up.location_context) == (25, "Bedroom", "")


@needs("planetfall.z3")
def test_planetfall_a_bed_outside_every_room_keeps_the_status_line_room() -> None:
    run = replay("planetfall.z3")
    in_bed = [s for s in run.steps if 196 in s.chain]
    assert in_bed and all(s.obs.location_id == 178 for s in in_bed)  # Dorm C, not the bed
    assert {s.obs.location_name for s in in_bed} == {"Dorm C"}
    assert {s.obs.location_context for s in in_bed} == {"in the bed"}


@pytest.mark.parametrize(
    ("story", "banner", "room"),
    [
        pytest.param(
            "adventureland.z5", "ADVENTURELAND", "Forest", marks=needs("adventureland.z5")
        ),
        pytest.param("curses.z5", "CURSES", "Attic", marks=needs("curses.z5")),
        pytest.param("reverb.z5", "REVERBERATIONS", "Behind the Counter", marks=needs("reverb.z5")),
        pytest.param("lostpig.z8", "Lost Pig", "Outside", marks=needs("lostpig.z8")),
        pytest.param("snacktime.z8", "Snack Time!", "Sitting Room", marks=needs("snacktime.z8")),
        pytest.param("dragon.z5", "Dragon Adventure", "Rocky Mountains", marks=needs("dragon.z5")),
    ],
)
def test_the_start_room_has_its_own_name_not_the_title_banner(
    story: str, banner: str, room: str
) -> None:
    start = replay(story).steps[0]
    assert banner in start.text  # the banner is printed before the first room...
    assert start.obs.location_name == room  # ...and is not its name


@needs("theatre.z5")
def test_rooms_above_jerichos_object_limit_still_have_ids_and_full_names() -> None:
    # Jericho serves objects up to 255 only; most of Theatre's rooms lie above it, and its own
    # names are abbreviated ("atLobby").
    run = replay("theatre.z5")
    assert max(run.ids) > 255
    assert run.steps[0].obs.location_name == "Theatre Lobby"


@needs("lostpig.z8")
def test_lost_pig_item_codes_are_cleaned() -> None:
    run = replay("lostpig.z8")
    carried = {name for s in run.steps for name in s.obs.inventory}
    assert {"brick", "key", "whistle"} <= carried  # "Brick_1", "(key)", "(whistle)" in the tree
    closet = next(s.obs for s in run.steps if s.obs.location_id == 194)
    assert closet.location_name == "Closet"  # the tree calls it "(gnomeRoom)"


@needs("zork1.z5")
def test_zork_objects_are_the_things_in_the_room_in_the_games_words() -> None:
    run = replay("zork1.z5")
    troll_room = next(s.obs for s in run.steps if s.obs.location_id == 102)
    assert "troll" in " ".join(troll_room.objects)
    kitchen = next(s.obs for s in run.steps if s.obs.location_id == 203)
    assert "kitchen table" in kitchen.objects


@needs("zork1.z5")
def test_the_looks_change_no_text_in_zork() -> None:
    run = replay("zork1.z5")
    for step in run.steps:
        assert step.obs.text == step.text, step.action


def test_textworld_rooms_and_objects_come_from_the_games_words(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from cairn.adapters.game.demo_world import build_demo_world

    game = JerichoGame(build_demo_world(tmp_path_factory.mktemp("tw"), seed=1))
    start = game.reset()
    assert (start.location_name, start.location_context) == ("Entrance Hall", "")
    assert "iron door" in start.objects
    study = [game.step(a) for a in ["go north", "go east"]][-1]
    assert study.location_name == "Study" and "oak chest" in study.objects


# -- helpers, no story file needed --------------------------------------------------------------


def test_look_headers_give_the_name_and_the_vehicle_context() -> None:
    river = read_look("Frigid River, in the magic boat\nThe river descends.", "Frigid River", True)
    assert (river.name, river.context, river.found) == ("Frigid River", "in the magic boat", True)
    bed = read_look("Bedroom (in bed)\nThis bedroom is spare.", "Bedroom", True)
    assert (bed.name, bed.context) == ("Bedroom", "in bed")
    roller = read_look("Garage (in the garden roller)\nA garage.", "Garage", True)
    assert (roller.name, roller.context) == ("Garage", "in the garden roller")
    # a parenthesised part of the room's own name stays
    stairs = read_look("Stairwell (First Floor)\nStairs.", "Stairwell (First Floor)", False)
    assert stairs.name == "Stairwell (First Floor)"
    # the header may differ from the tree's name; a leading note in parentheses is skipped
    assert read_look("Contraption Room\nMachines.", "CR", False).name == "Contraption Room"
    mummy = read_look(
        "(You clamber out of the mummy case.)\nQuite an Undertaking\nA room.", "", False
    )
    assert mummy.name == "Quite an Undertaking"
    assert read_look("-= Kitchen =-\nA kitchen.", "", False).name == "Kitchen"


def test_dark_rooms_echoes_and_questions_name_no_room() -> None:
    for answer in [
        "Darkness\nIt is pitch dark, and you can't see a thing.",
        "It is pitch black. You are likely to be eaten by a grue.",
        "look look ...",
        "Please answer yes or no",
        "I don't understand that\n",
    ]:
        assert not read_look(answer, "Cellar", False).found, answer
    # Hitchhiker's has a room called "Dark": its own tree name makes it a name
    assert read_look("Dark\nYou can see nothing.", "Dark", False).name == "Dark"


def test_suffixes_are_only_split_when_the_player_is_inside_something() -> None:
    assert split_suffix("Street, by Pizza Parlor", True) == ("Street, by Pizza Parlor", "")
    assert split_suffix("Corridor, Aft End", False) == ("Corridor, Aft End", "")
    assert split_suffix("Shelf Room (stand on top of chair)", True) == (
        "Shelf Room",
        "stand on top of chair",
    )
    assert split_suffix("Maze (north)", False) == ("Maze (north)", "")


@pytest.mark.parametrize("reply", PARSER_REPLIES)
def test_parser_replies_are_never_headers(reply: str) -> None:
    assert is_parser_reply(reply)
    assert room_header(f"{reply}\nSomething else happens.") is None


def test_banners_are_not_headers_but_room_names_are() -> None:
    intro = "CURSES\nAn Interactive Diversion\nCopyright (c) 1993\nAttic\nThe attics.\n"
    assert room_header(intro) == "Attic"
    titled = "Lost Pig\nAnd Place Under Ground\nRelease 2 / Serial number 080406\nOutside\nNight.\n"
    assert room_header(titled) == "Outside"
    for name in ["Street, by Pizza Parlor", "Hangin' Out", "XIIth Dynasty Pyramid", "Up a Tree"]:
        assert room_header(f"{name}\nA place.") == name


def test_item_codes_are_cleaned_with_the_games_dictionary() -> None:
    words = {"ball", "ticket", "brick", "steeple", "door", "key", "milkbott"}
    assert clean_item_name("(Ball0)", words) == "ball"
    assert clean_item_name("Ticket_N", words) == "ticket"
    assert clean_item_name("Brick_1", words) == "brick"
    assert clean_item_name("(Steeple_Door)", words) == "steeple door"
    assert clean_item_name("(empty_milkbottle)", words, resolution=8) == "milkbottle"
    assert clean_item_name("(missingBR)", words) == ""
    for kept in ["ZM$100000", "Booth 1", "brass lantern", "Mr. Prosser"]:
        assert clean_item_name(kept, words) == kept
    assert object_name("*DRAGON EGGS* (very rare)") == "dragon eggs"
    assert object_name("Brass Lantern") == "brass lantern"
    assert clean_room_name("(gnomeRoom)") == "" and clean_room_name("Living  Room") == "Living Room"


def test_nouns_in_text_are_runs_of_dictionary_words() -> None:
    nouns = {"oak", "chest", "iron", "key", "study", "library", "hall", "kitchen", "table"}
    text = "A cramped study. An old oak chest stands against the wall, holding an iron key."
    assert nouns_in_text(text, nouns, skip=["Study"]) == ["oak chest", "iron key"]
    # exits' destinations and words of room names are places, not things
    hall = "A draughty hall. Archways lead north to a library, and a kitchen table stands here."
    assert nouns_in_text(hall, nouns, skip=["Entrance Hall", "Kitchen"]) == ["kitchen table"]


# -- the room rule on synthetic object trees ----------------------------------------------------


def encode(name: str) -> bytes:
    """A Z-string (version 3) of lower-case letters and spaces."""
    zchars = [0 if c == " " else ord(c) - ord("a") + 6 for c in name] or [5]
    while len(zchars) % 3:
        zchars.append(5)
    out = bytearray()
    for i in range(0, len(zchars), 3):
        word = (zchars[i] << 10) | (zchars[i + 1] << 5) | zchars[i + 2]
        out += (word | (0x8000 if i + 3 >= len(zchars) else 0)).to_bytes(2, "big")
    return bytes(out)


def story(objects: dict[int, tuple[str, int]]) -> ZStory:
    """A version 3 story file whose object tree has `objects` (number -> (name, parent))."""
    count = max(objects)
    table, entries = 0x40, 0x40 + 62
    props = entries + 9 * count
    data = bytearray(props + 2 * 64 * count + 64)
    data[0], data[0x0A:0x0C], data[0x0C:0x0E] = (
        3,
        table.to_bytes(2, "big"),
        (0x30).to_bytes(2, "big"),
    )
    children: dict[int, list[int]] = {}
    for number in sorted(objects):
        children.setdefault(objects[number][1], []).append(number)
    address = props
    for number in range(1, count + 1):
        name, parent = objects.get(number, ("", 0))
        siblings = children.get(parent, [])
        entry = entries + 9 * (number - 1)
        data[entry + 4] = parent
        data[entry + 5] = siblings[siblings.index(number) + 1] if number in siblings[:-1] else 0
        data[entry + 6] = children.get(number, [0])[0]
        data[entry + 7 : entry + 9] = address.to_bytes(2, "big")
        encoded = encode(name) if name else b""
        data[address] = len(encoded) // 2
        data[address + 1 : address + 1 + len(encoded)] = encoded
        address += 1 + len(encoded) + 1
    return ZStory(bytes(data))


def test_the_rule_climbs_out_of_a_vehicle_in_an_infocom_rooms_object() -> None:
    # 1 rooms (unnamed) > 2 beach > 3 boat > 4 player; 5 river in rooms too
    z = story({1: ("", 0), 2: ("beach", 1), 3: ("boat", 2), 4: ("cretin", 3), 5: ("river", 1)})
    tree = z.tree(z.story)
    assert tree.name(2) == "beach" and tree.ancestors(4) == [3, 2, 1]
    root = find_rooms_root(tree, 4)
    assert root == 1
    placement = place_player(tree, 4, root)
    assert (placement.room, placement.holders) == (2, (3,))
    assert visible_things(tree, placement, 4) == [3]


def test_the_rule_takes_the_top_object_in_inform_even_without_names() -> None:
    # Inform: 1 bedroom (top) > 2 bed > 3 player, 4 dresser; TextWorld: nothing is named
    named = story({1: ("bedroom", 0), 2: ("bed", 1), 3: ("you", 2), 4: ("dresser", 1)})
    tree = named.tree(named.story)
    assert find_rooms_root(tree, 3) is None
    placement = place_player(tree, 3, None)
    assert (placement.room, placement.holder) == (1, 2)
    assert visible_things(tree, placement, 3) == [2, 4]
    bare = story({1: ("", 0), 2: ("", 1)})
    assert (
        place_player(bare.tree(bare.story), 2, find_rooms_root(bare.tree(bare.story), 2)).room == 1
    )


def test_a_player_outside_every_room_has_no_location_unless_the_status_line_names_one() -> None:
    # 1 rooms > 2 dorm; 3 globals (unnamed) > 4 bed > 5 player
    z = story({1: ("", 0), 2: ("dorm", 1), 3: ("", 0), 4: ("bed", 3), 5: ("player", 4)})
    tree = z.tree(z.story)
    assert place_player(tree, 5, 1).room is None
    placement = place_player(tree, 5, 1, status_room=2)
    assert (placement.room, placement.holders) == (2, (4,))
