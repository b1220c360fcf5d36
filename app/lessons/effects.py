"""What an action did (`effect_of`) and whether a probe of it did the same (`reproduces`)."""

from __future__ import annotations

from cairn.interfaces.game import Probe
from cairn.models.game import TurnOutcome
from cairn.models.lesson import Effect, EffectKind


def effect_of(outcome: TurnOutcome, refused: bool = False) -> Effect | None:
    """The effect a lesson of `outcome` claims, read from the game's state: won, died,
    scored, moved, changed the world; `refused` when the caller's verdict says the command
    was refused. None: the turn did nothing a lesson could claim."""
    if outcome.won:
        return Effect(kind=EffectKind.WON)
    if outcome.died:
        return Effect(kind=EffectKind.DIED)
    if outcome.score_delta > 0:
        return Effect(kind=EffectKind.SCORED, points=outcome.score_delta)
    if outcome.score_delta < 0:
        return Effect(kind=EffectKind.LOST, points=-outcome.score_delta)
    if outcome.moved:
        return Effect(
            kind=EffectKind.MOVED,
            room_id=outcome.location_after,
            room=outcome.location_after_name or None,
        )
    if outcome.world_changed:
        return Effect(kind=EffectKind.CHANGED)
    if refused:
        return Effect(kind=EffectKind.REFUSED)
    return None


def reproduces(effect: Effect, outcome: TurnOutcome, probe: Probe) -> bool:
    """Whether `probe` (the action sent from the state before `outcome`'s turn, perhaps after
    other commands) did what `effect` says the action did."""
    kind = effect.kind
    if kind is EffectKind.WON:
        return probe.won
    if kind is EffectKind.DIED:
        return probe.died
    if kind is EffectKind.SCORED:
        before = outcome.score_before
        return (
            probe.score is not None
            and before is not None
            and probe.score >= before + (effect.points or 1)
        )
    if kind is EffectKind.LOST:
        before = outcome.score_before
        return (
            probe.score is not None
            and before is not None
            and probe.score <= before - (effect.points or 1)
        )
    if kind is EffectKind.MOVED:
        return probe.location_id == effect.room_id and not probe.died
    if kind is EffectKind.CHANGED:
        return bool(probe.world_changed) and not probe.died
    return not probe.world_changed and probe.location_id == outcome.location_before
