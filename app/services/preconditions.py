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

from cairn.models.game import TurnOutcome
from cairn.services.replies import reply

_WORD = re.compile(r"[a-z][a-z\-']*")
_LEAD = frozenset(["a", "an", "the", "some", "your", "my", "pair", "of"])


def needed_items(outcome: TurnOutcome, history: Sequence[TurnOutcome]) -> list[str]:
    """The items held for `outcome` that it needed (see the module docstring), in the order
    the player held them. `history` is the episode's turns before it, oldest first."""
    held = list(outcome.inventory_before)
    if not held:
        return []
    here = _since_arrival(history, outcome.location_before)
    words = set(_WORD.findall(" ".join([outcome.action, *(t.action for t in here)]).lower()))
    if not outcome.moved:  # a move's answer describes the next room, not what the move used
        words |= set(_WORD.findall(reply(outcome.response).lower()))
    gained_here = {
        item for t in here for item in set(t.inventory_after) - set(t.inventory_before)
    }
    return [item for item in held if item in gained_here or _named(item, words)]


def _since_arrival(history: Sequence[TurnOutcome], room: int | None) -> list[TurnOutcome]:
    """The turns taken in `room` since the player last came in, oldest first."""
    found: list[TurnOutcome] = []
    for turn in reversed(history):
        if turn.location_before != room or turn.moved or turn.died:
            break
        found.insert(0, turn)
    return found


def _named(item: str, words: set[str]) -> bool:
    noun = _noun(item.lower())
    return noun is not None and noun in words


def _noun(name: str) -> str | None:  # (the noun of an item's name)
    words = [w for w in _WORD.findall(name.split(" with ")[0]) if w not in _LEAD]
    return words[-1] if words else None
