"""Characters found from the game itself (issue 38, item 8): the classifier on answers made up in
the shapes the suite's parsers give (Inform's "You can only do that to something animate.",
Infocom's "You can't talk to the door!"), the helpers that name and type a thing, and
`JerichoGame` over a fake interpreter whose tree holds a troll and a gnome among things, with no
list of names anywhere. Figures on the 18 real games: `bench/characters_bench.py` and
`tests/integration/test_characters_on_games.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.adapters.game import interpreter, jericho_game
from cairn.adapters.game.cast import Cast, character_name, head_words, typed_words
from cairn.adapters.game.characters import MAX_HEARINGS, Characters, flags, template
from cairn.adapters.game.game_opener import GameOpener
from cairn.adapters.game.jericho_game import JerichoGame
from cairn.settings import CairnSettings
from tests.fake_frotz import FakeFrotz, FakePlace, FakeStory

ANIMATE = 0
"""The animate attribute of these made-up games (Inform's number; Infocom's differs)."""
REFUSED = "You can only do that to something animate."
CANT = "You can't talk to the {}."
UNSEEN = "You can't see any such thing."


NOT_A_VERB = "That's not a verb I recognise."


def answers(ask: str, hello: str, talk: str = NOT_A_VERB) -> list[str | None]:
    """The answers to "talk to X", "ask X about X" and "X, hello", in the probes' order."""
    return [talk, ask, hello]


def hear_thing(found: Characters, number: int, name: str, attributes: set[int]) -> None:
    """A thing that refuses to be talked to, as a library parser words it."""
    replies = answers(REFUSED, CANT.format(name))
    found.hear(number, name, attributes, replies, f"A plain {name}.")


THINGS = [(10, "door", {5}), (11, "mailbox", {6}), (12, "lamp", set()), (13, "rug", {7})]
THINGS += [(14, "table", {5, 7}), (15, "chest", {8}), (16, "bell", {23})]


def room_of_things() -> Characters:
    found = Characters(player_attributes={ANIMATE, 23})
    for number, name, attributes in THINGS:
        hear_thing(found, number, name, attributes)
    return found


def test_characters_are_the_animate_objects_that_answer_unlike_the_refusals() -> None:
    found = room_of_things()
    assert found.animate is None  # no object has answered as a character yet
    found.hear(20, "troll", {ANIMATE, 5}, answers("The troll growls.", "The troll growls."))
    found.hear(21, "gnome", {ANIMATE}, answers("There is no reply.", "There is no reply."))
    found.hear(22, "guard", {ANIMATE}, answers("There is no reply.", "There is no reply."))
    # a thing with its own answer but not animate: a special reply, not a character
    found.hear(23, "statue", {9}, answers("The statue's eyes follow you.", CANT.format("y")))
    assert found.animate == ANIMATE
    everything = [(n, a) for n, _name, a in THINGS] + [(20, {0}), (21, {0}), (22, {0}), (23, {9})]
    # "There is no reply." is shared, but only by animate objects: not a refusal
    assert found.among(everything) == [20, 21, 22]
    assert sorted(found.known()) == [20, 21, 22]
    # a troll that dies loses the flag, and is no character from then on
    assert found.among([(20, set()), (21, {0})]) == [21]


def test_a_reply_the_parser_gives_to_anything_it_cannot_find_tells_nothing() -> None:
    found = room_of_things()
    # answered like the control (the parser did not find it), or asked back which one
    found.hear(30, "ghost", {ANIMATE}, answers(UNSEEN, UNSEEN), UNSEEN)
    found.hear(31, "button", {ANIMATE}, answers("Which button do you mean?", "Which?"))
    assert found.animate is None and found.among([(30, {0}), (31, {0})]) == []


def test_nothing_is_decided_before_enough_things_have_refused() -> None:
    found = Characters(player_attributes={ANIMATE})
    for number, name, attributes in THINGS[:3]:
        hear_thing(found, number, name, attributes)
    found.hear(20, "troll", {ANIMATE}, answers("The troll growls.", "Grr."))
    assert found.animate is None  # three things refused: their refusals are not known yet
    for number, name, attributes in THINGS[3:]:
        hear_thing(found, number, name, attributes)
    assert found.animate == ANIMATE


def test_an_attribute_the_player_lacks_marks_characters_when_two_holders_answer() -> None:
    # a game whose player object carries no actor flag: every attribute is tried, more strictly
    found = Characters(player_attributes={6, 17})
    for number, name, attributes in THINGS:
        hear_thing(found, number, name, attributes)
    found.hear(20, "barman", {26}, answers("No.", "Hello.", "Hmm... the barman looks at you."))
    assert found.animate is None  # one holder answering is not enough without the player's flag
    found.hear(21, "ford", {26, 31}, answers("Later.", "Hi there.", "Hmm... Ford looks at you."))
    assert found.animate == 26
    assert found.among([(20, {26}), (21, {26, 31}), (10, {5})]) == [20, 21]


def test_an_object_is_asked_again_when_a_flag_that_marks_characters_changes() -> None:
    found = room_of_things()
    assert found.wants(99, {1})  # never asked
    assert not found.wants(10, {5})  # asked, unchanged
    assert not found.wants(10, {5, 9})  # 9 marks nothing here
    assert found.wants(10, {5, ANIMATE})  # a robot switched on: the player's own flag
    for hearing in range(MAX_HEARINGS - 1):
        hear_thing(found, 10, "door", {5, ANIMATE} if hearing % 2 == 0 else {5})
    assert not found.wants(10, {5} if (MAX_HEARINGS - 1) % 2 else {5, ANIMATE})


def test_familiar_answers_skip_the_control() -> None:
    found = room_of_things()
    assert found.familiar("vase", [NOT_A_VERB, REFUSED, None])
    assert not found.familiar("vase", [NOT_A_VERB, "The vase sings.", None])


