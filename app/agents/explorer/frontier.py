"""Progress with memory: in a room memory already knows from an earlier episode, the offline
player first does again what memory says changed something here (`changes_that_worked`), then
heads for what it has not seen yet (unexplored exits, the nearest room with one, what stood in
a way known to lead on, the rooms memory says exist that it has not entered this episode)
before it tries the things of the room again; a room it meets for the first time is explored
as before (`explore.py`).

The ways it walks are those memory's move notes give (`MemoryEntry.via` and `leads_to`, of
the rooms it has been shown this episode and their neighbours) and the moves it made itself
this episode. Without memory nothing here is known from before, so the baseline is unchanged.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from cairn.agents.explorer.episode import Episode, Move
from cairn.agents.explorer.routes import route_open
from cairn.agents.explorer.rules import Bounds
from cairn.agents.explorer.words import _WORD, normalize, own_move
from cairn.interfaces.agent import AgentView
from cairn.lessons.reading import missing
from cairn.models.lesson import EffectKind
from cairn.models.memory import MemoryCategory, MemoryEntry
from cairn.services.outcomes import TAKE_VERBS, Command

_MAX_HOPS = 12
"""The longest walk to a room not entered this episode (a longer one costs more than it pays)."""


def changes_that_worked(memories: list[MemoryEntry], inventory: list[str]) -> list[str]:
    """The commands memory says changed something here (a lesson whose effect is a change:
    `turn on light`, `get out of bed`), earliest first: no move (the map has those), no take
    (a "Got" memory brings those back), none whose needed items are not held."""
    worked = [
        m
        for m in memories
        if m.category is MemoryCategory.SUCCESS
        and m.lesson is not None
        and m.lesson.effect.kind is EffectKind.CHANGED
        and not own_move(normalize(m.lesson.action))
        and Command.parse(normalize(m.lesson.action)).verb not in TAKE_VERBS
        and not missing(m, inventory)
    ]
    worked.sort(key=lambda m: (m.episode or 0, m.turn_end or 0))
    return list(dict.fromkeys(normalize(m.lesson.action) for m in worked if m.lesson))


def known_before(view: AgentView) -> bool:
    """Whether memory knows this room from an earlier episode: a memory shown here was written
    before this episode. Without memory (the baseline) never."""
    return any(m.episode is not None and m.episode < view.episode for m in view.memories)


@dataclass
class Atlas:
    """The rooms and ways the player knows this episode: memory's move notes it has been
    shown, and its own moves. Starts empty with each episode."""

    ways: dict[int, dict[str, int]] = field(default_factory=dict)
    """For each room, the moves known to lead from it, each with the room it leads to."""
    entered: set[int] = field(default_factory=set)
    """The rooms the player has been in this episode."""
    shunned: set[int] = field(default_factory=set)
    """Rooms lessons keep the player out of (a trap with no way out): never a room to head
    for."""
    dark: set[int] = field(default_factory=set)
    """Rooms a darkness lesson names (seen dark, or where the dark killed): a room to head for
    only with a light at hand (else the last step into it is held back, and a route there
    would only lead the player to and fro below it)."""
    done_at: dict[int, int] = field(default_factory=dict)
    """The turn everything in a room had been tried this episode (the player fell back on
    the least-used way out there): no room to head back for until it changes."""
    light_at_hand: bool = False
    """A light is lit, or one is carried to light (then the dark rooms are worth a visit:
    what the dark hid is unexplored)."""

    def read(self, memories: list[MemoryEntry]) -> None:
        """Learn the ways memory's move notes give (`via` from `location_id` to `leads_to`)."""
        for m in memories:
            if (
                m.via
                and m.location_id is not None
                and m.leads_to is not None
                and m.leads_to != m.location_id
                and own_move(normalize(m.via))
            ):
                self.ways.setdefault(m.location_id, {})[normalize(m.via)] = m.leads_to

    def visit(self, room: int | None) -> None:
        """The player is in `room` now."""
        if room is not None:
            self.entered.add(room)

    def moved(self, source: int | None, command: str, room: int | None) -> None:
        """`command` taken in `source` brought the player into `room` (kept when it is the
        player's own move: `take web` once carried the player off)."""
        if source is not None and room is not None and source != room and own_move(command):
            self.ways.setdefault(source, {})[command] = room

    def unentered(self) -> set[int]:
        """Rooms known to exist that the player has not been in this episode."""
        known = {r for ways in self.ways.values() for r in ways.values()}
        dark = set() if self.light_at_hand else self.dark
        return known - self.entered - self.shunned - dark

    def route(self, here: int, episode: Episode) -> tuple[str, ...] | None:
        """The shortest known walk from `here` into a room not entered this episode (breadth
        first; no step this episode found blocked), or None."""
        return self.walk(here, episode, self.unentered())

    def unfinished(self, episode: Episode) -> set[int]:
        """Rooms entered this episode where not everything has been tried yet (the player
        passed through on a route), or where the world changed since it was."""
        dark = set() if self.light_at_hand else self.dark
        return {
            r
            for r in self.entered - self.shunned - dark
            if self.done_at.get(r, -1) < episode.changed.get(r, 0)
            or r not in self.done_at
        }

    def walk(self, here: int, episode: Episode, targets: set[int]) -> tuple[str, ...] | None:
        """The shortest known walk from `here` into one of `targets` (breadth first; no step
        this episode found blocked), or None."""
        targets = targets - {here}
        if not targets:
            return None
        seen = {here}
        queue: deque[tuple[int, tuple[str, ...]]] = deque([(here, ())])
        while queue:
            room, path = queue.popleft()
            if len(path) >= _MAX_HOPS:
                continue
            for command, to in sorted(self.ways.get(room, {}).items()):
                if (room, command) in episode.blocked or to in seen:
                    continue
                if to in targets:
                    return (*path, command)
                seen.add(to)
                queue.append((to, (*path, command)))
        return None


