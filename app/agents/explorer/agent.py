"""ExplorerAgent: the offline, deterministic player. HEURISTICS, not a model.

Per turn, in this order, it takes the first command it has not tried at this location in
this episode and that memory does not mark as a failure or a danger:
1. remembered procedures here (SUCCESS memories: the quoted commands and their "Steps first");
2. what the game just asked for ("You'll have to get out of the bed first." -> that command);
3. the next step of the route the session gives it (to an objective), unless that step has
   turned out blocked this episode (it did not move the player, or it keeps bringing the player
   back over the same ground): a blocked step is marked and exploring resumes;
4. the things in the room (`take`, `open`, `unlock ... with <key>`): the game's own object
   names (`objects`) first, then nouns guessed from the game's replies to commands here
   ("You open the chest, revealing a key."), never from a room description alone (that made
   `open library`, `take first`); a noun is dropped once the game answers there is no such
   thing here;
5. unexplored exits the map knows here, the route to the nearest one, then compass directions
   in a seeded order;
6. when everything here has been tried, a direction that moved the player before (the least
   used one; a move that left the player in place is no way out);
7. when no direction has worked here (a trap, a bed, a dark room): `turn on light` in the dark,
   ways out of a position (`stand up`, `out`), a few verbs on what is here and what is carried,
   then the moves memory says failed here (they may have been blocked only for a while; never a
   remembered danger), then the failed or blocked command here tried longest ago, at most once
   every ten turns. `look` only when even that was tried moments ago.

Lessons come first (`causes`): in a room a darkness lesson says is dark, with no light lit this
episode, it lights a carried light source (`turn on`, then `light`) or else leaves by a way
memory knows out of it (or back the way it came), never trying an untried direction in the
dark; a move a darkness lesson (shown here or for a room next door) lists as a way into a dark
room waits for a lit light: it lights one first, and with none it is not taken. A procedure
whose needed items are not held is not replayed (`preconditions`).

Once what holds the player changes (`location_context`: out of the bed) or something here was
opened, unlocked, pushed..., moves that failed before in this room are tried again (memory's
too), except those the game answered there is no way that way. Commands are compared as the
session records them (lower case, single spaces, no stray symbols).

Commands are read out of memory text by quoting convention (`'open window'`), which the offline
synthesizer always uses and LLM memories often do. A FAILURE memory may list several commands
(`Tried here, did not work: 'take window', 'break window'.`): all of them are failures; a
DANGER memory marks its first quoted command. With `--no-memory` the session passes no
memories, so only the episode's own history steers it: that is the baseline.
"""

from __future__ import annotations

import random
import re

from cairn.agents.explorer.words import (
    _FIXED_VERBS,
    _NO_SUCH_THING,
    _UNKNOWN_WORD,
    DIRECTIONS,
    _Check,
    _entered,
    _noun,
    _object_noun,
    asked_first,
    dark_rooms,
    game_object_nouns,
    head_noun,
    holding,
    light_sources,
    lighting_commands,
    normalize,
    object_commands,
    opposite,
    remembered_dangers,
    remembered_failures,
    remembered_procedures,
    tool_of,
    unknown_words,
    visible_objects,
)
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.services.causes import DARK
from cairn.services.map import DIRECTIONS as MAP_DIRECTIONS
from cairn.services.replies import ALREADY

