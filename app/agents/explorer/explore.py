"""Choosing a move, as the offline player explores: the answer the game waits for, remembered
procedures, the route to its objective, the things here, unexplored exits, compass directions
in a seeded order, and the least-used way that worked (steps 1 to 6 of `agent.py`)."""

from __future__ import annotations

import random

from cairn.agents.explorer.episode import Episode, Move
from cairn.agents.explorer.frontier import (
    Atlas,
    changes_that_worked,
    known_before,
    onward,
    sweep,
)
from cairn.agents.explorer.routes import route_step
from cairn.agents.explorer.rules import Bounds
from cairn.agents.explorer.words import (
    DIRECTIONS,
    asked_first,
    game_object_nouns,
    known_words,
    names_way,
    object_commands,
    opposite,
    remembered_procedures,
    visible_objects,
    which_options,
)
from cairn.interfaces.agent import AgentView


def nouns_here(view: AgentView, episode: Episode) -> list[str]:
    """The game's names for the things here first, then nouns guessed from its replies to
    commands here ("You open the chest, revealing a key."), never from room descriptions
    alone, and only words the game's parser knows; minus those the game has answered are not
    here."""
    obs = view.observation
    here = obs.location_id
    guessed = known_words(visible_objects(episode.replies.get(here, "")), view)
    nouns = list(dict.fromkeys([*game_object_nouns(obs), *guessed]))
    return [n for n in nouns if (here, n) not in episode.dead_nouns]


def choose(
    view: AgentView,
    episode: Episode,
    bounds: Bounds,
    nouns: list[str],
    rng: random.Random,
    atlas: Atlas | None = None,
) -> Move | None:
    """The first fresh command of the explorer's order here; None when every direction has
    been tried and none worked (the player is stuck: `stuck.py`). In a room memory knows from
    an earlier episode, what was not seen yet comes before the things here (`frontier.py`)."""
    obs = view.observation
    here = obs.location_id
    fresh = bounds.fresh
    offered = which_options(obs.text)
    if offered:
        # the game waits for an answer: any other command would be read as one ("take east"),
        # so an answer goes back even when memory lists it as a failure here (an answer is no
        # command of the place); the first offered that is fresh, else the first not just sent
        which = next((o for o in offered if fresh(o)), None) or next(
            (o for o in offered if o != episode.sent), offered[0]
        )
        return Move(which, f"Answering {which!r}: the game asked which thing I meant.")
    asked = asked_first(obs.text)
    seen = "\n".join(
        [view.room_text, obs.text, episode.replies.get(here, ""), *(obs.objects or [])]
    )
    candidates: list[tuple[str, str]] = [
        # in a room memory knows, what changed it comes first (a light switched on, out of
        # the bed): the procedures may need it done
        *(
            (c, "memory says it changed something here")
            for c in (
                changes_that_worked(view.memories, obs.inventory)
                if atlas is not None and known_before(view)
                else []
            )
        ),
        *(
            (c, "a procedure memory recorded here")
            for c in remembered_procedures(view.memories, obs.inventory, seen)
        ),
        *([(asked, "what the game asked for first")] if asked else []),
    ]
    for command, why in candidates:
        if fresh(command):
            return Move(command, f"Trying {command!r}: {why}.")
    step = route_step(episode, here, tuple(view.route_to_target), bounds, "my objective")
    if step is not None:
        return step
    known = atlas is not None and known_before(view)
    directions = list(DIRECTIONS)
    if known and atlas is not None:
        # a room memory knows from before: what was not seen yet, then untried ways, and only
        # then the things here again (their outcomes are memory's already)
        ahead = onward(view, episode, atlas, bounds, nouns)
        if ahead is not None:
            return ahead
        rng.shuffle(directions)
        direction = _untried_direction(episode, here, bounds, directions)
        if direction is not None:
            return direction
    candidates = [
        *(
            (c, "something I can see here")
            for c in object_commands(f"{view.room_text}\n{obs.text}", obs.inventory, nouns)
        ),
        *((d, "an exit I have not explored") for d in view.unexplored_exits),
    ]
    for command, why in candidates:
        if fresh(command):
            return Move(command, f"Trying {command!r}: {why}.")
    nearest = tuple(view.route_to_unexplored)
    step = route_step(episode, here, nearest, bounds, "the nearest unexplored exit")
    if step is not None:
        return step
    if not known:
        rng.shuffle(directions)
        direction = _untried_direction(episode, here, bounds, directions)
        if direction is not None:
            return direction
    steps = episode.within.get(here)
    back = opposite(steps[-1]) if steps else None
    if back is not None and bounds.usable(back) and back not in bounds.dangers:
        # lost among look-alike rooms (a maze with one id): undo the moves that led in
        return Move(back, f"Trying {back}: retracing my steps among look-alike rooms.")
    if known and atlas is not None:
        onwards = sweep(view, episode, atlas, bounds)
        if onwards is not None:
            return onwards
    worked = [
        a
        for a, failed in bounds.tried.items()
        if not failed
        and a in DIRECTIONS
        and (here, a) not in episode.blocked
        and a not in bounds.dangers
    ]
    if worked:
        command = min(
            worked, key=lambda d: (episode.used.get((here, d), 0), directions.index(d))
        )
        episode.used[(here, command)] = episode.used.get((here, command), 0) + 1
        return Move(command, "Everything here has been tried; the least-used way out.")
    return None


def _untried_direction(
    episode: Episode, here: int | None, bounds: Bounds, directions: list[str]
) -> Move | None:
    """A compass direction not tried here, in `directions`' (seeded) order, sorted in place:
    first a way seen held up that may be open now, then ways the room text mentions."""
    held = {c for c in bounds.retry if (here, c) in episode.answer}
    directions.sort(key=lambda d: (d not in held, not names_way(d, bounds.mentioned)))
    for direction in directions:
        if bounds.fresh(direction):
            return Move(direction, f"Trying {direction}: untried here.")
    return None
