"""The summarizer's memory of a turn: asked for (`synthesize`) and stored at its source with
what it supersedes; a procedure or a score keeps what had to be held (`store_decision`)."""

from __future__ import annotations

from cairn.errors import SummarizerError
from cairn.interfaces.claims import IClaimTester
from cairn.interfaces.summarizer import SynthesisRequest
from cairn.lessons.build import lesson_of, not_again
from cairn.models.game import TurnOutcome
from cairn.models.lesson import DeathBy, render
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, SynthesisDecision
from cairn.services.endings import ending_text
from cairn.services.memory_core import MemoryCore, log
from cairn.services.memory_rules import adds_content, move_of
from cairn.services.preconditions import needed_items
from cairn.services.replies import is_junk
from cairn.services.supersession import resolve


def synthesize(core: MemoryCore, request: SynthesisRequest) -> SynthesisDecision | None:
    """The summarizer's decision on a turn, counted; None when it failed (logged, counted
    and published as a summary failure)."""
    core.summarizer_calls["synthesis"] += 1
    log.debug(
        "turn %s: synthesis for triggers %s", request.outcome.turn, ", ".join(request.triggers)
    )
    try:
        return core.summarizer.synthesize(request)
    except SummarizerError as exc:  # a programming error is not a summary that failed
        core.failed("synthesis", exc)
        return None


def store_decision(
    core: MemoryCore,
    outcome: TurnOutcome,
    history: list[TurnOutcome],
    existing: list[MemoryEntry],
    decision: SynthesisDecision,
    death_reason: str | None = None,
) -> MemoryEntry | None:
    """The summarizer's memory of a turn, stored at its source with what it supersedes, its
    lesson's claims kept as far as the game confirmed them (`cairn.lessons.build`)."""
    source = outcome.location_before
    assert source is not None
    move = move_of(outcome)
    if not decision.should_remember or not decision.memory_title.strip():
        return None
    text = decision.memory_text.strip()
    if is_junk(text):
        log.info("synthesis kept only banners or stock replies (%r); skipped", text[:80])
        return None
    if outcome.died:
        words = ending_text(outcome.response)
        if words and words not in text:
            text = f'{text} The game said: "{words}"'
    lesson = lesson_of(
        outcome,
        needs=_proposed_needs(core, outcome, history, decision),
        steps=decision.steps_first,
        claims=core.claims,
        by_model=core.summarizer.llm_first,
        refused=decision.category is MemoryCategory.FAILURE,
        death_reason=death_reason,
    )
    if not_again(outcome, lesson, core.claims):
        # the turn's "change" did not happen again: no success claims it (a refusal whose
        # world diff was a timed event); another memory of the turn keeps no lesson
        if decision.category is MemoryCategory.SUCCESS:
            log.info("turn %s: the change did not happen again; not kept", outcome.turn)
            return None
        lesson = None
    if decision.category is MemoryCategory.DANGER and _harm_anyway(outcome, core.claims):
        log.info(
            "turn %s: the points went whatever was sent; no danger of the command", outcome.turn
        )
        return None
    text = render(text, lesson)
    same = [
        e
        for e in existing
        if e.title.strip().lower() == decision.memory_title.strip().lower()
        and e.category is decision.category
    ]
    if same and not any(adds_content(text, e.text) for e in same):
        log.info("synthesis repeated an existing memory title %r; skipped", decision.memory_title)
        return None
    first_turn = min((h.turn for h in history if h.location_before == source), default=outcome.turn)
    entry = core.new_entry(
        scope=MemoryScope.LOCATION,
        category=decision.category,
        status=decision.status,
        title=decision.memory_title.strip(),
        text=text,
        importance=decision.importance,
        persistence=level_of(decision),
        **move,  # triggers are logged, not stored
        episode=outcome.episode,
        turn_start=first_turn if decision.multi_step else outcome.turn,
        turn_end=outcome.turn,
        score_delta=outcome.score_delta,
        location_id=source,
        location_name=outcome.location_before_name or None,
        lesson=lesson,
    )
    resolution = resolve(decision, existing, core.policy.max_supersessions)
    # the same title with more to say (a procedure that now has its steps) replaces the old
    supersede = list(dict.fromkeys([*resolution.supersede, *(e.id for e in same)]))
    with core.draft() as tx:
        tx.add(entry)
        for old_id in supersede:
            tx.supersede(old_id, entry.id)
            tx.after_commit(core.superseded_callback(old_id, entry.id))
        for old_id in resolution.invalidate:
            if old_id not in supersede:
                tx.supersede(old_id, None)
        core.announce(tx, entry)
    return entry


def level_of(decision: SynthesisDecision) -> str | None:
    """The persistence level the decision gives its memory (None: none)."""
    return decision.persistence.value if decision.persistence is not None else None


def _proposed_needs(
    core: MemoryCore,
    outcome: TurnOutcome,
    history: list[TurnOutcome],
    decision: SynthesisDecision,
) -> list[str]:
    """The items proposed as needed: the model's own list; offline, for a score or a
    procedure, the items the turn names or took here (`preconditions.needed_items`)."""
    if core.summarizer.llm_first:
        return list(decision.needs_held)
    if decision.category is MemoryCategory.SUCCESS and (
        outcome.score_delta > 0 or decision.steps_first or outcome.won
    ):
        return [*decision.needs_held, *needed_items(outcome, history)]
    return list(decision.needs_held)


def _harm_anyway(outcome: TurnOutcome, claims: IClaimTester) -> bool:
    """Whether the game, asked, said the points lost this turn go whatever is sent (a death's
    lost points are the death's: its cause decides its lesson)."""
    if outcome.score_delta >= 0 or outcome.died:
        return False
    given = outcome.tests.harm_by if outcome.tests is not None else claims.blame(outcome)
    return given is DeathBy.EVENT
