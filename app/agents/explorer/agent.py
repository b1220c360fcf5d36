"""ExplorerAgent: the offline, deterministic player. HEURISTICS, not a model.

Per turn, in this order, it takes the first command it has not tried at this location in
this episode and that memory does not mark as a failure or a danger:
1. remembered procedures here (SUCCESS memories: the quoted commands and their "Steps first");
   a take (a "Got" memory's item, by its noun, or a score's take) only once the thing is in
   sight here and not held;
2. the answer when the game asks which thing was meant ("Which do you mean, the yellow apple or
   the green apple?": any other command would be read as the answer), then what the game just
   asked for ("You'll have to get out of the bed first." -> that command);
3. the next step of the route the session gives it (to an objective), unless that step has
   turned out blocked this episode (it did not move the player, or it keeps bringing the player
   back over the same ground) or is no move of the player's own (`take web` once carried the
   player off): a blocked step is marked and exploring resumes;
4. the things in the room (`take`, `open`, `unlock ... with <key>`): the game's own object
   names (`objects`) first, then nouns guessed from the game's replies to commands here
   ("You open the chest, revealing a key."), never from a room description alone (that made
   `open library`, `take first`); a noun is dropped once the game answers there is no such
   thing here, and tried again once, when a later change here shows it;
5. unexplored exits the map knows here, the route to the nearest one, then compass directions
   in a seeded order;
6. when everything here has been tried, a direction that moved the player before (the least
   used one; a move that left the player in place is no way out);
7. when no direction has worked here (a trap, a bed, a dark room), something genuinely new:
   `turn on light` in the dark, ways out of a position (`stand up`, `out`), then (noting the room
   as a trap, once, when every move and way out failed: `words.trap_note`) untried verbs on what
   is here, on what the room's text names, on what is carried; then a failure of this episode
   whose state has changed since it failed (an item held that was not, a new score, the world
   changed here, the player's position); only then the moves memory says failed here (they may
   have been blocked only for a while) and this episode's failure tried longest ago, at most
   once every ten turns. `look` only when even that was tried moments ago.

Lessons come first (`causes`): in a room a darkness lesson says is dark, with no light lit this
episode, it lights a carried light source (`turn on`, then `light`) or else leaves by a way
memory knows out of it (or back the way it came), never trying an untried direction in the
dark; a move a darkness lesson (shown here or for a room next door) lists as a way into a dark
room waits for a lit light: it lights one first, and with none it is not taken. Wherever the
game says it is dark, a carried light is lit first. A room the player noted it found no way out
of is not entered by the ways in the note lists (nor by moves memory says lead there), until a
note says a way out was found. In a room where memory says the player died and blames no
command, only ways memory knows lead on are taken. A way memory says once answered "You have to
open the gate first." gets that step first. A procedure whose needed items are not held is not
replayed (`preconditions`).

A change is read from the game's state, not its words (`GameObservation.world_changed`, the
inventory, the score, `location_context`; the words only when the game cannot say): "You must
tell me how to do that to a pile of leaves." changes nothing. Once what holds the player
changes (out of the bed) or the world changes here by a command memory does not already know
here, moves that failed before in this room may work again: this episode's, unless the game
answered there is no way that way; memory's, only those the room's words name as a way ("a
door to the south"), never while the player is in or on something, and until one of them,
tried again, still finds no way there. A thing changed the same way makes memory's failures on
it worth a try. Words the game does not know ("I don't know the word 'x'", "That's not a verb I
recognise.") are noted once and never sent again. Commands are compared as the session records
them (lower case, single spaces, no stray symbols).

Commands are read out of memory text by quoting convention (`'open window'`), which the offline
synthesizer always uses and LLM memories often do. A FAILURE memory may list several commands
(`Tried here, did not work: 'take window', 'break window'.`): all of them are failures; a
DANGER memory marks its first quoted command. With `--no-memory` the session passes no
memories, so only the episode's own history steers it: that is the baseline.
"""

from __future__ import annotations

import random
import re

