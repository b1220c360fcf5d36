"""The adventurer's view of the moment: the room now, the last turn, the map near the player.

Each says its thing once: the room's own words (the game's `look`, given in the request) with
its exits and things; what the player did last and what the game answered, without the
lines the room's text already shows, then one line per turn before it; the rooms around the
player with their exits, the current room's own left out (it heads the prompt), and the
unexplored exits nearest.
"""

from __future__ import annotations

import re

from cairn.services.context.builders import (
    ContextRequest,
    Section,
    SectionBuilder,
    clip_words,
    one_line,
)
from cairn.services.context.map_builders import NearbyMapBuilder
from cairn.services.context.turn_builders import first_line, turn_place
from cairn.services.map import MapGraph, exits_in_text

_NOT_WORD = re.compile(r"[^0-9a-z]+")
_UNEXPLORED = "Unexplored exits here:"
"""The map summary's line of the current room's unexplored exits (`map.render`)."""


def _key(line: str) -> str:
    return _NOT_WORD.sub(" ", line.lower()).strip()


def _place(room: int | None, name: str) -> str:
    if room is None:
        return name or "an unknown place"
    return f"{name} (Location {room})" if name else f"Location {room}"


class RoomNowBuilder(SectionBuilder):
    """The room the player stands in: the game's own words for it (`request.room_text`, its
    `look`), then its exits as the map knows them (where each known one leads, the way back of
    a move into it that nobody took yet, those the text names and nobody took yet, those the
    game refused) and the things the game lists there."""

    default_name = "room_now"
    default_title = "The room now"
    default_priority = 1

    def __init__(
        self,
        map_graph: MapGraph | None = None,
        *,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._map = map_graph

    def build(self, request: ContextRequest) -> Section | None:
        room = request.location_id
        text = request.room_text.strip()
        if room is None and not text:
            return None
        lines = [_place(room, request.location_name)]
        head, _, rest = text.partition("\n")
        if request.location_name and head.strip() == request.location_name.strip():
            text = rest.strip()  # the game's header names the room the first line names
        if text:
            lines.append(text)
        lines.append(f"Exits: {self._exits(room, text)}")
        if request.things:
            lines.append(f"Things here: {', '.join(request.things)}")
        return self.section("\n".join(lines))

    def _exits(self, room: int | None, text: str) -> str:
        parts: list[str] = []
        if self._map is not None and room is not None:
            parts = [
                f"{action} -> {self._map.name_of(to) or 'Location'} (L{to})"
                for action, to in self._map.exits_from(room).items()
            ]
            parts += [
                f"{action} -> {self._map.name_of(to) or 'Location'} (L{to}, assumed: the way back)"
                for action, to in self._map.inferred_exits(room).items()
            ]
            untried = self._map.unexplored_exits(room)
            if untried:
                parts.append(f"not yet taken: {', '.join(untried)}")
            refused = self._map.failed_exits(room)
            if refused:
                parts.append(f"refused: {', '.join(refused)}")
        if parts:
            return "; ".join(parts)
        named = exits_in_text(text)  # a map that knows nothing of the room (or no map)
        return f"{', '.join(named)} (named in the text)" if named else "none known yet"


class LastTurnBuilder(SectionBuilder):
    """What happened last turn, once: the command, the reasoning behind it and the game's
    answer (the lines the room's text already shows left out), then one line for each of the
    `earlier` turns before it (`T{turn} @ {room}: {command} -> {first line of the answer}`).
    Before the first turn: the game's opening (`request.game_text`), the room's lines left
    out."""

    default_name = "last_turn"
    default_title = "Last turn"
    default_priority = 5

    def __init__(
        self,
        *,
        earlier: int = 5,
        max_reasoning_chars: int = 300,
        max_line_chars: int = 100,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self.earlier = earlier
        self.max_reasoning_chars = max_reasoning_chars
        self.max_line_chars = max_line_chars

    def build(self, request: ContextRequest) -> Section | None:
        shown = {_key(line) for line in request.room_text.splitlines() if _key(line)}
        if not request.recent_turns:  # before the first turn: the game's opening
            opening = self._new_lines(request.game_text, shown)
            return self.section(f"The game's opening:\n{opening}") if opening else None
        last = request.recent_turns[-1]
        said = self._new_lines(last.response, shown)
        if not said and last.response.strip():
            said = "(its answer is the room's text, shown above)"
        lines = [f"You (turn {last.turn}, at {turn_place(last)}): {one_line(last.action)}"]
        if last.reasoning.strip():
            reasoning = clip_words(one_line(last.reasoning), self.max_reasoning_chars)
            lines.append(f"Why: {reasoning}")
        lines.append(f"The game: {said}" if said else "The game said nothing.")
        before = request.recent_turns[-1 - self.earlier : -1] if self.earlier > 0 else []
        if before:
            lines.append("Before that:")
            lines += [
                f"T{t.turn} @ {turn_place(t)}: {one_line(t.action)} -> "
                f"{clip_words(one_line(first_line(t.response)), self.max_line_chars)}"
                for t in before
            ]
        return self.section("\n".join(lines))

    @staticmethod
    def _new_lines(text: str, shown: set[str]) -> str:
        """The non-blank lines of `text` that the room's section does not show already."""
        lines = text.strip().splitlines()
        return "\n".join(line.rstrip() for line in lines if _key(line) and _key(line) not in shown)


class NearMapBuilder(NearbyMapBuilder):
    """The map around the player for the adventurer: the rooms within `moves` moves with their
    exits, nearest first, and the nearest room with unexplored exits; the current room's own
    exits, known and unexplored, are left out (the room's section shows them)."""

    default_name = "map_near"
    default_title = "Map near you (location ids as in memories)"
    default_priority = 45

    def __init__(
        self,
        map_graph: MapGraph,
        *,
        moves: int = 2,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(map_graph, moves=moves, priority=priority, title=title)

    def build(self, request: ContextRequest) -> Section | None:
        here = request.location_id
        if here is None or (self._map.name_of(here) is None and not self._map.visit_count(here)):
            return None  # a room the map has not seen
        lines = self._map.nearby_summary(here, self.moves).splitlines()
        own = (f"From {self._map.name_of(here) or f'Location {here}'} ({here}):", _UNEXPLORED)
        lines = [line for line in lines if not line.startswith(own)]
        return self.section("\n".join(lines)) if lines else None
