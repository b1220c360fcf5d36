"""Rooms with no way out, as the offline player notes them: a note once every move from a room
has failed (with the ways in, so that it is not entered again), and a note when the player
finds a way out of a room known as a trap."""

from __future__ import annotations

from cairn.agents.explorer.episode import Episode, Note
from cairn.agents.explorer.trap_notes import (
    TRAP_TAG,
    WAY_OUT_TAG,
    trap_note,
    trap_rooms,
    way_out_note,
)
from cairn.agents.explorer.words import DIRECTIONS, _Check, own_move
from cairn.interfaces.agent import AgentView
from cairn.models.memory import Way
from cairn.services.causes import WayIn
from cairn.services.map import DIRECTIONS as MAP_DIRECTIONS


class Traps:
    """The traps of one episode: those noted, those known, and a way-out note to write."""

    def __init__(self) -> None:
        self._noted: set[int] = set()
        """Rooms noted this episode as traps (`trap_note`)."""
        self._known: set[int] = set()
        """Rooms the player knows as traps (noted, or memory's notes it has seen)."""
        self._way_out: Note | None = None
        """A note to write: the player left a room known as a trap (`way_out_note`)."""

    def seen(self, rooms: dict[int, list[tuple[str, int]]], here: int | None) -> None:
        """Memory's trap notes shown here: the room is known as a trap if one names it."""
        self._known |= rooms.keys() & {here}

    def way_out(self) -> Note | None:
        """The way-out note to write, once."""
        note, self._way_out = self._way_out, None
        return note

    def learn(
        self, view: AgentView, episode: Episode, where: int | None, command: str
    ) -> None:
        """The player left `where` by `command`: a way out, if it was known as a trap."""
        obs = view.observation
        if (
            where is not None
            and where != obs.location_id
            and obs.location_id is not None
            and not obs.died
            and where in self._known
            and own_move(command)
        ):
            self._known.discard(where)
            name = episode.names.get(where, "")
            text = way_out_note(name, where, command, view.episode, view.turn - 1)
            self._way_out = Note(text, 900, False, tags=(f"{WAY_OUT_TAG}{where}",))

    def note(
        self, view: AgentView, episode: Episode, usable: _Check, failures: set[str]
    ) -> Note | None:
        """A note that no way out of here was found, once per room and episode, when every
        move here has failed (this episode, or as memory says) and none moved the player; None
        when memory says so already."""
        here = view.observation.location_id
        if here is None or here in self._noted or here in trap_rooms(view.memories):
            return None
        tried = view.tried_here
        if any(
            not failed and (here, c) not in episode.blocked
            for c, failed in tried.items()
            if c in MAP_DIRECTIONS
        ):
            return None  # a move here worked this episode
        if not all(tried.get(d) or d in failures or not usable(d) for d in DIRECTIONS):
            return None
        self._noted.add(here)
        self._known.add(here)
        ways: list[WayIn] = []
        came = episode.came_from.get(here)
        while came is not None and len(ways) < 2:
            source, command = came
            ways.append(WayIn(command, source, episode.names.get(source, "")))
            # carried off (by a guard, a trap, a spell), not walked in: what led there began in
            # the room before, so the way into that room is a way in too
            came = None if own_move(command) else episode.came_from.get(source)
        name = view.observation.location_name or episode.names.get(here, "")
        text = trap_note(name, here, ways, view.episode, view.turn)
        typed = tuple(
            Way(command=w.command, source=w.source, source_name=w.source_name) for w in ways
        )
        return Note(text, 900, False, tags=(f"{TRAP_TAG}{here}",), ways_in=typed)
