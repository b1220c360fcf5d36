"""What the game said on arriving in each room, sentence by sentence, for a run: a move already
remembered whose answer says something never said on arriving there before has a new outcome
(a character now in the way, a door now open), and reaches the model (issue 38, item 12)."""

from __future__ import annotations

import re

from cairn.models.game import TurnOutcome

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """`text`'s sentences and lines, in order, whitespace collapsed and lower case."""
    said = (" ".join(part.split()).lower() for part in _SPLIT.split(text))
    return list(dict.fromkeys(s for s in said if s))


class Arrivals:
    """The sentences said on arrival in each room this run (kept in memory, not stored)."""

    def __init__(self) -> None:
        self._said: dict[int, set[str]] = {}

    def news(self, outcome: TurnOutcome) -> list[str]:
        """The sentences of this move's answer never said on arriving in its room before, in
        order, and note them; [] for a turn that did not move, and for a room not arrived in
        before this run (there is nothing to tell new from old)."""
        room = outcome.location_after
        if not outcome.moved or room is None:
            return []
        said = sentences(outcome.response)
        before = self._said.get(room)
        if before is None:
            self._said[room] = set(said)
            return []
        news = [s for s in said if s not in before]
        before.update(news)
        return news
