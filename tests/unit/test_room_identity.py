"""Room identity in unusual object trees, and names for games that print no room name.

The games are `tests.fake_frotz` stories played through the real `JerichoGame` adapter (only
the interpreter is a stand-in): rooms that all sit inside one container object, named ("it", as
Plundered Hearts' `rooms`) or not (a TextWorld game's rooms moved into a region), with and
without a location variable; a bedroom whose bed is furniture, never a room; a game with no
name lines. Real compiled games with the same trees are in
`tests/integration/test_unusual_trees.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.adapters.game import interpreter, jericho_game
from cairn.adapters.game.jericho_game import JerichoGame
from cairn.adapters.game.names import described_name, read_look
from cairn.adapters.game.room_evidence import RoomEvidence
from cairn.adapters.game.rooms import root_from_location, root_from_move
from tests.fake_frotz import FakeFrotz, FakePlace, FakeStory

OPENING = (
    "THE FAKE ADVENTURE\nAn interactive test\nRelease 1 / Serial number 000000\n\n"
    "Welcome, traveller! Your quest begins in a land of legends."
)


def open_game(story: FakeStory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JerichoGame:
    """`story` played through JerichoGame (a fresh FakeFrotz for every interpreter it loads)."""
    path = tmp_path / "fake.z3"
    path.write_bytes(story.story_bytes())
    for module in (jericho_game, interpreter):  # the played one, and the second one's fallback
        monkeypatch.setattr(
            module, "load_interpreter", lambda _path, _seed, _limit=None: FakeFrotz(story)
        )
    return JerichoGame(path)


def ship(container: str, rooms: tuple[str, str, str], location_global: bool) -> FakeStory:
    """Three rooms inside one top-level container (1): cabin (2) north of the deck (3), galley
    (4) east of the deck; the player (5) starts in the cabin."""
    cabin, deck, galley = rooms
    return FakeStory(
        objects={1: (container, 0), 2: (cabin, 1), 3: (deck, 1), 4: (galley, 1), 5: ("you", 2)},
        player=5,
        places={
            2: FakePlace("A snug cabin with a hammock.", "Cabin", {"south": 3}),
            3: FakePlace("The deck is wet with spray.", "Deck", {"north": 2, "east": 4}),
            4: FakePlace("Pots hang over a cold stove.", "Galley", {"west": 3}),
        },
        opening=OPENING,
        location_global=location_global,
    )


def walk(game: JerichoGame, moves: list[str]) -> list[tuple[int | None, str]]:
    """(location id, name) at the start and after each move."""
    seen = [game.reset()]
    seen += [game.step(move) for move in moves]
    return [(o.location_id, o.location_name) for o in seen]


ROUND_TRIP = ["south", "east", "west", "north"]
ROUND_TRIP_PLACES = [(2, "Cabin"), (3, "Deck"), (4, "Galley"), (3, "Deck"), (2, "Cabin")]


def test_rooms_inside_a_container_named_it_stay_distinct_rooms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Plundered Hearts' rooms object is called "it": a named top used to be taken for the room
    game = open_game(ship("it", ("Cabin", "Deck", "Galley"), True), tmp_path, monkeypatch)
    assert walk(game, ROUND_TRIP) == ROUND_TRIP_PLACES


def test_rooms_in_a_container_are_found_by_walking_when_no_variable_says_where_you_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no names in the tree at all (TextWorld, Inform 7) and no location variable: the first
    # observation already tells the cabin from its container, by a move tried aside
    game = open_game(ship("", ("", "", ""), False), tmp_path, monkeypatch)
    assert walk(game, ROUND_TRIP) == ROUND_TRIP_PLACES
    # the moves tried aside never reached the game played (its `look`s are undone too)
    assert [c for c in game._env.commands if c != "look"] == ROUND_TRIP
    assert game._env.moves == len(ROUND_TRIP)


def test_a_named_container_without_a_location_variable_is_found_by_walking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = open_game(ship("Ship", ("Cabin", "Deck", "Galley"), False), tmp_path, monkeypatch)
    assert walk(game, ROUND_TRIP) == ROUND_TRIP_PLACES


def station_story(names_holder: bool = False, clamber: bool = False) -> FakeStory:
    """An Inform-like game, rooms at the top: a carriage (4) and a bench (5) stand on the
    platform (1) with the player (6); in the carriage, "city" carries it to the city (2),
    whose square (3) is north. `names_holder`: the location variable names what the player
    is in; `clamber`: from the carriage a compass move lands on the bench. Either made the
    platform look like the container of all rooms, and the carriage like a room."""
    return FakeStory(
        objects={
            1: ("Platform", 0),
            2: ("City", 0),
            3: ("Square", 0),
            4: ("carriage", 1),
            5: ("bench", 1),
            6: ("you", 1),
        },
        player=6,
        places={
            1: FakePlace("Rails run east into the hills.", "Platform"),
            2: FakePlace("Towers rise all around.", "City", {"north": 3}),
            3: FakePlace("Pigeons strut over the flagstones.", "Square", {"south": 2}),
        },
        furniture={"carriage": 4, "bench": 5},
        vehicles=frozenset({4}),
        rides={"city": 2},
        holder_exits={4: {"west": 5}} if clamber else {},
        location_names_holder=names_holder,
        opening=OPENING,
    )


STATION_WALK = ["get in carriage", "city", "get out", "north", "south"]
STATION_PLACES = [
    (1, "Platform"),
    (1, "Platform"),
    (2, "City"),
    (2, "City"),
    (3, "Square"),
    (2, "City"),
]


@pytest.mark.parametrize(
    ("names_holder", "clamber"), [(True, False), (False, True), (True, True)]
)
def test_a_vehicle_that_carries_the_player_never_makes_its_room_the_rooms_container(
    names_holder: bool, clamber: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: the platform was taken for the container of all rooms once the player boarded,
    # the carriage became the location, and after the ride there was no location at all
    game = open_game(station_story(names_holder, clamber), tmp_path, monkeypatch)
    seen = [game.reset()] + [game.step(c) for c in STATION_WALK]
    assert [(o.location_id, o.location_name) for o in seen] == STATION_PLACES
    assert [o.location_context for o in seen[1:3]] == ["in the carriage", "in the carriage"]


def grounds_story() -> FakeStory:
    """Three rooms inside one named container (1, "Grounds"), no location variable: the lawn
    (2) south of the orchard (3), the pond (4) east of the orchard; the player (6) starts in
    a cart (5) standing on the lawn, and the cart carries them along the paths."""
    return FakeStory(
        objects={
            1: ("Grounds", 0),
            2: ("Lawn", 1),
            3: ("Orchard", 1),
            4: ("Pond", 1),
            5: ("cart", 2),
            6: ("you", 5),
        },
        player=6,
        places={
            2: FakePlace("Clipped grass.", "Lawn", {"north": 3}),
            3: FakePlace("Apple trees in rows.", "Orchard", {"south": 2, "east": 4}),
            4: FakePlace("Reeds and still water.", "Pond", {"west": 3}),
        },
        furniture={"cart": 5},
        vehicles=frozenset({5}),
        opening=OPENING,
        location_global=False,
    )


def test_a_player_who_starts_in_a_vehicle_is_placed_in_its_room_not_the_rooms_container(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: no move from the cart walked the player between two rooms, so the named
    # container was taken for the one room of the whole game, from the start to the end
    game = open_game(grounds_story(), tmp_path, monkeypatch)
    seen = [game.reset()] + [game.step(c) for c in ["north", "east", "get out", "west"]]
    assert [(o.location_id, o.location_name) for o in seen] == [
        (2, "Lawn"),
        (3, "Orchard"),
        (4, "Pond"),
        (4, "Pond"),
        (3, "Orchard"),
    ]


def test_room_evidence_refuses_and_drops_a_guess_the_played_game_contradicts() -> None:
    boarded = RoomEvidence()
    boarded.observe([1])  # standing on the platform: a room
    boarded.observe([4, 1])  # into the carriage from beside it: a holder
    assert (boarded.rooms, boarded.holders) == ({1}, {4})
    assert boarded.propose(1, 4) is None  # a room holds no rooms
    assert boarded.propose(7, 4) is None  # a holder is no witness
    assert boarded.propose(7, 3) == 7
    started_inside = RoomEvidence()
    started_inside.observe([4, 1])  # the game began with the player in the carriage
    assert started_inside.propose(1, 4) == 1  # nothing known yet: the guess is taken
    started_inside.observe([4, 2])  # carried elsewhere: nothing new
    assert started_inside.root == 1
    started_inside.observe([2])  # out of the carriage: it was a holder, the guess goes
    assert (started_inside.root, started_inside.holders, started_inside.rooms) == (None, {4}, {2})
    started_inside.forget_last()
    started_inside.observe([5, 9])  # after a restore: no move, so no holder
    assert started_inside.holders == {4}


def bedroom_story() -> FakeStory:
    """An Inform 7-like game with no name lines and no names in its tree: a bedroom (1) with a
    bed (2) the player (3) lies in and a wardrobe (5), a hall (4) north of it; both rooms at the
    top of the tree."""
    return FakeStory(
        objects={1: ("", 0), 2: ("", 1), 3: ("", 2), 4: ("", 0), 5: ("", 1)},
        player=3,
        places={
            1: FakePlace(
                "You are in a cramped bedroom, with a window facing east.", "", {"north": 4}
            ),
            4: FakePlace("A long hall runs from east to west. Doors lead south.", "", {"south": 1}),
        },
        furniture={"bed": 2, "wardrobe": 5},
        opening=OPENING,
        location_global=False,
    )


def test_a_bed_stays_furniture_in_a_room_named_from_its_description(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = open_game(bedroom_story(), tmp_path, monkeypatch)
    start = game.reset()
    assert (start.location_id, start.location_name) == (1, "Cramped bedroom")
    # getting from the bed into the wardrobe moves between two things in one room: no evidence
    assert game.step("get in wardrobe").location_id == 1
    steps = [game.step(c) for c in ["get up", "north", "south"]]
    assert [(o.location_id, o.location_name) for o in steps] == [
        (1, "Cramped bedroom"),
        (4, "Long hall"),
        (1, "Cramped bedroom"),
    ]
    assert "traveller" not in start.location_name and "FAKE" not in start.location_name


def test_a_game_without_name_lines_never_takes_its_welcome_text_for_a_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    story = ship("it", ("", "", ""), True)
    places = {n: FakePlace(p.description, "", p.exits) for n, p in story.places.items()}
    game = open_game(
        FakeStory(story.objects, story.player, places, opening=OPENING), tmp_path, monkeypatch
    )
    assert walk(game, ["south", "east"]) == [(2, "Snug cabin"), (3, "Deck"), (4, "Pots")]


# -- the rules, without a game ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "name"),
    [
        (
            "A draughty hall with a cracked flagstone floor. In the south wall a door.",
            "Draughty hall",
        ),
        ("You are standing in an open field west of a white house.", "Open field"),
        (
            "You are in a maze of twisty little passages, all alike.",
            "Maze of twisty little passages",
        ),
        ("A cramped study that smells of ink and dust.", "Cramped study"),
        ("This is the kitchen of the old house. A table stands here.", "Kitchen of the old house"),
        ("You find yourself at the edge of a deep chasm.", "Deep chasm"),
        ("Cobbles lie under a grey sky.", "Cobbles"),
        ("Your bedroom is a mess.", "Bedroom"),
        ("You can see a long corridor here.", "Long corridor"),
    ],
)
def test_a_description_gives_its_first_noun_phrase_as_the_name(description: str, name: str) -> None:
    assert described_name(description) == name
    reading = read_look(description, "", False)
    assert (reading.found, reading.described) == (False, name)


@pytest.mark.parametrize(
    "answer",
    [
        "It is pitch dark, and you can't see a thing.",
        "It is pitch black. You are likely to be eaten by a grue.",
        "Darkness surrounds you.",
        "You can't see anything in here.",
        "I don't understand that sentence.",
        "Please answer yes or no.",
        "Copyright (c) 1987 Infocom, Inc. All rights reserved.",
        "Nothing.",
    ],
)
def test_darkness_replies_and_banners_give_no_name(answer: str) -> None:
    assert described_name(answer) == ""


def test_a_header_still_wins_over_the_description() -> None:
    reading = read_look("Kitchen\nA cramped kitchen with a stove.", "", False)
    assert (reading.name, reading.found, reading.described) == ("Kitchen", True, "")


def test_a_root_is_the_top_that_holds_the_location_or_a_walk_between_its_children() -> None:
    assert root_from_location([3, 1], 3) == 1  # the location variable names the top's child
    assert root_from_location([27, 25], 25) is None  # it names the top: the top is the room
    assert root_from_location([25], 25) is None
    assert root_from_move([2, 1], [3, 1]) == 1  # cabin -> deck, both in the ship
    assert root_from_move([9, 2, 1], [3, 1]) == 1  # from a hammock in the cabin to the deck
    assert root_from_move([27, 25], [26]) is None  # out of bed into another top-level room
    assert root_from_move([27, 25], [27, 25]) is None  # the move failed
    assert root_from_move([25], [26]) is None  # Inform rooms at the top
    # the boat carried the player from one of the top's children into another
    assert root_from_move([156, 33, 82], [156, 34, 82]) == 82
    assert root_from_move([156, 33, 82], [33, 82]) is None  # out of the boat: the same room
    assert root_from_move([7, 33, 82], [156, 34, 82]) is None  # not the same vehicle
