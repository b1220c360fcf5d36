"""Routes, as the offline player walks them: the next step of a route the session gives it (to
an objective, or to the nearest unexplored exit), unless that step has turned out blocked this
episode or keeps bringing the player back over the same ground."""

from __future__ import annotations

from cairn.agents.explorer.episode import Episode, Move
from cairn.agents.explorer.rules import Bounds
from cairn.agents.explorer.words import own_move

_ROUTE_REPEATS = 3
"""A route step taken this often from the same room on the same route is a loop: blocked."""


def route_open(episode: Episode, here: int | None, route: tuple[str, ...], bounds: Bounds) -> bool:
    """Whether the first step of `route` may be taken: the player's own move (a thing done
    that once carried the player off, `take web` into limbo, is no way to walk), not
    failed, remembered bad, blocked this episode, nor taken so often from here on this
    route that it is a loop."""
    step = route[0]
    return (
        own_move(step)
        and step not in bounds.avoid
        and bounds.usable(step)
        and (here, step) not in episode.blocked
        and episode.route_uses.get((here, step, route), 0) < _ROUTE_REPEATS
    )


def route_step(
    episode: Episode, here: int | None, route: tuple[str, ...], bounds: Bounds, to: str
) -> Move | None:
    """The first step of `route` (to `to`, for the reasoning), when it may be taken."""
    if route and route_open(episode, here, route, bounds):
        return Move(route[0], f"Trying {route[0]!r}: the route to {to}.", route)
    return None
