"""The rule-based readings of the game's words: commands' objects, the failure ledger's grammar
(written and parsed back), endings and their causes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.services.endings import DeathCause, death_cause, ending_text
from cairn.services.outcomes import (
    Command,
    failed_commands,
    failure_text,
    failure_title,
    got_items,
    got_title,
    procedure_steps,
    quoted_commands,
    unknown_word,
    with_steps,
)


@pytest.mark.parametrize(
    ("command", "verb", "thing"),
    [
        ("take the brass lantern", "take", "brass lantern"),
        ("unlock door with key", "unlock", "door"),
        ("pick up a leaflet", "pick up", "leaflet"),
        ("put egg in nest", "put", "egg"),
        ("look at the sign", "look at", "sign"),
        ("jump", "jump", ""),
    ],
)
def test_a_command_reads_as_verb_and_object(command: str, verb: str, thing: str) -> None:
    assert Command.parse(command) == Command(verb, thing)


def test_failure_titles_read_as_a_player_writes_them() -> None:
    assert failure_title(["take window"]) == "Take window"
    assert failure_title(["take window", "break window"]) == "Take or break window"
    assert failure_title(["take window", "open window", "break window"]) == (
        "Take, open or break window"
    )
    assert failure_title(["jump", "xyzzy"]) == "Tried: jump, xyzzy"


_COMMAND = st.from_regex(r"[a-z]{1,8}( [a-z]{1,8}){0,3}", fullmatch=True)


@given(st.lists(_COMMAND, min_size=1, max_size=6, unique=True), st.text(max_size=300))
def test_the_ledger_text_parses_back_to_its_commands(commands: list[str], answer: str) -> None:
    assert failed_commands(failure_text(commands, answer)) == commands


def test_other_texts_list_no_failed_commands() -> None:
    assert failed_commands("'north' from here reaches Hall (L2).") == []


def test_unknown_words_are_read_from_the_answer() -> None:
    assert unknown_word('I don\'t know the word "xyzzy".') == "xyzzy"
    assert unknown_word("You can't see any such thing.") is None


def test_the_ending_keeps_the_games_words_without_the_prompts() -> None:
    text = (
        "Taken.\n\nThe bomb explodes.\n\n *** You have died ***\n\n"
        "Would you like to RESTART, RESTORE a saved game or QUIT?\n> "
    )
    assert ending_text(text) == "Taken.\nThe bomb explodes.\n*** You have died ***"


def test_a_resurrection_ends_the_death_text_at_the_banner() -> None:
    text = "The troll's axe splits you.\n\n**** You have died ****\n\nNow, let me see...\nForest"
    assert ending_text(text).endswith("**** You have died ****")


@pytest.mark.parametrize(
    ("action", "response", "cause"),
    [
        ("north", "Oh, no! A lurking grue!\n\n**** You have died ****", DeathCause.COMMAND),
        ("jump", "You jump off the cliff and fall to the rocks.\n\n*** You have died ***",
         DeathCause.COMMAND),
        ("wait", "Time passes.\n\nThe roof caves in.\n\n*** You have died ***", DeathCause.PLOT),
        ("take egg", "Taken.\n\nThe bomb goes off.\n\n*** You have died ***", DeathCause.PLOT),
        ("north", "Forest\nTrees.\n\nYou can't hold your breath any longer.", DeathCause.AIR),
        ("east", "You collapse from hunger.\n\n*** You have died ***", DeathCause.HUNGER),
        ("east", "It is too late: the ship sails.\n\n*** You have lost ***", DeathCause.CLOCK),
    ],
)
def test_a_death_is_blamed_on_the_command_only_when_it_followed_from_it(
    action: str, response: str, cause: DeathCause
) -> None:
    assert death_cause(action, response) is cause


@given(st.text(max_size=80), st.lists(_COMMAND, min_size=1, max_size=5, unique=True))
def test_steps_written_are_the_steps_read(text: str, steps: list[str]) -> None:
    assert procedure_steps(with_steps(text.replace("Steps first", ""), steps)) == steps


def test_no_steps_add_nothing() -> None:
    assert with_steps("'west' gained 10 points.", []) == "'west' gained 10 points."
    assert procedure_steps("'west' gained 10 points.") == []


@given(st.lists(st.from_regex(r"[a-z]{1,8}( [a-z]{1,8}){0,2}", fullmatch=True), min_size=1,
                max_size=4, unique=True))
def test_items_written_are_the_items_read(items: list[str]) -> None:
    assert got_items(got_title(items)) == items
    assert got_items("Scored 5 by 'take lamp'") == []


def test_quoted_commands_are_read_in_order() -> None:
    assert quoted_commands("'open window' then 'enter window'.") == ["open window", "enter window"]


def test_a_ledger_is_read_from_its_fields_and_an_older_one_from_its_text() -> None:
    from cairn.models.memory import Ledger, MemoryCategory, MemoryEntry, MemoryScope
    from cairn.services.outcomes import ledger_commands, render_ledger

    fields = Ledger(commands=["open door", "kick door"], answer="It is locked.")
    entry = MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=3,
        category=MemoryCategory.FAILURE,
        title="Open or kick door",
        text="(a person rewrote this prose: 'take door')",
        ledger=fields,
    )
    assert ledger_commands(entry) == ["open door", "kick door"]  # the fields, not the prose
    assert render_ledger(fields) == (
        "Tried here, did not work: 'open door', 'kick door'. The game said: \"It is locked.\""
    )
    older = entry.model_copy(update={"ledger": None, "text": render_ledger(fields)})
    assert ledger_commands(older) == ["open door", "kick door"]