def opener(
    episode: Episode, atlas: Atlas, here: int, nouns: list[str], bounds: Bounds
) -> Move | None:
    """`open <thing>` when a way here known to lead to a room not entered this episode was
    refused with an answer that names the thing ("You can't, since the door is in the way.")."""
    unentered = atlas.unentered()
    for command, to in sorted(atlas.ways.get(here, {}).items()):
        if to not in unentered or (here, command) not in episode.blocked:
            continue
        said = set(_WORD.findall(episode.answer.get((here, command), "").lower()))
        for noun in nouns:
            if noun in said and bounds.fresh(f"open {noun}"):
                return Move(
                    f"open {noun}",
                    f"Trying 'open {noun}': {command!r} leads on, but the {noun} was in the way.",
                )
    return None


def reopen(episode: Episode, atlas: Atlas, where: int | None, command: str, turn: int) -> None:
    """After `command` (sent at `turn`) changed something in `where`, the ways from there
    known to lead on that turned out blocked this episode may be open now (the door was in
    the way): they are no longer blocked, and the room counts as changed (`Episode.changed`),
    so that a refusal of theirs is worth another try."""
    if where is None or own_move(command) or not episode.effect.get((where, command)):
        return
    held_up = {(where, way) for way in atlas.ways.get(where, {})} & episode.blocked
    if held_up:
        episode.blocked -= held_up
        episode.changed[where] = turn


def sweep(
    view: AgentView, episode: Episode, atlas: Atlas, bounds: Bounds
) -> Move | None:
    """Everything here has been tried, in a room memory knows: rather than wander by the
    least-used way out, the walk to the nearest room entered this episode that still has
    something untried (passed through on a route) or changed since; None when there is none
    (or in a room met for the first time)."""
    here = view.observation.location_id
    if here is None or not known_before(view):
        return None
    atlas.done_at[here] = view.turn
    route = atlas.walk(here, episode, atlas.unfinished(episode))
    if route and route_open(episode, here, route, bounds):
        return Move(route[0], f"Trying {route[0]!r}: the route to a room not yet searched.", route)
    return None


def onward(
    view: AgentView, episode: Episode, atlas: Atlas, bounds: Bounds, nouns: list[str]
) -> Move | None:
    """In a room memory knows from before: an unexplored exit here, the route to the nearest
    one, then what stood in the way of a way known to lead on, then the walk to a room memory
    knows of that was not entered this episode; None in a room met for the first time, or
    when none may be taken (see the module docstring)."""
    here = view.observation.location_id
    if here is None or not known_before(view):
        return None
    opening = opener(episode, atlas, here, nouns, bounds)
    if opening is not None:
        return opening
    for command in view.unexplored_exits:
        if bounds.fresh(command) and (here, normalize(command)) not in episode.blocked:
            return Move(command, f"Trying {command!r}: an exit I have not explored.")
    for route, to in (
        (tuple(view.route_to_unexplored), "the nearest unexplored exit"),
        (atlas.route(here, episode), "a room memory knows that I have not entered yet"),
    ):
        if route and route_open(episode, here, route, bounds):
            return Move(route[0], f"Trying {route[0]!r}: the route to {to}.", route)
    return None
