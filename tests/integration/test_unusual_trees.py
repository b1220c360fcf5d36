"""Real compiled games with unusual object trees: rooms inside one container, no room headings,
a vehicle.

All are the demo world's Inform 7 source (TextWorld, compiled offline with the compiler in its
wheel) with a few lines added: in `tw-nested` every room is moved into one region object when
play begins (the game's own visibility stops at a room, so it plays as before); `tw-nameless`
prints no room heading; `tw-cart` has a cart (an Inform vehicle) in the first room, and
`tw-nested-cart` is `tw-nested` with the player starting in that cart. No line names a room or
an id the adapter could know.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.adapters.game.jericho_game import JerichoGame
from cairn.adapters.game.ztree import ZStory
from cairn.interfaces.game import GameObservation
from cairn.models.memory import MemoryScope
from cairn.replay.runner import run_scenario
from cairn.replay.scenario_document import ScenarioDocument
from cairn.replay.scenario_models import JerichoScenario

NESTED = """
The grounds is a region.
To nest (R - a room) in (T - a region): (- move {R} to {T}; -).
When play begins:
\trepeat with R running through rooms:
\t\tnest R in the grounds.
Include (-
[ VisibilityParent o;
\tif (o && (o has container) && (o hasnt open) && (o hasnt transparent)) return nothing;
\tif (o ofclass K1_room) return nothing;
\tif (o) o = CoreOfParentOfCoreOf(o);
\treturn o;
];
-) instead of "Visibility Parent" in "Light.i6t".
"""
NAMELESS = """
The room description heading rule is not listed in the carry out looking rules.
"""
CART = """
The cart is a vehicle in r_0. The cart is open. The cart is not openable.
"""
IN_CART = """
When play begins: now the player is in the cart.
"""
ROUTE = ["go north", "go east", "open oak chest", "take iron key", "go west", "go south"]
ROUTE += ["go east", "go south"]
HEADERS = ["Entrance Hall", "Library", "Study", "Study", "Study", "Library", "Entrance Hall"]
HEADERS += ["Kitchen", "Larder"]


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two games, compiled once ("tw-" makes Jericho read score, moves and the player)."""
    pytest.importorskip("textworld")
    from textworld.generator.inform7 import compile_inform7_game

    from cairn.adapters.game.demo_world import demo_inform_source

    folder = tmp_path_factory.mktemp("unusual")
    source = demo_inform_source(1)
    sources = {
        "nested": source + NESTED,
        "nameless": source + NAMELESS,
        "cart": source + CART,
        "nested-cart": source + NESTED + CART + IN_CART,
    }
    paths = {kind: folder / f"tw-{kind}.z8" for kind in sources}
    for kind, text in sources.items():
        compile_inform7_game(text, str(paths[kind]))
    return paths


def play(path: Path) -> tuple[JerichoGame, list[GameObservation]]:
    """The game after `ROUTE`, and what it showed at the start and after each command."""
    game = JerichoGame(path)
    seen = [game.reset()]
    seen += [game.step(command) for command in ROUTE]
    return game, seen


def test_rooms_moved_into_one_region_object_stay_distinct_rooms(games: dict[str, Path]) -> None:
    game, seen = play(games["nested"])
    ram = game._env.get_state()[0]
    tree = ZStory(games["nested"].read_bytes()).tree(ram)
    ids = [o.location_id or 0 for o in seen]
    region = tree.parent(ids[0])
    assert region and {tree.parent(i) for i in ids} == {region}  # every room is in the region
    assert [o.location_name for o in seen] == HEADERS
    by_name = {o.location_name: o.location_id for o in seen}
    assert len(set(by_name.values())) == len(by_name) == 5  # five rooms, five ids
    assert all(by_name[o.location_name] == o.location_id for o in seen)
    # the moves tried aside on the second interpreter never reached the game played
    assert [o.moves - seen[0].moves for o in seen] == list(range(len(seen)))
    assert seen[4].score == 1 and "iron key" in seen[4].inventory
    game.close()


def test_a_cart_driven_between_rooms_keeps_them_rooms_named_from_their_headers(
    games: dict[str, Path],
) -> None:
    game = JerichoGame(games["cart"])
    seen = [game.reset()]
    seen += [game.step(c) for c in ["enter cart", "go north", "go south", "go west", "get out"]]
    seen += [game.step("go east")]
    places = [(o.location_name, o.location_context) for o in seen]
    assert places == [
        ("Entrance Hall", ""),
        ("Entrance Hall", "in the cart"),
        ("Library", "in the cart"),  # "-= Library =- (in the cart)": the header's suffix
        ("Entrance Hall", "in the cart"),
        ("Garden", "in the cart"),
        ("Garden", ""),
        ("Entrance Hall", ""),
    ]
    by_name = {o.location_name: o.location_id for o in seen}
    assert len(set(by_name.values())) == 3 and None not in by_name.values()
    assert all(by_name[o.location_name] == o.location_id for o in seen)
    assert "library" not in seen[2].objects  # the room's own name is no thing in it
    game.close()


def test_rooms_in_one_region_from_a_start_in_a_cart_to_the_win(games: dict[str, Path]) -> None:
    # before: no move from the cart walked the player between two rooms, so the region was
    # the one location of the whole game, its start and its win, with no name
    from cairn.adapters.game.demo_world import demo_walkthrough

    game = JerichoGame(games["nested-cart"])
    seen = [game.reset()] + [game.step(c) for c in demo_walkthrough(1)]
    assert seen[0].location_name == "Entrance Hall"
    assert seen[0].location_context == "in the cart"
    assert seen[-1].won and seen[-1].location_name == "Treasury"
    names = [o.location_name for o in seen]
    assert names[:3] == ["Entrance Hall", "Library", "Study"]
    assert names[-3:] == ["Gallery", "Treasury", "Treasury"]
    by_name = {o.location_name: o.location_id for o in seen}
    assert len(set(by_name.values())) == len(by_name) == 5
    game.close()


def test_a_game_without_headings_names_rooms_from_their_descriptions(
    games: dict[str, Path],
) -> None:
    game, seen = play(games["nameless"])
    names = [o.location_name for o in seen]
    assert names == [
        "Draughty hall",
        "Tall shelves of mouldering books",
        "Cramped study",
        "Cramped study",
        "Cramped study",
        "Tall shelves of mouldering books",
        "Draughty hall",
        "Cold kitchen",
        "Empty shelves",
    ]
    # the opening tells the legend before the first room: it names nothing
    assert "Legend says" in seen[0].text and not [n for n in names if "Legend" in n]
    game.close()


@pytest.mark.parametrize("kind", ["nested", "nameless"])
def test_replayed_memories_are_keyed_to_each_room_by_its_name(
    kind: str, games: dict[str, Path], tmp_path: Path
) -> None:
    spec = JerichoScenario(kind="jericho", name=kind, story=str(games[kind]), actions=ROUTE)
    report = run_scenario(ScenarioDocument(spec), tmp_path / kind)
    assert report.outcome is not None, report.render()
    located = [e for e in report.outcome.entries if e.scope is MemoryScope.LOCATION]
    assert len({e.location_id for e in located}) >= 4  # not one collapsed location
    assert all(e.location_name for e in located)
    assert not [e.title for e in located if "location " in e.title.lower()]
