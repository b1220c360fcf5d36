"""What the offline player may send this turn: memory's failures and dangers (minus those a
change has made stale), the rooms lessons keep it out of (traps, where it died), the commands
tried here worth another go, and the checks every candidate passes (`Bounds`)."""

from __future__ import annotations

from dataclasses import dataclass

from cairn.agents.explorer.episode import NO_EXIT, Episode
from cairn.agents.explorer.lessons import unknown_ways_where_died, ways_into
from cairn.agents.explorer.words import (
    _FIXED_VERBS,
    DIRECTIONS,
    _object_noun,
    holding,
    names_way,
    normalize,
    remembered_dangers,
    remembered_failures,
    tool_of,
)
from cairn.interfaces.agent import AgentView


class Staleness:
    """Which failures a change has made worth another try: after getting out of the bed or
    opening a door, moves that failed before may work now: this episode's, unless the game said
    there is no way there at all; memory's, when what the player has seen here names the way,
    until one of them, tried again here, still found no way there (`Episode.probed`)."""

    def __init__(self, view: AgentView, episode: Episode) -> None:
        self._view = view
        self._episode = episode
        obs = view.observation
        self._here = obs.location_id
        self.mentioned = f"{view.room_text}\n{obs.text}".lower()
        """What the player has seen here: the room's text and the game's last answer."""
        # A remembered failure may be stale: it may have been for lack of an item we now hold,
        # or about a thing something has just changed (`open door` after `unlock door`): a
        # command that changed the game's state, not one the game merely did not refuse.
        # A change memory already knows of here (a step of a remembered procedure) is no news:
        # the failures memory lists were likely met after it too.
        self._changed = {
            _object_noun(c)
            for c, failed in view.tried_here.items()
            if not failed
            and c.split()[0] not in _FIXED_VERBS
            and episode.effect.get((self._here, c), True)
            and c not in episode.known_here
        } - {None}

    def moved_on(self, command: str) -> bool:
        """Whether a move that failed here may work now (see the class docstring)."""
        here, episode = self._here, self._episode
        changed_at = episode.changed.get(here)
        if (
            changed_at is None
            or command not in DIRECTIONS
            or episode.last_try.get((here, command), -1) >= changed_at
        ):
            return False
        if command not in self._view.tried_here:  # memory's failure
            return (
                here not in episode.probed
                # in or on something, a move waits until the player is out
                and not str(self._view.observation.location_context or "")
                and names_way(command, self.mentioned)
            )
        return not NO_EXIT.search(episode.answer.get((here, command), ""))

    def stale(self, command: str) -> bool:
        """Whether a failure memory lists here may work now: its tool is held, a move the
        room has since changed for, a thing the game has since shown, a thing since changed."""
        tool = tool_of(command)
        inventory = self._view.observation.inventory
        if (tool is not None and holding(tool, inventory)) or self.moved_on(command):
            return True
        if (self._here, _object_noun(command)) in self._episode.revealed:
            return True  # the game has since shown the thing it said was not here
        return _object_noun(command) in self._changed and command.split()[0] not in _FIXED_VERBS

    def failures(self) -> tuple[set[str], set[str]]:
        """Memory's failures here that are not stale, and its dangers."""
        memories = self._view.memories
        dangers = remembered_dangers(memories)
        return {c for c in remembered_failures(memories) if not self.stale(c)} - dangers, dangers


def kept_out(
    view: AgentView, dangers: set[str], traps: dict[int, list[tuple[str, int]]]
) -> set[str]:
    """`dangers`, plus the ways into a room no way out of was found (`traps`) and, where memory
    says the player died and blames no command, the ways memory does not know lead on."""
    here = view.observation.location_id
    dangers = dangers | ways_into(view.memories, here, traps)  # no way out found there
    return dangers | unknown_ways_where_died(
        [*view.world_notes, *view.memories], view.memories, here, dangers
    )


@dataclass(frozen=True)
class Bounds:
    """This turn's limits: what was tried here (minus what is worth another go), what to
    avoid, memory's live failures and dangers, the words the game does not know."""

    tried: dict[str, bool]
    retry: set[str]
    avoid: set[str]
    failures: set[str]
    dangers: set[str]
    unknown: set[str]
    inventory: list[str]
    mentioned: str

    def usable(self, command: str) -> bool:
        """No word the game does not know, nothing held taken again, a tool that is held."""
        words = normalize(command).split()
        if not words or self.unknown & set(words):
            return False
        if words[0] == "take" and len(words) > 1 and holding(words[-1], self.inventory):
            return False  # held already: taking it again does nothing
        tool = tool_of(" ".join(words))
        return tool is None or holding(tool, self.inventory)

    def fresh(self, command: str) -> bool:
        """Usable, not tried here this episode, and not to be avoided."""
        c = normalize(command)
        return self.usable(c) and c not in self.tried and c not in self.avoid


def bounds(
    view: AgentView,
    episode: Episode,
    staleness: Staleness,
    failures: set[str],
    dangers: set[str],
    unknown: set[str],
) -> Bounds:
    """The turn's `Bounds`: the commands tried here that a change made worth another go are
    taken out of what was tried."""
    here = view.observation.location_id
    retry = {
        c
        for c, failed in view.tried_here.items()
        if (failed or (here, c) in episode.stayed)
        and (staleness.moved_on(c) or (here, _object_noun(c)) in episode.revealed)
    } - dangers
    tried = {c: failed for c, failed in view.tried_here.items() if c not in retry}
    avoid = {a for a, failed in tried.items() if failed} | failures | dangers
    return Bounds(
        tried=tried,
        retry=retry,
        avoid=avoid,
        failures=failures,
        dangers=dangers,
        unknown=unknown,
        inventory=view.observation.inventory,
        mentioned=staleness.mentioned,
    )
