"""Carrying too much: when the game refuses a take because of what the player holds ("Your
load is too heavy."), drop something spare, then take the thing again. When it refuses a move
and its answer names a thing the player carries ("If you leave the store with the hairspray,
that would be shoplifting."), drop that thing, then the way may be tried again.

Spare: not a light source, not a key, not a weapon, not the thing wanted; of those, the one the
inventory lists last (in the object tree, what was picked up earliest). A thing dropped for this
is not picked up again in that room this episode, so taking and dropping cannot alternate.
"""

from __future__ import annotations

import re

from cairn.agents.explorer.episode import Episode, Move
from cairn.agents.explorer.words import _WORD, light_sources, own_move, thing_noun
from cairn.interfaces.agent import AgentView
from cairn.services.outcomes import TAKE_VERBS, Command
from cairn.services.replies import overloaded, reply

_KEPT = re.compile(
    r"\b(?:keys?|sword|knife|dagger|axe|blade|gun|pistol|rifle|wand|staff)\b", re.IGNORECASE
)
"""Things a player keeps whatever the load: keys and weapons (by their name)."""


class Load:
    """The take to send again once something spare is dropped (see the module docstring)."""

    def __init__(self) -> None:
        self._retake: tuple[int | None, str, str] | None = None
        """(room, the take refused, the noun dropped for it)."""

    def next_move(self, view: AgentView, episode: Episode, sent: str) -> Move | None:
        """The drop after a take refused for the load, or the take again after that drop."""
        obs = view.observation
        here = obs.location_id
        pending, self._retake = self._retake, None
        if pending is not None:
            where, take, dropped = pending
            still_held = any(thing_noun(item) == dropped for item in obs.inventory)
            if where == here and sent == f"drop {dropped}" and not still_held:
                return Move(take, f"Trying {take!r} again: I carry less now.")
            return None
        held_back = _held_back(view, episode, sent)
        if held_back is not None:
            episode.dead_nouns.add((here, held_back))  # not picked up again here this episode
            episode.blocked.discard((here, sent))  # the way may be open without it
            return Move(
                f"drop {held_back}",
                f"Trying 'drop {held_back}': the game would not let me {sent!r} with it.",
            )
        command = Command.parse(sent)
        if command.verb not in TAKE_VERBS or not overloaded(reply(obs.text)):
            return None
        spare = _spare(obs.inventory, command.object or "")
        if spare is None:
            return None
        self._retake = (here, sent, spare)
        episode.dead_nouns.add((here, spare))  # not picked up again here this episode
        return Move(
            f"drop {spare}",
            f"Trying 'drop {spare}': the game says I carry too much to {sent!r}.",
        )


def _held_back(view: AgentView, episode: Episode, sent: str) -> str | None:
    """The noun of the carried thing the game's answer names when it kept the player from a
    move (`sent` left the player where it was), None otherwise."""
    obs = view.observation
    if not own_move(sent) or episode.answer.get((obs.location_id, sent)) != obs.text:
        return None
    words = set(_WORD.findall(obs.text.lower()))
    lights = set(light_sources(obs.inventory))
    for item in obs.inventory:
        noun = thing_noun(item)
        if noun is not None and noun in words and noun not in lights:
            return noun
    return None


def _spare(inventory: list[str], wanted: str) -> str | None:
    """The noun of the carried thing to drop (see the module docstring), None when none is."""
    lights = set(light_sources(inventory))
    for item in reversed(inventory):
        noun = thing_noun(item)
        if noun is None or noun in lights or noun in wanted.split() or _KEPT.search(item):
            continue
        return noun
    return None
