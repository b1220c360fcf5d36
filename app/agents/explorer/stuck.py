"""When no direction has worked here (a trap, a bed, a dark room): the offline player tries
something genuinely new (a light, ways out of a position, untried verbs on what is here and
what is carried), then a failure whose state has changed, and only then stale memories (step 7
of `agent.py`)."""

from __future__ import annotations

from cairn.agents.explorer.episode import Episode, Move, Note
from cairn.agents.explorer.light import SAYS_DARK
from cairn.agents.explorer.rules import Bounds
from cairn.agents.explorer.traps import Traps
from cairn.agents.explorer.words import known_words, thing_noun, visible_objects
from cairn.interfaces.agent import AgentView
from cairn.services.map import DIRECTIONS as MAP_DIRECTIONS

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
_RETRY_AFTER = 10
"""Turns before a failure of this episode is tried again when nothing else is left here."""


def when_stuck(
    view: AgentView,
    episode: Episode,
    traps: Traps,
    bounds: Bounds,
    nouns: list[str],
    note: Note | None,
) -> tuple[Move, Note | None]:
    """No direction has worked here this episode: something genuinely new first (ways out
    of a position, untried verbs on what is here and what is carried), then a known
    failure whose state has changed since it failed, and only then stale memories. With the
    move, the note to write (`note`, or that this room is a trap)."""
    fresh, usable = bounds.fresh, bounds.usable
    obs = view.observation
    carried = list(dict.fromkeys(n for item in obs.inventory if (n := thing_noun(item))))
    dark = SAYS_DARK.search(f"{view.room_text}\n{obs.text}") is not None
    for command in [*(["turn on light"] if dark else []), *_ESCAPES]:
        if fresh(command):
            return Move(command, f"Trying {command!r}: no way out of here has worked."), note
    # every move and every way out of a position has failed here: a room with no way out,
    # noted once with its ways in, so that it is not entered again
    if note is None and not dark:
        note = traps.note(view, episode, usable, bounds.failures)
    here = obs.location_id
    described = [
        n
        for n in known_words(visible_objects(view.room_text), view)
        if n not in nouns and n not in carried and (here, n) not in episode.dead_nouns
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
            return Move(command, f"Trying {command!r}: no way out of here has worked."), note
    tried = view.tried_here
    never = -_RETRY_AFTER
    known = [
        c
        for c, failed in tried.items()
        if (failed or (here, c) in episode.blocked) and c not in bounds.dangers and usable(c)
    ]
    changed = [c for c in known if episode.changed_since(here, c, obs)]
    if changed:
        command = min(changed, key=lambda c: episode.last_try.get((here, c), never))
        why = f"Trying {command!r} again: something has changed since it failed."
        return Move(command, why), note
    # nothing new is left here and nothing has changed: memory may be stale (a way blocked
    # only for a while in an earlier episode), then this episode's oldest failure
    for command in sorted(bounds.failures & set(MAP_DIRECTIONS)):
        if command not in tried and usable(command):
            return Move(
                command,
                f"Trying {command!r}: nothing new is left here; memory says it failed here,"
                " but it may have been blocked only for a while.",
            ), note
    again = [
        c for c in known if view.turn - episode.last_try.get((here, c), never) >= _RETRY_AFTER
    ]
    if again:
        command = min(again, key=lambda c: episode.last_try.get((here, c), never))
        return Move(
            command,
            f"Trying {command!r} again: nothing new is left here and it failed a while ago.",
        ), note
    return Move("look", "Nothing here works; looking again."), note
