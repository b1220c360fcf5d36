"""Significance triggers: Z-machine ground truth decides WHEN to ask for synthesis."""

from __future__ import annotations

from cairn.models.game import TurnOutcome
from cairn.models.kinds import Trigger

SCORE = Trigger.SCORE
LOCATION = Trigger.LOCATION
INVENTORY = Trigger.INVENTORY
DEATH = Trigger.DEATH
FIRST_VISIT = Trigger.FIRST_VISIT
LONG_RESPONSE = Trigger.LONG_RESPONSE
WORLD = Trigger.WORLD


def detect_triggers(
    outcome: TurnOutcome, *, first_visit: bool, long_response_chars: int = 100
) -> list[Trigger]:
    """Return the triggers this turn fires (empty: no synthesis).

    `first_visit` means the player reached a location for the first time EVER (across
    episodes), not "a location with no memory yet" (PITFALLS: that made every move call the LLM).
    """
    fired: list[Trigger] = []
    if outcome.score_delta != 0:
        fired.append(SCORE)
    if outcome.moved:
        fired.append(LOCATION)
    if outcome.inventory_changed:
        fired.append(INVENTORY)
    if outcome.died:
        fired.append(DEATH)
    if first_visit and outcome.moved:
        fired.append(FIRST_VISIT)
    if len(outcome.response.strip()) > long_response_chars:
        fired.append(LONG_RESPONSE)
    if outcome.world_changed and not fired:
        fired.append(WORLD)  # a change in place, with nothing else to tell of it
    return fired
