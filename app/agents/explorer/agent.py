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

In a room memory knows from an earlier episode (`frontier.py`), what memory says changed
something here comes first (a light switched on, out of the bed: no move, no take), then the
steps above to 3; then what was not seen yet: unexplored exits, the route to the nearest one,
`open <thing>` when a way memory knows leads on was refused naming the thing, the walk along
memory's move notes to a room not entered this episode (never a trap or a dark room that
killed), untried directions; only then the things here (step 4), whose outcomes memory has
already. A move refused with an answer naming a carried thing drops it (`load.py`). Lost among
look-alike rooms with one id (a maze), the moves that led in are undone before step 6.

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

The parts, one concern each: `episode.py` (what this episode taught), `rules.py` (what may be
sent this turn), `light.py` (darkness), `traps.py` (rooms with no way out), `routes.py`,
`explore.py` (steps 1 to 6), `frontier.py` (rooms memory knows), `stuck.py` (step 7); this
module runs the turn.
"""

from __future__ import annotations

import random

from cairn.agents.explorer.episode import Episode, Move, Note
from cairn.agents.explorer.explore import choose, nouns_here
from cairn.agents.explorer.frontier import Atlas, reopen
from cairn.agents.explorer.lessons import known_commands, steps_first
from cairn.agents.explorer.light import SAYS_DARK, Light
from cairn.agents.explorer.load import Load
from cairn.agents.explorer.rules import Staleness, bounds, kept_out
from cairn.agents.explorer.stuck import when_stuck
from cairn.agents.explorer.threats import retreat
from cairn.agents.explorer.trap_notes import trap_rooms
from cairn.agents.explorer.traps import Traps
from cairn.agents.explorer.words import (
    dark_rooms,
    normalize,
    remembered_failures,
    unknown_word_in,
    unknown_words,
)
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent


class ExplorerAgent(IAgent):
    """The offline player (see the module docstring). Deterministic for a given seed."""

    def __init__(self, seed: int = 0) -> None:
        self._seed = seed
        self._rng = random.Random(seed)
        self._noted: set[str] = set()
        """Words the game does not know, noted in a world note (across episodes)."""
        self._new_episode_state()

    def _new_episode_state(self) -> None:
        self._episode = Episode()
        self._light = Light()
        self._traps = Traps()
        self._load = Load()
        self._atlas = Atlas()

    def new_episode(self, episode: int) -> None:
        self._rng = random.Random(self._seed * 1000 + episode)
        self._new_episode_state()

    def decide(self, view: AgentView) -> AgentDecision:
        episode, light = self._episode, self._light
        tried = view.tried_here
        obs = view.observation
        here = obs.location_id
        if here is not None and obs.location_name:
            episode.names[here] = obs.location_name
        sent = episode.sent
        self._learn_from_last_turn(view)
        self._atlas.read([*view.memories, *view.nearby])
        self._atlas.visit(here)
        unload = self._load.next_move(view, episode, sent) if sent else None
        if unload is not None:
            return self._decision(view, unload, None)
        flee = retreat(view, episode)
        if flee is not None:
            return self._decision(view, flee, None)
        episode.known_here = known_commands(view.memories)
        staleness = Staleness(view, episode)
        failures, dangers = staleness.failures()
        lessons = dark_rooms([*view.memories, *view.nearby])
        deadly = dark_rooms([*view.memories, *view.nearby], deadly=True)
        to_light = light.commands(obs.inventory)
        into_dark = light.into_dark(view, lessons)
        light.gate(into_dark, to_light)
        # a way memory knows that once answered "You have to open the gate first.": that first
        episode.first = steps_first(view.memories, tried)
        if episode.into_dark_test is not None and here in lessons:
            episode.testing_dark.add(here)  # went in to test it: it looks round
        episode.into_dark_test = None
        if here in lessons and here not in episode.testing_dark and light.lit is None:
            leave = light.out_of_the_dark(view, lessons, to_light, tried, episode.came)
            if leave is not None:
                return self._decision(view, leave, None)
        if to_light and SAYS_DARK.search(obs.text):
            # the game says it is dark here and a light is carried: light it before anything
            lit = Move(to_light[0], f"Trying {to_light[0]!r}: it is dark here; a light first.")
            return self._decision(view, lit, None)
        unlit: set[str] = set()
        if not to_light:
            # no light to light: a room where the dark killed is not entered; one only seen
            # dark (no danger without a death) waits until nothing else is left here
            dangers = dangers | light.into_dark(view, deadly)
            unlit = light.into_dark(view, lessons) - dangers
        traps = trap_rooms([*view.memories, *view.nearby])
        self._atlas.shunned |= traps.keys()
        self._atlas.dark |= lessons.keys() | deadly.keys()
        self._atlas.light_at_hand = bool(to_light) or light.lit is not None
        self._traps.seen(traps, here)
        dangers = kept_out(view, dangers, traps)
        unknown = unknown_words(view.world_notes) | episode.unknown_now
        limits = bounds(view, episode, staleness, failures, dangers | unlit, unknown)
        episode.known_failed = {
            a for a, failed in view.tried_here.items() if failed
        } | remembered_failures(view.memories)
        note = self._unknown_word_note(view)
        if note is None:
            note = self._traps.way_out()
        nouns = nouns_here(view, episode)
        move = choose(view, episode, limits, nouns, self._rng, self._atlas)
        if move is None and unlit:  # nothing else left: the room only seen dark is tried
            limits = bounds(view, episode, staleness, failures, dangers, unknown)
            move = choose(view, episode, limits, nouns, self._rng, self._atlas)
            if move is not None and move.command in unlit:
                episode.into_dark_test = move.command
        if move is None:
            move, note = when_stuck(view, episode, self._traps, limits, nouns, note)
        return self._decision(view, move, note)

    def _learn_from_last_turn(self, view: AgentView) -> None:
        """What the answer to the last command taught: the episode (`Episode.learn`), the light
        (`Light.learn`) and the traps (`Traps.learn`)."""
        last = self._episode.last
        if last is None:
            return
        self._episode.last = None
        where, command, route = last
        if not view.observation.died:
            self._atlas.moved(where, command, view.observation.location_id)
        self._light.learn(view, where, command)
        self._traps.learn(view, self._episode, where, command)
        self._episode.learn(view, where, command, route)
        reopen(self._episode, self._atlas, where, command, view.turn - 1)

    def _unknown_word_note(self, view: AgentView) -> Note | None:
        """A world note when the game says it does not know a word (true everywhere): named in
        its answer, or the verb of the command it says is no verb (`unknown_word_in`).

        Failed commands are not noted: the memory service keeps them (one FAILURE memory per
        room and object).
        """
        word = unknown_word_in(view.observation.text, self._episode.sent)
        if word is None:
            return None
        if word in unknown_words(view.world_notes) or word in self._noted:
            return None
        self._noted.add(word)
        return Note(f"The game does not know the word '{word}'.", 400, True)

    def _decision(self, view: AgentView, move: Move, note: Note | None) -> AgentDecision:
        """Send `move` (a light first when it leads into a dark room, the step memory says it
        needs first), and note it in the episode."""
        command = normalize(move.command) or "look"
        reasoning, route = move.reasoning, move.route
        lighting = self._light.first(command)
        if lighting is not None:
            reasoning = (
                f"Trying {lighting!r}: {command!r} leads into a room memory says is dark;"
                " a light first."
            )
            command, route = lighting, None
        first = self._episode.first.get(command)
        if first is not None:
            reasoning = (
                f"Trying {first!r}: memory says {command!r} here once needed that first."
            )
            command, route = first, None
        self._episode.record(view, command, route)
        return AgentDecision(
            action=command,
            reasoning=reasoning,
            remember=note.text if note else None,
            importance=note.importance if note else 500,
            remember_everywhere=note.everywhere if note else False,
            remember_tags=list(note.tags) if note else [],
            remember_ways_in=list(note.ways_in) if note else [],
        )
