"""What this episode has taught the offline player: the commands sent and what came of each (a
move that left the player in place, a change here, a thing the game says is not here, the state
a failure happened in). The state `agent.py` keeps per episode; the other modules read it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from cairn.agents.explorer.words import (
    _NO_SUCH_THING,
    _entered,
    _object_noun,
    opposite,
    unknown_word_in,
    visible_objects,
)
from cairn.interfaces.agent import AgentView
from cairn.interfaces.game import GameObservation
from cairn.models.memory import Way
from cairn.services.map import DIRECTIONS as MAP_DIRECTIONS

NO_EXIT = re.compile(
    r"\bcan'?(?:no)?t go that way\b|\bno exit\b|not a verb i recogni[sz]e|"
    r"don'?t know the word",
    re.IGNORECASE,
)
"""A refusal that says there is no way there at all (no door to open, nothing to get out of)."""
_CHANGING_VERBS = frozenset(
    ["open", "unlock", "push", "pull", "move", "turn", "light", "raise", "lower", "press", "lift"]
)
"""Verbs whose success may open a way (`open iron door`, `push button`)."""
_NO_CHANGE = re.compile(
    r"nothing (?:obvious )?happens|\bwon'?t\b|\bdoesn'?t\b|\balready\b|no effect|"
    r"not something|don'?t think|nothing (?:interesting|special)",
    re.IGNORECASE,
)
"""Replies that are no refusal but say nothing changed ("Nothing obvious happens.")."""

Here = tuple[int | None, str]
"""A command (or a noun) in a room."""
class Note(NamedTuple):
    """A memory to write: its text, its importance, whether it holds everywhere, and what it
    says as fields (`tags`: `trap:<room id>`, `way-out:<room id>`; `ways_in`: the moves that
    led into a trap), which the player reads back instead of the text."""

    text: str
    importance: int
    everywhere: bool
    tags: tuple[str, ...] = ()
    ways_in: tuple[Way, ...] = ()


class Move(NamedTuple):
    """A command chosen, why, and the route it is the first step of (if any)."""

    command: str
    reasoning: str
    route: tuple[str, ...] | None = None


@dataclass
class Episode:
    """This episode's facts, by room. Every field starts empty with each episode."""

    used: dict[Here, int] = field(default_factory=dict)
    """How often each way that worked was taken again once everything here was tried."""
    unknown_now: set[str] = field(default_factory=set)
    """Words the game said this episode it does not know."""
    last_try: dict[Here, int] = field(default_factory=dict)
    """The turn each command was last sent."""
    blocked: set[Here] = field(default_factory=set)
    """Moves and route steps that left the player in place (until the world changes here)."""
    route_uses: dict[tuple[int | None, str, tuple[str, ...]], int] = field(default_factory=dict)
    """How often each route step was taken from each room on each route."""
    dead_nouns: set[Here] = field(default_factory=set)
    """Things the game answered are not here."""
    shown_once: set[Here] = field(default_factory=set)
    revealed: set[Here] = field(default_factory=set)
    """Things the game said were not here that a later answer here showed ("You open the chest
    drawer, revealing an old key."): what failed on them may work now, once."""
    changed: dict[int | None, int] = field(default_factory=dict)
    """The turn the world (or the player's position) last changed in each room."""
    replies: dict[int | None, str] = field(default_factory=dict)
    """The game's answers to commands that left the player in each room."""
    answer: dict[Here, str] = field(default_factory=dict)
    """The game's last answer to each command here."""
    stayed: set[Here] = field(default_factory=set)
    """Moves and route steps that once left the player in place (never cleared)."""
    last: tuple[int | None, str, tuple[str, ...] | None] | None = None
    """The room, command and route of the last decision, until the next turn reads its answer."""
    sent: str = ""
    """The last command sent (the game's answer to it is the next observation)."""
    first: dict[str, str] = field(default_factory=dict)
    """This turn's ways memory says once needed a step first (`asked_first` of the game's
    answer then), with that step, while it is untried this episode."""
    known_here: set[str] = field(default_factory=set)
    """Commands the memories of the room of the last decision quote as done or as steps."""
    known_failed: set[str] = field(default_factory=set)
    """This turn's known failures here: this episode's and memory's."""
    testing_dark: set[int] = field(default_factory=set)
    """Rooms only seen dark that the player went into to test their lesson (nothing else
    was left): it stays and looks round instead of leaving."""
    into_dark_test: str | None = None
    """The command sent last turn to test a room only seen dark, if any."""
    came: dict[int | None, str] = field(default_factory=dict)
    """The move that last brought the player into each room."""
    before: tuple[frozenset[str], int | None, str] = (frozenset(), None, "")
    """The inventory, score and position when the last command was sent."""
    effect: dict[Here, bool] = field(default_factory=dict)
    """Whether a command sent here changed the game's state (its world, the inventory, the
    score, the player's position): read from the game, not from its words."""
    changes: dict[int | None, int] = field(default_factory=dict)
    """How many turns here changed the world or the player's position this episode."""
    failed_in: dict[Here, tuple[frozenset[str], int | None, int, str]] = field(
        default_factory=dict
    )
    """The state a command last failed in here: items held, score, changes here, position.
    A known failure is retried only once that state has changed (`changed_since`)."""
    retrying: set[Here] = field(default_factory=set)
    """Known failures sent again this episode (memory's, or this episode's)."""
    came_from: dict[int, tuple[int, str]] = field(default_factory=dict)
    """The room and the command that last brought the player into each room."""
    names: dict[int, str] = field(default_factory=dict)
    """The name of each room seen."""
    within: dict[int | None, list[str]] = field(default_factory=dict)
    """Compass moves that brought the player into a look-alike room with the same id (a
    maze: "In the Desert" again), since it came into that id, less those undone."""
    probed: set[int | None] = field(default_factory=set)
    """Rooms where a move memory says failed, tried again after a change, still had no way
    there: memory's other failed moves there are not tried again this episode."""

    def changed_since(self, here: int | None, command: str, obs: GameObservation) -> bool:
        """Whether the state has changed since `command` last failed here this episode: an item
        held that was not, a new score, the world changed here, or the player's position."""
        then = self.failed_in.get((here, command))
        if then is None:
            return False
        held, score, changes, context = then
        return bool(
            set(obs.inventory) - held
            or (obs.score is not None and score is not None and obs.score != score)
            or self.changes.get(here, 0) > changes
            or str(obs.location_context or "") != context
        )

    def record(self, view: AgentView, command: str, route: tuple[str, ...] | None) -> None:
        """Note `command` as sent now (from the room of `view`), as a step of `route`."""
        here = view.observation.location_id
        self.last_try[(here, command)] = view.turn
        self.last = (here, command, route)
        self.revealed.discard((here, _object_noun(command)))
        self.sent = command
        if command in self.known_failed:
            self.retrying.add((here, command))
        obs = view.observation
        self.before = (
            frozenset(obs.inventory),
            obs.score,
            str(getattr(obs, "location_context", "") or ""),
        )
        if route is not None:
            key = (here, command, route)
            self.route_uses[key] = self.route_uses.get(key, 0) + 1

    def learn(
        self, view: AgentView, where: int | None, command: str, route: tuple[str, ...] | None
    ) -> None:
        """What the answer to `command` (sent in `where`) taught: mark a move or route step
        that left the player in place as blocked; note a change that may open a way (what
        holds the player changed, `get out of bed`; or the world changed here: `open door`
        worked); note the state a failure happened in; drop a noun the game says is not here
        ("You can't see any such thing."); learn a word the game does not know."""
        obs = view.observation
        word = unknown_word_in(obs.text, command)
        if word is not None:
            self.unknown_now.add(word)
        if where != obs.location_id:
            self.within.pop(where, None)
            if command in MAP_DIRECTIONS:
                self.came[obs.location_id] = command
            if where is not None and obs.location_id is not None and not obs.died:
                self.came_from[obs.location_id] = (where, command)
            return
        self.replies[where] = f"{self.replies.get(where, '')}\n{obs.text}"
        self.answer[(where, command)] = obs.text
        if command in MAP_DIRECTIONS and _entered(obs):
            steps = self.within.setdefault(where, [])
            if steps and opposite(steps[-1]) == command:
                steps.pop()  # undone: retracing the way back
            else:
                steps.append(command)
        if (route is not None or command in MAP_DIRECTIONS) and not _entered(obs):
            self.blocked.add((where, command))
            self.stayed.add((where, command))
        failed = view.tried_here.get(command, False)
        held, score, context_before = self.before
        context = str(getattr(obs, "location_context", "") or "")
        gained = set(obs.inventory) != held
        scored = obs.score is not None and score is not None and obs.score != score
        if obs.world_changed is None:  # the game cannot say: its words decide
            acted = not failed and not _NO_CHANGE.search(obs.text)
            world = acted and command.split()[0] in _CHANGING_VERBS
        else:
            world = obs.world_changed and not gained
        moved_self = context != context_before
        self.effect[(where, command)] = bool(world or gained or scored or moved_self)
        if moved_self or (world and command not in self.known_here):
            # out of a bed, or a door opened: moves that failed here before may work now (not
            # after a change memory knows of here: its failures were likely met after it too)
            self.changed[where] = view.turn - 1
            self.changes[where] = self.changes.get(where, 0) + 1
            self.blocked = {(loc, c) for loc, c in self.blocked if loc != where}
        if failed:
            self.failed_in[(where, command)] = (
                frozenset(obs.inventory),
                obs.score,
                self.changes.get(where, 0),
                context,
            )
            if (
                (where, command) in self.retrying
                and command in MAP_DIRECTIONS
                and NO_EXIT.search(obs.text)
            ):
                # a failed move tried again after a change still has no way there: so, likely,
                # have the others memory lists here
                self.probed.add(where)
        noun = _object_noun(command)
        if failed and noun is not None and _NO_SUCH_THING.search(obs.text):
            self.dead_nouns.add((where, noun))
        elif self.effect[(where, command)]:
            # what changed the world here shows a thing ("You open the chest drawer, revealing an
            # old key."): a thing the game said was not here is worth another try, once
            shown = set(visible_objects(obs.text))
            for loc, thing in list(self.dead_nouns):
                if loc == where and thing in shown and (loc, thing) not in self.shown_once:
                    self.dead_nouns.discard((loc, thing))
                    self.revealed.add((loc, thing))
                    self.shown_once.add((loc, thing))