_DARK = re.compile(r"\b(?:too dark|pitch (?:black|dark)|in the dark)\b", re.IGNORECASE)
_NO_EXIT = re.compile(
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
_ESCAPES = ("stand up", "get up", "out", "exit", "in")
"""Ways out of a position (a bed, a chair, a vehicle) tried when no direction works here."""
_THING_VERBS = ("examine", "push", "pull", "climb", "enter")
_CARRIED_VERBS = ("turn on", "wear", "read")
_ROUTE_REPEATS = 3
"""A route step taken this often from the same room on the same route is a loop: blocked."""
_RETRY_AFTER = 10
"""Turns before a failure of this episode is tried again when nothing else is left here."""


class ExplorerAgent(IAgent):
    """The offline player (see the module docstring). Deterministic for a given seed."""

    def __init__(self, seed: int = 0) -> None:
        self._seed = seed
        self._rng = random.Random(seed)
        self._noted: set[str] = set()
        self._new_episode_state()

    def _new_episode_state(self) -> None:
        self._used: dict[tuple[int | None, str], int] = {}
        self._unknown_now: set[str] = set()
        self._last_try: dict[tuple[int | None, str], int] = {}
        self._blocked: set[tuple[int | None, str]] = set()
        self._route_uses: dict[tuple[int | None, str, tuple[str, ...]], int] = {}
        self._dead_nouns: set[tuple[int | None, str]] = set()
        self._changed: dict[int | None, int] = {}
        self._replies: dict[int | None, str] = {}
        self._answer: dict[tuple[int | None, str], str] = {}
        self._stayed: set[tuple[int | None, str]] = set()
        self._last: tuple[int | None, str, tuple[str, ...] | None] | None = None
        self._context = ""
        self._lit: str | None = None
        """The light source lit this episode (its noun), while it is held and gives light."""
        self._light_tried: set[str] = set()
        self._spent: set[str] = set()
        """Light sources that were lit and still left a dark room dark."""
        self._came: dict[int | None, str] = {}
        """The move that last brought the player into each room."""
        self._gate: tuple[set[str], list[str]] = (set(), [])
        """This turn's moves into a remembered dark room, and the commands that light a light."""

    def new_episode(self, episode: int) -> None:
        self._rng = random.Random(self._seed * 1000 + episode)
        self._new_episode_state()

    def decide(self, view: AgentView) -> AgentDecision:
        tried = view.tried_here
        obs = view.observation
        here = obs.location_id
        self._learn_from_last_turn(view)
        # A remembered failure may be stale: it may have been for lack of an item we now hold,
        # or about a thing something has just worked on (`open door` after `unlock door`).
        changed = {
            _noun(c)
            for c, failed in tried.items()
            if not failed and c.split()[0] not in _FIXED_VERBS
        } - {None}

        # After getting out of the bed or opening a door, moves that failed before may work now.
        changed_at = self._changed.get(here)

        def moved_on(command: str) -> bool:
            return (
                changed_at is not None
                and command in DIRECTIONS
                and self._last_try.get((here, command), -1) < changed_at
                and not _NO_EXIT.search(self._answer.get((here, command), ""))
            )

        def stale(command: str) -> bool:
            tool = tool_of(command)
            if (tool is not None and holding(tool, obs.inventory)) or moved_on(command):
                return True
            return _noun(command) in changed and command.split()[0] not in _FIXED_VERBS

        dangers = remembered_dangers(view.memories)
        failures = {c for c in remembered_failures(view.memories) if not stale(c)} - dangers
        lessons = dark_rooms([*view.memories, *view.nearby])
        to_light = self._lighting(obs.inventory)
        into_dark = self._into_dark(view, lessons)
        self._gate = (into_dark, to_light)
        if here in lessons and self._lit is None:
            leave = self._out_of_the_dark(view, lessons, to_light, tried)
            if leave is not None:
                return leave
        if not to_light:
            dangers = dangers | into_dark  # no light to light: the dark room is not entered
        retry = {
            c
            for c, failed in tried.items()
            if (failed or (here, c) in self._stayed) and moved_on(c)
        } - dangers
        tried = {c: failed for c, failed in tried.items() if c not in retry}
        avoid = {a for a, failed in tried.items() if failed} | failures | dangers
        said = _UNKNOWN_WORD.search(obs.text)
        if said:
            self._unknown_now.add(said.group(1).lower())
        note = self._unknown_word_note(view)
        unknown = unknown_words(view.world_notes) | self._unknown_now

        def usable(command: str) -> bool:
            words = normalize(command).split()
            if not words or unknown & set(words):
                return False
            tool = tool_of(" ".join(words))
            return tool is None or holding(tool, obs.inventory)

        def fresh(command: str) -> bool:
            c = normalize(command)
            return usable(c) and c not in tried and c not in avoid

        nouns = self._nouns_here(view)
        route = tuple(view.route_to_target)
        asked = asked_first(obs.text)
        candidates: list[tuple[str, str]] = [
            *(
                (c, "a procedure memory recorded here")
                for c in remembered_procedures(view.memories, obs.inventory)
            ),
            *([(asked, "what the game asked for first")] if asked else []),
        ]
        for command, why in candidates:
            if fresh(command):
                return self._decision(view, command, f"Trying {command!r}: {why}.", note)
        if route and self._route_open(here, route, avoid, usable):
            return self._decision(
                view, route[0], f"Trying {route[0]!r}: the route to my objective.", note, route
            )
        candidates = [
            *(
                (c, "something I can see here")
                for c in object_commands(f"{view.room_text}\n{obs.text}", obs.inventory, nouns)
            ),
            *((d, "an exit I have not explored") for d in view.unexplored_exits),
        ]
        for command, why in candidates:
            if fresh(command):
                return self._decision(view, command, f"Trying {command!r}: {why}.", note)
        nearest = tuple(view.route_to_unexplored)
        if nearest and self._route_open(here, nearest, avoid, usable):
            return self._decision(
                view,
                nearest[0],
                f"Trying {nearest[0]!r}: the route to the nearest unexplored exit.",
                note,
                nearest,
            )
        directions = list(DIRECTIONS)
        self._rng.shuffle(directions)
        mentioned = f"{view.room_text}\n{obs.text}".lower()
        # first a way seen held up that may be open now, then ways the room text mentions
        held = {c for c in retry if (here, c) in self._answer}
        directions.sort(key=lambda d: (d not in held, re.search(rf"\b{d}\b", mentioned) is None))
        for direction in directions:
            if fresh(direction):
                return self._decision(view, direction, f"Trying {direction}: untried here.", note)
        worked = [
            a
            for a, failed in tried.items()
            if not failed and a in DIRECTIONS and (here, a) not in self._blocked
            and a not in dangers
        ]
        if worked:
            command = min(worked, key=lambda d: (self._used.get((here, d), 0), directions.index(d)))
            self._used[(here, command)] = self._used.get((here, command), 0) + 1
            return self._decision(
                view, command, "Everything here has been tried; the least-used way out.", note
            )
        return self._when_stuck(view, nouns, fresh, usable, failures, dangers, note)

    # -- when nothing here has worked -----------------------------------------------------------

    def _when_stuck(
        self,
        view: AgentView,
        nouns: list[str],
        fresh: _Check,
        usable: _Check,
        failures: set[str],
        dangers: set[str],
        note: tuple[str, int, bool] | None,
    ) -> AgentDecision:
        """No direction has worked here this episode: try ways out, then stale memories."""
        obs = view.observation
        carried = list(dict.fromkeys(n for item in obs.inventory if (n := head_noun(item))))
        dark = _DARK.search(f"{view.room_text}\n{obs.text}") is not None
        tries = [
            *(["turn on light"] if dark else []),
            *_ESCAPES,
            *(f"{verb} {noun}" for noun in nouns for verb in _THING_VERBS),
            *(f"{verb} {item}" for item in carried for verb in _CARRIED_VERBS),
        ]
        for command in tries:
            if fresh(command):
                return self._decision(
                    view, command, f"Trying {command!r}: no way out of here has worked.", note
                )
        tried = view.tried_here
        for command in sorted(failures & set(MAP_DIRECTIONS)):
            if command not in tried and usable(command):
                return self._decision(
                    view,
                    command,
                    f"Trying {command!r}: memory says it failed here, but it may have been"
                    " blocked only for a while.",
                    note,
                )
        here = obs.location_id
        never = -_RETRY_AFTER
        again = [
            c
            for c, failed in tried.items()
            if (failed or (here, c) in self._blocked)
            and c not in dangers
            and usable(c)
            and view.turn - self._last_try.get((here, c), never) >= _RETRY_AFTER
        ]
        if again:
            command = min(again, key=lambda c: self._last_try.get((here, c), never))
            return self._decision(
                view, command, f"Trying {command!r} again: it failed a while ago.", note
            )
        return self._decision(view, "look", "Nothing here works; looking again.", note)

    # -- what the last turn taught -------------------------------------------------------------

    def _learn_from_last_turn(self, view: AgentView) -> None:
        """Mark a move or route step that left the player in place as blocked; note a change
        that may open a way (what holds the player changed, `get out of bed`; or `open door`
        worked); drop a noun the game says is not here ("You can't see any such thing.")."""
        if self._last is None:
            return
        where, command, route = self._last
        self._last = None
        obs = view.observation
        self._learn_light(view, where, command)
        if where != obs.location_id:
            if command in MAP_DIRECTIONS:
                self._came[obs.location_id] = command
            return
        self._replies[where] = f"{self._replies.get(where, '')}\n{obs.text}"
        self._answer[(where, command)] = obs.text
        if (route is not None or command in MAP_DIRECTIONS) and not _entered(obs):
            self._blocked.add((where, command))
            self._stayed.add((where, command))
        failed = view.tried_here.get(command, False)
        context = str(getattr(obs, "location_context", "") or "")
        worked = not failed and not _NO_CHANGE.search(obs.text)
        if context != self._context or (worked and command.split()[0] in _CHANGING_VERBS):
            # out of a bed, or a door opened: moves that failed here before may work now
            self._changed[where] = view.turn - 1
            self._blocked = {(loc, c) for loc, c in self._blocked if loc != where}
        noun = _object_noun(command)
        if failed and noun is not None and _NO_SUCH_THING.search(obs.text):
            self._dead_nouns.add((where, noun))

    # -- lessons: a dark room ------------------------------------------------------------------

    def _lighting(self, inventory: list[str]) -> list[str]:
        """Commands that may light a carried light source, not yet tried this episode ([] when
        one is lit, or none is carried)."""
        if self._lit is not None:
            return []
        return [
            c
            for noun in light_sources(inventory)
            if noun not in self._spent
            for c in lighting_commands(noun)
            if c not in self._light_tried
        ]

    def _into_dark(self, view: AgentView, lessons: dict[int, list[tuple[str, int]]]) -> set[str]:
        """The moves from here into a room a darkness lesson says is dark, while no light is
        lit: the ways in the lesson lists from here, and moves memory says lead there."""
        here = view.observation.location_id
        if self._lit is not None or here is None:
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

    def _out_of_the_dark(
        self,
        view: AgentView,
        lessons: dict[int, list[tuple[str, int]]],
        to_light: list[str],
        tried: dict[str, bool],
    ) -> AgentDecision | None:
        """In a room memory says is dark, with no light lit: light one, else leave by a way
        memory knows out of here, or back the way the player came (or a way in the lesson
        lists); None when none is known (the room is then explored as any other)."""
        if to_light:
            return self._decision(
                view,
                to_light[0],
                f"Trying {to_light[0]!r}: memory says this room is dark; a light first.",
                None,
            )
        here = view.observation.location_id
        known = [
            normalize(m.via)
            for m in view.memories
            if m.via and m.leads_to is not None and m.leads_to != here and m.leads_to not in lessons
        ]
        # back the way the player came, else back along a way in the lesson lists
        listed = lessons.get(here, []) if here is not None else []
        came = [self._came.get(here, ""), *(c for c, _ in listed)]
        back = [b for c in came if (b := opposite(c)) is not None]
        for command in dict.fromkeys([*known, *back]):
            if command and not tried.get(command, False):
                return self._decision(
                    view,
                    command,
                    f"Trying {command!r}: memory says this room is dark and I have no light;"
                    " leaving the way I know.",
                    None,
                )
        return None

    def _learn_light(self, view: AgentView, where: int | None, command: str) -> None:
        """A light lit (or already lit), a light dropped, or a lit light that still leaves a
        room dark (it gives no light: it is spent)."""
        obs = view.observation
        words = command.split()
        lights = light_sources(obs.inventory)
        if self._lit is None and words and words[-1] in lights and command in self._lit_by(words):
            self._light_tried.add(command)
            failed = view.tried_here.get(command, False) if where == obs.location_id else True
            if not failed or ALREADY.search(obs.text):
                self._lit = words[-1]
        if self._lit is not None and not holding(self._lit, obs.inventory):
            self._lit = None
        if self._lit is not None and DARK.search(obs.text):
            self._spent.add(self._lit)
            self._lit = None

    @staticmethod
    def _lit_by(words: list[str]) -> list[str]:
        return lighting_commands(words[-1]) if len(words) > 1 else []

    def _route_open(
        self,
        here: int | None,
        route: tuple[str, ...],
        avoid: set[str],
        usable: _Check,
    ) -> bool:
        """Whether the first step of `route` may be taken: not failed, remembered bad, blocked
        this episode, nor taken so often from here on this route that it is a loop."""
        step = route[0]
        return (
            step not in avoid
            and usable(step)
            and (here, step) not in self._blocked
            and self._route_uses.get((here, step, route), 0) < _ROUTE_REPEATS
        )

    def _nouns_here(self, view: AgentView) -> list[str]:
        """The game's names for the things here first, then nouns guessed from its replies to
        commands here ("You open the chest, revealing a key."), never from room descriptions
        alone; minus those the game has answered are not here."""
        obs = view.observation
        here = obs.location_id
        guessed = visible_objects(self._replies.get(here, ""))
        nouns = list(dict.fromkeys([*game_object_nouns(obs), *guessed]))
        return [n for n in nouns if (here, n) not in self._dead_nouns]

    def _unknown_word_note(self, view: AgentView) -> tuple[str, int, bool] | None:
        """A world note when the game says it does not know a word (true everywhere).

        Failed commands are not noted: the memory service keeps them (one FAILURE memory per
        room and object).
        """
        unknown = _UNKNOWN_WORD.search(view.observation.text)
        if unknown is None:
            return None
        word = unknown.group(1).lower()
        if word in unknown_words(view.world_notes) or word in self._noted:
            return None
        self._noted.add(word)
        return (f"The game does not know the word '{word}'.", 400, True)

    def _decision(
        self,
        view: AgentView,
        command: str,
        reasoning: str,
        note: tuple[str, int, bool] | None,
        route: tuple[str, ...] | None = None,
    ) -> AgentDecision:
        here = view.observation.location_id
        command = normalize(command) or "look"
        into_dark, to_light = self._gate
        if command in into_dark and to_light and self._lit is None:
            reasoning = (
                f"Trying {to_light[0]!r}: {command!r} leads into a room memory says is dark;"
                " a light first."
            )
            command, route = to_light[0], None
        self._last_try[(here, command)] = view.turn
        self._last = (here, command, route)
        self._context = str(getattr(view.observation, "location_context", "") or "")
        if route is not None:
            key = (here, command, route)
            self._route_uses[key] = self._route_uses.get(key, 0) + 1
        return AgentDecision(
            action=command,
            reasoning=reasoning,
            remember=note[0] if note else None,
            importance=note[1] if note else 500,
            remember_everywhere=note[2] if note else False,
        )

