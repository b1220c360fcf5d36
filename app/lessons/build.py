"""A lesson from a turn: the effect the game showed, and the claims proposed for it (by the
rules or a model) kept only as far as the game confirmed them (`TurnTests`).

- A claim the game refuted (an item put down and the action still worked; a step left out and
  the action still worked) is dropped.
- A claim the game confirmed is kept, and so is what the game found needed that nobody
  proposed (an item held that the action could not do without).
- A claim the game could not be asked about is kept only as proposed, and the lesson says how
  it is known: `observed` (the rules saw it once), `claimed` (a model said so). Once the game
  was asked about a turn, the rules' proposals it did not test are dropped (a step that did
  nothing, an item the game would not let go); a model's are kept as `claimed`.
- A proposed item the player did not hold is no precondition of what happened: dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.interfaces.claims import IClaimTester
from cairn.lessons.effects import effect_of
from cairn.lessons.reading import holds
from cairn.models.directions import normalize_action
from cairn.models.game import TurnOutcome
from cairn.models.lesson import DeathBy, DeathCause, EffectKind, Evidence, Lesson, TurnTests


def lesson_of(
    outcome: TurnOutcome,
    *,
    needs: Sequence[str] = (),
    steps: Sequence[str] = (),
    claims: IClaimTester | None = None,
    by_model: bool = False,
    refused: bool = False,
    death_reason: str | None = None,
) -> Lesson | None:
    """The lesson of `outcome` with the proposed `needs` and `steps` put to the game through
    `claims` (or taken from `outcome.tests`, when the caller already asked) and kept as the
    module docstring says; None when the turn did nothing a lesson can claim."""
    effect = effect_of(outcome, refused=refused)
    if effect is None:
        return None
    held = held_names(needs, outcome.inventory_before)
    own = normalize_action(outcome.action)  # a command is never its own step
    proposed = [s for s in dict.fromkeys(steps) if normalize_action(s) != own]
    given = outcome.tests
    blame = given.death_by or given.harm_by if given is not None else None
    if claims is not None and given is None:
        if effect.kind in (EffectKind.DIED, EffectKind.LOST):
            blame = claims.blame(outcome)
        elif held or proposed:
            given = claims.test(outcome, held, proposed)
    tests = given if given is not None and given.reproduced else None
    untested = Evidence.CLAIMED if by_model else Evidence.OBSERVED
    kept_needs, needs_untested = _kept(held, tests, items=True, by_model=by_model)
    kept_steps, steps_untested = _kept(proposed, tests, items=False, by_model=by_model)
    death = None
    fatal_too: list[str] = []
    if outcome.died and blame is DeathBy.ACTION and claims is not None:
        fatal_too = claims.fatal_too(outcome)
    if outcome.died:
        death = DeathCause(
            by=blame or DeathBy.UNKNOWN,
            action=outcome.action if blame is DeathBy.ACTION else None,
            reason=death_reason,
        )
    asked = tests is not None or blame is not None
    tested = asked and not (needs_untested or steps_untested)
    return Lesson(
        action=outcome.action,
        effect=effect,
        needs_held=kept_needs,
        steps_first=kept_steps,
        death_cause=death,
        fatal_too=fatal_too,
        evidence=Evidence.TESTED if tested else untested,
        episode=outcome.episode,
        turn=outcome.turn,
    )


def not_again(outcome: TurnOutcome, lesson: Lesson | None, claims: IClaimTester) -> bool:
    """Whether the game, asked, said the lesson's change does not happen again (a refusal
    whose world diff was a side effect, a timed event): such a change is not kept."""
    if lesson is None or lesson.effect.kind is not EffectKind.CHANGED:
        return False
    if outcome.inventory_changed:
        return False  # what the player holds changed: the state shows it, no refusal
    tests = outcome.tests or claims.test(outcome, (), ())
    return tests is not None and not tests.reproduced


def held_names(needs: Sequence[str], inventory: Sequence[str]) -> list[str]:
    """The proposed items as the inventory names them; those not held are dropped (no
    precondition of what happened)."""
    return list(
        dict.fromkeys(name for wanted in needs for name in inventory if holds(wanted, [name]))
    )


def _kept(
    proposed: list[str], tests: TurnTests | None, *, items: bool, by_model: bool
) -> tuple[list[str], bool]:
    """(the claims kept, whether any of them is untested). Once the game was asked, the
    rules' untested proposals go (what the game did not test did nothing here: a step that
    changed nothing, an item it would not let go); a model's stay, marked as claimed."""
    if tests is None:
        return proposed, bool(proposed)
    confirmed = tests.needed if items else tests.steps_needed
    was_tested = tests.item_tested if items else tests.step_tested
    untested = [p for p in proposed if not was_tested(p)] if by_model else []
    return [*confirmed, *untested], bool(untested)
