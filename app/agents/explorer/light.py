"""Darkness, as the offline player obeys it: the light it carries and has lit, the moves into a
room a darkness lesson says is dark (they wait for a lit light), and the way out of such a room
when no light is at hand."""

from __future__ import annotations

import re

from cairn.agents.explorer.episode import Move
from cairn.agents.explorer.words import (
    holding,
    light_sources,
    lighting_commands,
    normalize,
    opposite,
)
from cairn.interfaces.agent import AgentView
from cairn.services.causes import DARK
from cairn.services.replies import ALREADY

SAYS_DARK = re.compile(r"\b(?:too dark|pitch (?:black|dark)|in the dark)\b", re.IGNORECASE)
"""The game's words for a room too dark to see in."""

Lessons = dict[int, list[tuple[str, int]]]
"""Rooms a darkness lesson says are dark, each with the ways in it lists (command, from)."""


class Light:
    """The light sources of one episode: the one lit, those tried and those spent."""

    def __init__(self) -> None:
        self.lit: str | None = None
        """The light source lit this episode (its noun), while it is held and gives light."""
        self._tried: set[str] = set()
        self._spent: set[str] = set()
        """Light sources that were lit and still left a dark room dark."""
        self._gate: tuple[set[str], list[str]] = (set(), [])
        """This turn's moves into a remembered dark room, and the commands that light a light."""

    def commands(self, inventory: list[str]) -> list[str]:
        """Commands that may light a carried light source, not yet tried this episode ([] when
        one is lit, or none is carried)."""
        if self.lit is not None:
            return []
        return [
            c
            for noun in light_sources(inventory)
            if noun not in self._spent
            for c in lighting_commands(noun)
            if c not in self._tried
        ]

    def into_dark(self, view: AgentView, lessons: Lessons) -> set[str]:
        """The moves from here into a room a darkness lesson says is dark, while no light is
        lit: the ways in the lesson lists from here, and moves memory says lead there."""
        here = view.observation.location_id
        if self.lit is not None or here is None:
            return set()
        moves = {
            c for room, ways in lessons.items() if room != here for c, src in ways if src == here
        }
        moves |= {
            normalize(m.via)
            for m in view.memories
            if m.via and m.leads_to is not None and m.leads_to in lessons and m.leads_to != here
        }
        return moves

    def gate(self, into_dark: set[str], to_light: list[str]) -> None:
        """This turn's moves into a dark room and the commands that may light a light."""
        self._gate = (into_dark, to_light)

    def first(self, command: str) -> str | None:
        """The command that lights a light, when `command` leads into a dark room and none is
        lit; None otherwise."""
        into_dark, to_light = self._gate
        if command in into_dark and to_light and self.lit is None:
            return to_light[0]
        return None

    def out_of_the_dark(
        self,
        view: AgentView,
        lessons: Lessons,
        to_light: list[str],
        tried: dict[str, bool],
        came: dict[int | None, str],
    ) -> Move | None:
        """In a room memory says is dark, with no light lit: light one, else leave by a way
        memory knows out of here, or back the way the player came (`came`, or a way in the
        lesson lists); None when none is known (the room is then explored as any other)."""
        if to_light:
            return Move(
                to_light[0],
                f"Trying {to_light[0]!r}: memory says this room is dark; a light first.",
            )
        here = view.observation.location_id
        known = [
            normalize(m.via)
            for m in view.memories
            if m.via and m.leads_to is not None and m.leads_to != here and m.leads_to not in lessons
        ]
        # back the way the player came, else back along a way in the lesson lists
        listed = lessons.get(here, []) if here is not None else []
        back_from = [came.get(here, ""), *(c for c, _ in listed)]
        back = [b for c in back_from if (b := opposite(c)) is not None]
        for command in dict.fromkeys([*known, *back]):
            if command and not tried.get(command, False):
                return Move(
                    command,
                    f"Trying {command!r}: memory says this room is dark and I have no light;"
                    " leaving the way I know.",
                )
        return None

    def learn(self, view: AgentView, where: int | None, command: str) -> None:
        """A light lit (or already lit), a light dropped, or a lit light that still leaves a
        room dark (it gives no light: it is spent)."""
        obs = view.observation
        words = command.split()
        lights = light_sources(obs.inventory)
        if self.lit is None and words and words[-1] in lights and command in _lit_by(words):
            self._tried.add(command)
            failed = view.tried_here.get(command, False) if where == obs.location_id else True
            if not failed or ALREADY.search(obs.text):
                self.lit = words[-1]
        if self.lit is not None and not holding(self.lit, obs.inventory):
            self.lit = None
        if self.lit is not None and DARK.search(obs.text):
            self._spent.add(self.lit)
            self.lit = None


def _lit_by(words: list[str]) -> list[str]:
    return lighting_commands(words[-1]) if len(words) > 1 else []
