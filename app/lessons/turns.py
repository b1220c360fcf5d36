"""The turns a lesson looks back on: those taken in a room since the player came in."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.models.game import TurnOutcome


def since_arrival(history: Sequence[TurnOutcome], room: int | None) -> list[TurnOutcome]:
    """The turns of `history` (oldest first) taken in `room` since the player last came in,
    oldest first: back to the last move or death."""
    found: list[TurnOutcome] = []
    for turn in reversed(history):
        if turn.location_before != room or turn.moved or turn.died:
            break
        found.insert(0, turn)
    return found
