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

from cairn.lessons.effects import effect_of
from cairn.lessons.reading import holds
from cairn.models.directions import normalize_action
from cairn.models.game import TurnOutcome
from cairn.models.lesson import DeathBy, DeathCause, Evidence, Lesson, TurnTests


def lesson_of(
    outcome: TurnOutcome,
    *,
    needs: Sequence[str] = (),
    steps: Sequence[str] = (),
    by_model: bool = False,
    refused: bool = False,
    death_reason: str | None = None,
) -> Lesson | None:
    """The lesson of `outcome` with the proposed `needs` and `steps` tested as the module
    docstring says; None when the turn did nothing a lesson can claim."""
    effect = effect_of(outcome, refused=refused)
    if effect is None:
        return None
    tests = outcome.tests if outcome.tests is not None and outcome.tests.reproduced else None
    untested = Evidence.CLAIMED if by_model else Evidence.OBSERVED
    held = list(
        dict.fromkeys(
            name for wanted in needs for name in outcome.inventory_before if holds(wanted, [name])
        )
    )
    kept_needs, needs_untested = _kept(held, tests, items=True, by_model=by_model)
    own = normalize_action(outcome.action)  # a command is never its own step
    proposed = [s for s in dict.fromkeys(steps) if normalize_action(s) != own]
    kept_steps, steps_untested = _kept(proposed, tests, items=False, by_model=by_model)
    death = None
    if outcome.died:
        by = outcome.tests.death_by if outcome.tests is not None else None
        death = DeathCause(
            by=by or DeathBy.UNKNOWN,
            action=outcome.action if by is DeathBy.ACTION else None,
            reason=death_reason,
        )
    harm = outcome.tests.harm_by if outcome.tests is not None else None
    asked = (
        tests is not None
        or (death is not None and death.by is not DeathBy.UNKNOWN)
        or harm is not None
    )
    tested = asked and not (needs_untested or steps_untested)
    return Lesson(
        action=outcome.action,
        effect=effect,
        needs_held=kept_needs,
        steps_first=kept_steps,
        death_cause=death,
        evidence=Evidence.TESTED if tested else untested,
        episode=outcome.episode,
        turn=outcome.turn,
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
