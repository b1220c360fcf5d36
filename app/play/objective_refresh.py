"""When the objectives are discovered again: every N turns, and at once after a turn that
changed what is worth doing (issue 38).

Besides the schedule (the first turn, then every `every` turns), a turn asks for a new
discovery before the next decision when:

- the score changed (up: something was done, and what comes next is new; down: a loss);
- a one-way event happened, one after which the old objectives may no longer be reachable:
  - the player died and play goes on (a resurrection elsewhere, things scattered);
  - the player lost something the command did not name (stolen, used up, taken away: a
    command that names a thing, `drop lamp`, `give bread to dog`, or says `all`, gave it);
  - the way back is shut: right after a compass move into a room, the opposite direction was
    refused there (a trap door barred, a passage that closed); each room and direction once.

The reasons are read from the turn's outcome alone (location, score, inventory, the command),
never from a game's own words, so the rule holds in every game.
"""

from __future__ import annotations

from enum import StrEnum

from cairn.models.directions import OPPOSITE, normalize_direction
from cairn.models.game import TurnOutcome


class Refresh(StrEnum):
    """Why the objectives are discovered again."""

    SCHEDULE = "schedule"
    SCORE = "score"
    DEATH = "death"
    LOST = "lost"
    WAY_BACK_SHUT = "way_back_shut"


ONE_WAY = frozenset({Refresh.DEATH, Refresh.LOST, Refresh.WAY_BACK_SHUT})
"""The reasons that are one-way events."""

_ALL = frozenset({"all", "everything"})


class RefreshWatch:
    """Says when the objectives are due again (see the module docstring); one per episode."""

    def __init__(self, every: int) -> None:
        self.every = max(1, every)
        self.pending: Refresh | None = None
        self.reasons: list[tuple[int, Refresh]] = []
        """(turn, reason) of every discovery asked for this episode."""
        self._entered: tuple[int, str] | None = None
        self._shut: set[tuple[int, str]] = set()

    def new_episode(self) -> None:
        self.pending = None
        self.reasons = []
        self._entered = None
        self._shut = set()

    def due(self, turn: int) -> Refresh | None:
        """Whether the objectives are to be discovered before `turn`'s decision, and why;
        the pending reason is cleared once asked."""
        reason = self.pending or (Refresh.SCHEDULE if (turn - 1) % self.every == 0 else None)
        self.pending = None
        if reason is not None:
            self.reasons.append((turn, reason))
        return reason

    def observe(self, outcome: TurnOutcome) -> Refresh | None:
        """Read one turn; the reason it gives for a new discovery (kept as pending), if any."""
        reason = self._reason(outcome)
        if reason is not None and self.pending is None:
            self.pending = reason
        return reason

    def _reason(self, outcome: TurnOutcome) -> Refresh | None:
        before, after = outcome.location_before, outcome.location_after
        direction = normalize_direction(outcome.action)
        shut = None
        if after is not None and after != before:
            self._entered = (after, direction) if direction is not None else None
        elif self._entered is not None and before == self._entered[0] and direction is not None:
            back = OPPOSITE.get(self._entered[1])
            if direction == back and (before, direction) not in self._shut:
                self._shut.add((before, direction))
                shut = Refresh.WAY_BACK_SHUT
        if outcome.score_delta != 0:
            return Refresh.SCORE
        if outcome.died and not outcome.won:
            return Refresh.DEATH
        if _lost(outcome):
            return Refresh.LOST
        return shut


def _lost(outcome: TurnOutcome) -> bool:
    """Whether something carried before the turn is gone after it, the command not naming it."""
    words = set(outcome.action.lower().split())
    if words & _ALL:
        return False
    after = set(outcome.inventory_after)
    return any(
        item not in after and not words & set(item.lower().split())
        for item in outcome.inventory_before
    )