from cairn.agents.explorer.lessons import (
    known_commands,
    steps_first,
    unknown_ways_where_died,
    ways_into,
)
from cairn.agents.explorer.words import (
    _FIXED_VERBS,
    _NO_SUCH_THING,
    DIRECTIONS,
    _Check,
    _entered,
    _object_noun,
    asked_first,
    dark_rooms,
    game_object_nouns,
    holding,
    light_sources,
    lighting_commands,
    names_way,
    normalize,
    object_commands,
    opposite,
    own_move,
    remembered_dangers,
    remembered_failures,
    remembered_procedures,
    thing_noun,
    tool_of,
    trap_note,
    trap_rooms,
    unknown_word_in,
    unknown_words,
    visible_objects,
    way_out_note,
    which_one,
)
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.interfaces.game import GameObservation
from cairn.services.causes import DARK, WayIn
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
_THING_VERBS = (
    "examine", "push", "pull", "climb", "enter", "search", "look under", "move", "turn",
    "touch", "open", "shake", "rub", "smell", "listen to", "knock on",
)
"""Verbs tried on the things here when no direction works here: English verbs most games
know, none that destroys, eats or attacks (a new verb is something genuinely new to try)."""
_CARRIED_VERBS = (
    "turn on", "wear", "read", "examine", "open", "wave", "shake", "rub", "squeeze", "light",
)
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
        self._shown_once: set[tuple[int | None, str]] = set()
        self._revealed: set[tuple[int | None, str]] = set()
        """Things the game said were not here that a later answer here showed ("You open the
        chest drawer, revealing an old key."): what failed on them may work now, once."""
        self._changed: dict[int | None, int] = {}
        self._replies: dict[int | None, str] = {}
        self._answer: dict[tuple[int | None, str], str] = {}
        self._stayed: set[tuple[int | None, str]] = set()
        self._last: tuple[int | None, str, tuple[str, ...] | None] | None = None
        self._sent = ""
        """The last command sent (the game's answer to it is the next observation)."""
        self._first: dict[str, str] = {}
        """This turn's ways memory says once needed a step first (`asked_first` of the game's
        answer then), with that step, while it is untried this episode."""
        self._known_here: set[str] = set()
        """Commands the memories of the room of the last decision quote as done or as steps."""
        self._known_failed: set[str] = set()
        """This turn's known failures here: this episode's and memory's."""
        self._lit: str | None = None
        """The light source lit this episode (its noun), while it is held and gives light."""
        self._light_tried: set[str] = set()
        self._spent: set[str] = set()
        """Light sources that were lit and still left a dark room dark."""
        self._came: dict[int | None, str] = {}
        """The move that last brought the player into each room."""
        self._gate: tuple[set[str], list[str]] = (set(), [])
        """This turn's moves into a remembered dark room, and the commands that light a light."""
        self._before: tuple[frozenset[str], int | None, str] = (frozenset(), None, "")
        """The inventory, score and position when the last command was sent."""
        self._effect: dict[tuple[int | None, str], bool] = {}
        """Whether a command sent here changed the game's state (its world, the inventory, the
        score, the player's position): read from the game, not from its words."""
        self._changes: dict[int | None, int] = {}
        """How many turns here changed the world or the player's position this episode."""
        self._failed_in: dict[tuple[int | None, str], tuple[frozenset[str], int | None, int, str]]
        self._failed_in = {}
        """The state a command last failed in here: items held, score, changes here, position.
        A known failure is retried only once that state has changed (`_changed_since`)."""
        self._retrying: set[tuple[int | None, str]] = set()
        """Known failures sent again this episode (memory's, or this episode's)."""
        self._came_from: dict[int, tuple[int, str]] = {}
        """The room and the command that last brought the player into each room."""
        self._names: dict[int, str] = {}
        self._trap_noted: set[int] = set()
        """Rooms noted this episode as traps (`trap_note`)."""
        self._traps: set[int] = set()
        """Rooms the player knows as traps (noted, or memory's notes it has seen)."""
        self._way_out: tuple[str, int, bool] | None = None
        """A note to write: the player left a room known as a trap (`way_out_note`)."""
        self._probed: set[int | None] = set()
        """Rooms where a move memory says failed, tried again after a change, still had no way
        there: memory's other failed moves there are not tried again this episode."""

    def new_episode(self, episode: int) -> None:
        self._rng = random.Random(self._seed * 1000 + episode)
        self._new_episode_state()

    def decide(self, view: AgentView) -> AgentDecision:
        tried = view.tried_here
        obs = view.observation
        here = obs.location_id
        if here is not None and obs.location_name:
            self._names[here] = obs.location_name
        self._learn_from_last_turn(view)
        # A remembered failure may be stale: it may have been for lack of an item we now hold,
        # or about a thing something has just changed (`open door` after `unlock door`): a
        # command that changed the game's state, not one the game merely did not refuse.
        # A change memory already knows of here (a step of a remembered procedure) is no news:
        # the failures memory lists were likely met after it too.
        self._known_here = known_commands(view.memories)
        changed = {
            _object_noun(c)
            for c, failed in tried.items()
            if not failed
            and c.split()[0] not in _FIXED_VERBS
            and self._effect.get((here, c), True)
            and c not in self._known_here
        } - {None}

        # After getting out of the bed or opening a door, moves that failed before may work now:
        # this episode's, unless the game said there is no way there at all; memory's, when
        # what the player has seen here names the way, until one of them, tried again here,
        # still found no way there (`_probed`).
        changed_at = self._changed.get(here)
        mentioned = f"{view.room_text}\n{obs.text}".lower()
        position = str(obs.location_context or "")

        def moved_on(command: str) -> bool:
            if (
                changed_at is None
                or command not in DIRECTIONS
                or self._last_try.get((here, command), -1) >= changed_at
            ):
                return False
            if command not in view.tried_here:  # memory's failure
                return (
                    here not in self._probed
                    and not position  # in or on something, a move waits until the player is out
                    and names_way(command, mentioned)
                )
            return not _NO_EXIT.search(self._answer.get((here, command), ""))

        def stale(command: str) -> bool:
            tool = tool_of(command)
            if (tool is not None and holding(tool, obs.inventory)) or moved_on(command):
                return True
            if (here, _object_noun(command)) in self._revealed:
                return True  # the game has since shown the thing it said was not here
            return _object_noun(command) in changed and command.split()[0] not in _FIXED_VERBS

        dangers = remembered_dangers(view.memories)
        failures = {c for c in remembered_failures(view.memories) if not stale(c)} - dangers
        lessons = dark_rooms([*view.memories, *view.nearby])
        to_light = self._lighting(obs.inventory)
        into_dark = self._into_dark(view, lessons)
        self._gate = (into_dark, to_light)
        # a way memory knows that once answered "You have to open the gate first.": that first
        self._first = steps_first(view.memories, tried)
        if here in lessons and self._lit is None:
            leave = self._out_of_the_dark(view, lessons, to_light, tried)
            if leave is not None:
                return leave
        if to_light and _DARK.search(obs.text):
            # the game says it is dark here and a light is carried: light it before anything
            return self._decision(
                view, to_light[0], f"Trying {to_light[0]!r}: it is dark here; a light first.", None
            )
        if not to_light:
            dangers = dangers | into_dark  # no light to light: the dark room is not entered
        traps = trap_rooms([*view.memories, *view.nearby])
        self._traps |= traps.keys() & {here}
        dangers = dangers | ways_into(view.memories, here, traps)  # no way out found there
        dangers = dangers | unknown_ways_where_died(
            [*view.world_notes, *view.memories], view.memories, here, dangers
        )
        retry = {
            c
            for c, failed in tried.items()
            if (failed or (here, c) in self._stayed)
            and (moved_on(c) or (here, _object_noun(c)) in self._revealed)
        } - dangers
        tried = {c: failed for c, failed in tried.items() if c not in retry}
        avoid = {a for a, failed in tried.items() if failed} | failures | dangers
        self._known_failed = {
            a for a, failed in view.tried_here.items() if failed
        } | remembered_failures(view.memories)
        note = self._unknown_word_note(view)
        if note is None and self._way_out is not None:
            note, self._way_out = self._way_out, None
        unknown = unknown_words(view.world_notes) | self._unknown_now

        def usable(command: str) -> bool:
            words = normalize(command).split()
            if not words or unknown & set(words):
                return False
            if words[0] == "take" and len(words) > 1 and holding(words[-1], obs.inventory):
                return False  # held already: taking it again does nothing
            tool = tool_of(" ".join(words))
            return tool is None or holding(tool, obs.inventory)

        def fresh(command: str) -> bool:
            c = normalize(command)
            return usable(c) and c not in tried and c not in avoid

        nouns = self._nouns_here(view)
        route = tuple(view.route_to_target)
        which = which_one(obs.text)
        if which is not None and fresh(which):
            # the game waits for an answer: any other command would be read as one
            return self._decision(
                view, which, f"Answering {which!r}: the game asked which thing I meant.", note
            )
        asked = asked_first(obs.text)
        seen = "\n".join(
            [view.room_text, obs.text, self._replies.get(here, ""), *(obs.objects or [])]
        )
        candidates: list[tuple[str, str]] = [
            *(
                (c, "a procedure memory recorded here")
                for c in remembered_procedures(view.memories, obs.inventory, seen)
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
        # first a way seen held up that may be open now, then ways the room text mentions
        held = {c for c in retry if (here, c) in self._answer}
        directions.sort(key=lambda d: (d not in held, not names_way(d, mentioned)))
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
        """No direction has worked here this episode: something genuinely new first (ways out
        of a position, untried verbs on what is here and what is carried), then a known
        failure whose state has changed since it failed, and only then stale memories."""
        obs = view.observation
        carried = list(dict.fromkeys(n for item in obs.inventory if (n := thing_noun(item))))
        dark = _DARK.search(f"{view.room_text}\n{obs.text}") is not None
        for command in [*(["turn on light"] if dark else []), *_ESCAPES]:
            if fresh(command):
                return self._decision(
                    view, command, f"Trying {command!r}: no way out of here has worked.", note
                )
        # every move and every way out of a position has failed here: a room with no way out,
        # noted once with its ways in, so that it is not entered again
        if note is None and not dark:
            note = self._trap(view, usable, failures)
        here = obs.location_id
        described = [
            n
            for n in visible_objects(view.room_text)
            if n not in nouns and n not in carried and (here, n) not in self._dead_nouns
        ]
        tries = [
            *(f"{verb} {noun}" for noun in [*nouns, *described] for verb in _THING_VERBS),
            *(
                f"{verb} {item}"
                for item in carried
                for verb in dict.fromkeys([*_CARRIED_VERBS, *_THING_VERBS])
            ),
        ]
        for command in tries:
            if fresh(command):
                return self._decision(
                    view, command, f"Trying {command!r}: no way out of here has worked.", note
                )
        tried = view.tried_here
        never = -_RETRY_AFTER
        known = [
            c
            for c, failed in tried.items()
            if (failed or (here, c) in self._blocked) and c not in dangers and usable(c)
        ]
        changed = [c for c in known if self._changed_since(here, c, obs)]
        if changed:
            command = min(changed, key=lambda c: self._last_try.get((here, c), never))
            return self._decision(
                view,
                command,
                f"Trying {command!r} again: something has changed since it failed.",
                note,
            )
        # nothing new is left here and nothing has changed: memory may be stale (a way blocked
        # only for a while in an earlier episode), then this episode's oldest failure
        for command in sorted(failures & set(MAP_DIRECTIONS)):
            if command not in tried and usable(command):
                return self._decision(
                    view,
                    command,
                    f"Trying {command!r}: nothing new is left here; memory says it failed here,"
                    " but it may have been blocked only for a while.",
                    note,
                )
        again = [
            c for c in known if view.turn - self._last_try.get((here, c), never) >= _RETRY_AFTER
        ]
        if again:
            command = min(again, key=lambda c: self._last_try.get((here, c), never))
            return self._decision(
                view,
                command,
                f"Trying {command!r} again: nothing new is left here and it failed a while ago.",
                note,
            )
        return self._decision(view, "look", "Nothing here works; looking again.", note)

    def _trap(
        self, view: AgentView, usable: _Check, failures: set[str]
    ) -> tuple[str, int, bool] | None:
        """A note that no way out of here was found, once per room and episode, when every
        move here has failed (this episode, or as memory says) and none moved the player; None
        when memory says so already."""
        here = view.observation.location_id
        if here is None or here in self._trap_noted or here in trap_rooms(view.memories):
            return None
        tried = view.tried_here
        if any(
            not failed and (here, c) not in self._blocked
            for c, failed in tried.items()
            if c in MAP_DIRECTIONS
        ):
            return None  # a move here worked this episode
        if not all(tried.get(d) or d in failures or not usable(d) for d in DIRECTIONS):
            return None
        self._trap_noted.add(here)
        self._traps.add(here)
        ways: list[WayIn] = []
        came = self._came_from.get(here)
        while came is not None and len(ways) < 2:
            source, command = came
            ways.append(WayIn(command, source, self._names.get(source, "")))
            # carried off (by a guard, a trap, a spell), not walked in: what led there began in
            # the room before, so the way into that room is a way in too
            came = None if own_move(command) else self._came_from.get(source)
        name = view.observation.location_name or self._names.get(here, "")
        return (trap_note(name, here, ways, view.episode, view.turn), 900, False)

    def _changed_since(self, here: int | None, command: str, obs: GameObservation) -> bool:
        """Whether the state has changed since `command` last failed here this episode: an item
        held that was not, a new score, the world changed here, or the player's position."""
        then = self._failed_in.get((here, command))
        if then is None:
            return False
        held, score, changes, context = then
        return bool(
            set(obs.inventory) - held
            or (obs.score is not None and score is not None and obs.score != score)
            or self._changes.get(here, 0) > changes
            or str(obs.location_context or "") != context
        )

    # -- what the last turn taught -------------------------------------------------------------

    def _learn_from_last_turn(self, view: AgentView) -> None:
        """Mark a move or route step that left the player in place as blocked; note a change
        that may open a way (what holds the player changed, `get out of bed`; or the world
        changed here: `open door` worked); note the state a failure happened in; drop a noun
        the game says is not here ("You can't see any such thing."); learn a word the game
        does not know."""
        if self._last is None:
            return
        where, command, route = self._last
        self._last = None
        obs = view.observation
        word = unknown_word_in(obs.text, command)
        if word is not None:
            self._unknown_now.add(word)
        self._learn_light(view, where, command)
        if where != obs.location_id:
            if command in MAP_DIRECTIONS:
                self._came[obs.location_id] = command
            if where is not None and obs.location_id is not None and not obs.died:
                self._came_from[obs.location_id] = (where, command)
                if where in self._traps and own_move(command):
                    self._traps.discard(where)
                    name = self._names.get(where, "")
                    text = way_out_note(name, where, command, view.episode, view.turn - 1)
                    self._way_out = (text, 900, False)
            return
        self._replies[where] = f"{self._replies.get(where, '')}\n{obs.text}"
        self._answer[(where, command)] = obs.text
        if (route is not None or command in MAP_DIRECTIONS) and not _entered(obs):
            self._blocked.add((where, command))
            self._stayed.add((where, command))
        failed = view.tried_here.get(command, False)
        held, score, context_before = self._before
        context = str(getattr(obs, "location_context", "") or "")
        gained = set(obs.inventory) != held
        scored = obs.score is not None and score is not None and obs.score != score
        if obs.world_changed is None:  # the game cannot say: its words decide
            acted = not failed and not _NO_CHANGE.search(obs.text)
            world = acted and command.split()[0] in _CHANGING_VERBS
        else:
            world = obs.world_changed and not gained
        moved_self = context != context_before
        self._effect[(where, command)] = bool(world or gained or scored or moved_self)
        if moved_self or (world and command not in self._known_here):
            # out of a bed, or a door opened: moves that failed here before may work now (not
            # after a change memory knows of here: its failures were likely met after it too)
            self._changed[where] = view.turn - 1
            self._changes[where] = self._changes.get(where, 0) + 1
            self._blocked = {(loc, c) for loc, c in self._blocked if loc != where}
        if failed:
            self._failed_in[(where, command)] = (
                frozenset(obs.inventory),
                obs.score,
                self._changes.get(where, 0),
                context,
            )
            if (
                (where, command) in self._retrying
                and command in MAP_DIRECTIONS
                and _NO_EXIT.search(obs.text)
            ):
                # a failed move tried again after a change still has no way there: so, likely,
                # have the others memory lists here
                self._probed.add(where)
        noun = _object_noun(command)
        if failed and noun is not None and _NO_SUCH_THING.search(obs.text):
            self._dead_nouns.add((where, noun))
        elif self._effect[(where, command)]:
            # what changed the world here shows a thing ("You open the chest drawer, revealing an
            # old key."): a thing the game said was not here is worth another try, once
            shown = set(visible_objects(obs.text))
            for loc, thing in list(self._dead_nouns):
                if loc == where and thing in shown and (loc, thing) not in self._shown_once:
                    self._dead_nouns.discard((loc, thing))
                    self._revealed.add((loc, thing))
                    self._shown_once.add((loc, thing))

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
        """Whether the first step of `route` may be taken: the player's own move (a thing done
        that once carried the player off, `take web` into limbo, is no way to walk), not
        failed, remembered bad, blocked this episode, nor taken so often from here on this
        route that it is a loop."""
        step = route[0]
        return (
            own_move(step)
            and step not in avoid
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
        """A world note when the game says it does not know a word (true everywhere): named in
        its answer, or the verb of the command it says is no verb (`unknown_word_in`).

        Failed commands are not noted: the memory service keeps them (one FAILURE memory per
        room and object).
        """
        word = unknown_word_in(view.observation.text, self._sent)
        if word is None:
            return None
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
        first = self._first.get(command)
        if first is not None:
            reasoning = (
                f"Trying {first!r}: memory says {command!r} here once needed that first."
            )
            command, route = first, None
        self._last_try[(here, command)] = view.turn
        self._last = (here, command, route)
        self._revealed.discard((here, _object_noun(command)))
        self._sent = command
        if command in self._known_failed:
            self._retrying.add((here, command))
        obs = view.observation
        self._before = (
            frozenset(obs.inventory),
            obs.score,
            str(getattr(obs, "location_context", "") or ""),
        )
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

