"""RoomWatch: the room's own words now, for the prompt, even when the turn's text lacks them.

On a revisit many games print only the room's name ("Hall"), and a refused command
prints no room at all: the turn's text is then no description. The watch asks the game's own
`look` (`IGame.look`: no move is spent, nothing changes) when the player arrives somewhere,
when the world changed (an opened window reads "open" now), and when the room's words are not
known yet; in between it keeps the last words read for that room. A game that cannot be asked
gives the arrival's own text when it is more than the room's name, else the words last seen
there. A game that names no location id is followed by its rooms' names. Everything is per
episode.
"""

from __future__ import annotations

from cairn.interfaces.game import GameObservation, IGame


class RoomWatch:
    """The room's words now, per episode (see the module docstring)."""

    def __init__(self, game: IGame) -> None:
        self._game = game
        self._texts: dict[int | str, str] = {}
        self._room: int | str | None = None
        self._last: tuple[GameObservation, str] | None = None
        self.looks = 0
        """How many times the game was asked to look (a figure for benches and tests)."""

    def new_episode(self) -> None:
        """Forget the rooms' words: a new episode starts from the game's reset."""
        self._texts.clear()
        self._room = None
        self._last = None

    def text(self, obs: GameObservation) -> str:
        """The words for the room of `obs` (asked once per observation). A game that names no
        location id is followed by its room's name, else taken to be where it last was."""
        if self._last is not None and self._last[0] is obs:
            return self._last[1]
        here: int | str | None = obs.location_id
        if here is None:
            here = obs.location_name or self._room
        arrived = here != self._room
        self._room = here
        if here is None:
            words = _described(obs)
        elif arrived or obs.world_changed or here not in self._texts:
            looked = None if obs.done else self._game.look()
            if looked is not None:
                self.looks += 1
            words = looked or (_described(obs) if arrived else "") or self._texts.get(here, "")
            self._texts[here] = words
        else:
            words = self._texts[here]
        self._last = (obs, words)
        return words


def _described(obs: GameObservation) -> str:
    """The observation's text when it says more than the room's name, else ""."""
    lines = [line for line in obs.text.strip().splitlines() if line.strip()]
    if len(lines) <= 1 and (not lines or lines[0].strip() == obs.location_name.strip()):
        return ""
    return obs.text.strip()
