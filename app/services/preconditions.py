"""The items the rules propose as needed for a procedure or a score (`needed_items`): proposals
only, kept in a lesson as far as the game confirms them (`cairn.lessons.build`).

An item counts as needed when the player held it and the action could not have done without it
as far as the turn shows: the command, a step or the game's answer names it ("unlock door with
key", "The lamp lights the way"; a move's answer describes the next room and is not read), or
it was picked up in this room just before the action (taken here, then used here). Items
carried along from elsewhere and never named are left out: a false need would keep a score from
ever being replayed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cairn.lessons.reading import noun_of
from cairn.lessons.turns import since_arrival
from cairn.models.game import TurnOutcome
from cairn.services.replies import reply

_WORD = re.compile(r"[a-z][a-z\-']*")


def needed_items(outcome: TurnOutcome, history: Sequence[TurnOutcome]) -> list[str]:
    """The items held for `outcome` that it needed (see the module docstring), in the order
    the player held them. `history` is the episode's turns before it, oldest first."""
    held = list(outcome.inventory_before)
    if not held:
        return []
    here = since_arrival(history, outcome.location_before)
    words = set(_WORD.findall(" ".join([outcome.action, *(t.action for t in here)]).lower()))
    if not outcome.moved:  # a move's answer describes the next room, not what the move used
        words |= set(_WORD.findall(reply(outcome.response).lower()))
    gained_here = {
        item for t in here for item in set(t.inventory_after) - set(t.inventory_before)
    }
    return [item for item in held if item in gained_here or _named(item, words)]


def _named(item: str, words: set[str]) -> bool:
    noun = noun_of(item.lower())
    return noun is not None and noun in words