def test_a_template_reads_the_first_line_with_the_things_words_as_x() -> None:
    reply = "You can't talk to the brass lantern!\n\nThe bulldozer rumbles toward your home."
    assert template(reply, "brass lantern") == ("you", "can't", "talk", "to", "the", "X", "!")
    assert template("I can't use the word 'blue' here.", "blue button")[5] == "X"
    assert flags(bytes([0x80, 0x01, 0, 0])) == frozenset({0, 15})


def test_a_character_is_named_and_typed_from_its_tree_name() -> None:
    assert character_name("madame sosostris, famous clairvoyante") == "madame sosostris"
    assert character_name('robert "tasty" tasker') == "robert tasty tasker"
    assert character_name("the bear") == "bear"
    assert head_words("number of ghosts") == ["ghosts", "number"]
    assert head_words("huge troll with a club") == ["club", "troll"]
    dictionary = {"troll", "huge", "club", "blue", "button", "ghosts", "sosostr"}
    assert typed_words("huge troll with a club", dictionary, 9) == "huge troll"
    assert typed_words("blue button", dictionary, 9) == "blue button"
    assert typed_words("number of ghosts", dictionary, 9) == "ghosts"  # "number" is unknown
    assert typed_words("madame sosostris", dictionary, 7) == "sosostris"  # 7 letters kept
    assert typed_words("leaflet", dictionary, 9) == ""
    assert typed_words("brass lantern", None, 9) == "brass lantern"


def test_a_probe_whose_verb_the_parser_does_not_know_is_dropped() -> None:
    asked: list[str] = []

    def ask(commands: list[str]) -> list[str]:
        asked.extend(commands)
        return [
            "That's not a verb I recognise." if c.startswith(("talk", "zqx")) else "No such thing."
            for c in commands
        ]

    cast = Cast()
    cast.start(bytes([0x80, 0, 0, 0]))
    words = ({"lamp", "troll", "lantern"}, {"lantern", "troll"}, 9)
    cast.read(FakeTree(), [7], "", lambda _n: "troll", words, ask)
    probes = ["talk to lantern", "ask lantern about lantern", "lantern, hello"]
    assert asked[:4] == [*probes, "zqxv lantern"]
    assert not [c for c in asked[4:] if c.startswith("talk")]  # never asked again


class FakeTree:
    """An object tree with one object (7) and no attributes."""

    def attributes(self, number: int) -> bytes:
        return bytes(4)


# -- the adapter, on a fake interpreter ------------------------------------------------------


def keep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: list[str] | None) -> JerichoGame:
    """The keep game played through JerichoGame with `names` as the per-game list."""
    story = keep_story()
    path = tmp_path / "keep.z3"
    path.write_bytes(story.story_bytes())
    for module in (jericho_game, interpreter):
        monkeypatch.setattr(
            module, "load_interpreter", lambda _path, _seed, _limit=None: FakeFrotz(story)
        )
    return JerichoGame(path, npc_names=names)


def keep_story() -> FakeStory:
    """A gate (1) with six things and a gnome, a bridge (2) east of it with a troll; the player
    (20) is animate (flag 0) and stands at the gate."""
    things = ["door", "mailbox", "lamp", "rug", "table", "chest"]
    objects: dict[int, tuple[str, int]] = {1: ("Gate", 0), 2: ("Bridge", 0)}
    objects |= {3 + i: (name, 1) for i, name in enumerate(things)}
    objects |= {10: ("gnome", 1), 11: ("troll", 2), 12: ("plank", 2), 20: ("you", 1)}
    return FakeStory(
        objects=objects,
        player=20,
        places={
            1: FakePlace("An iron gate. A gnome sits by it.", "Gate", {"east": 2}),
            2: FakePlace("A nasty troll blocks the bridge.", "Bridge", {"west": 1}),
        },
        attributes={
            20: frozenset({0, 3}),
            10: frozenset({0}),
            11: frozenset({0}),
            4: frozenset({3}),
        },
        speech={"gnome": "The gnome shrugs.", "troll": "The troll grunts."},
        location_global=False,
    )


def test_characters_fill_the_npc_scope_with_no_list_of_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = keep(tmp_path, monkeypatch, None)
    gate = game.reset()
    bridge = game.step("east")
    assert (gate.npcs_present, gate.npcs_mentioned) == (["gnome"], ["gnome"])
    assert (bridge.npcs_present, bridge.npcs_mentioned) == (["troll"], ["troll"])
    assert "plank" in bridge.objects and "plank" not in bridge.npcs_present
    # the questions were asked aside: the game played got only the player's commands
    assert [c for c in game._env.commands if c != "look"] == ["east"]
    assert gate.moves == 0 and bridge.moves == 1


def test_a_per_game_list_overrides_what_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = keep(tmp_path, monkeypatch, ["troll"])
    assert game.reset().npcs_present == []  # the gnome is not on the list
    assert game.step("east").npcs_present == ["troll"]
    silent = keep(tmp_path, monkeypatch, [])
    assert silent.reset().npcs_present == [] and silent.step("east").npcs_present == []


def test_the_settings_list_no_game_and_a_listed_game_keeps_its_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert CairnSettings.model_fields["game_npcs"].get_default(call_default_factory=True) == {}
    keep(tmp_path, monkeypatch, None)  # writes keep.z3 and patches the interpreter
    story = tmp_path / "keep.z3"
    found = GameOpener({}, demo_seed=1, seed=0).open(story)
    assert found.reset().npcs_present == ["gnome"]
    listed = GameOpener({"keep": ["troll"]}, demo_seed=1, seed=0).open(story)
    assert listed.reset().npcs_present == [] and listed.step("east").npcs_present == ["troll"]
