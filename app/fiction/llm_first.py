"""LLM-first routing: a turn the rules write themselves goes, with a model, to the summarizer,
the rules' verdict shown to it as a hint (`by_rules`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cairn.fiction.synthesis_memories import level_of, store_decision, synthesize
from cairn.fiction.turn_writes import as_of
from cairn.interfaces.summarizer import RulesVerdict, SynthesisRequest
from cairn.models.game import GameState, TurnOutcome
from cairn.models.kinds import Trigger
from cairn.models.memory import MemoryEntry
from cairn.services.endings import ending_text
from cairn.services.memory_core import MemoryCore, log
from cairn.services.supersession import resolve
from cairn.services.triggers import detect_triggers


def by_rules(
    core: MemoryCore,
    outcome: TurnOutcome,
    history: list[TurnOutcome],
    existing: list[MemoryEntry],
    hint: RulesVerdict | None,
    write: Callable[[], MemoryEntry | None],
    triggers: Sequence[str] = (),
) -> MemoryEntry | None:
    """A turn the rules write themselves (a failure, a success that did nothing this time,
    a new way between known rooms, a dark room's lesson, the command's or an attacker's death,
    a win). Offline, `write` does it. With a model
    (`ISummarizer.llm_first`), the summarizer decides, `hint` (what the rules make of the
    turn and the memory they would write) shown to it: an answer that repeats the rules'
    memory word for word keeps `write`'s, with the persistence level the answer gives it,
    plus what else it supersedes (a TENTATIVE guess this turn contradicts); another answer is
    stored as synthesis stores it. When the model fails, the rules decide alone (`write`)."""
    if hint is None or not core.summarizer.llm_first:
        return write()
    fired = list(triggers) or detect_triggers(
        outcome, first_visit=False, long_response_chars=core.policy.long_response_chars
    )
    request = SynthesisRequest(
        outcome=outcome, triggers=fired, existing=existing, history=history, hint=hint
    )
    decision = synthesize(core, request)
    if decision is None:
        return write()
    if not hint.agrees(decision):
        return store_decision(core, outcome, history, existing, decision)
    entry = write()
    if entry is None:
        return None
    level = level_of(decision)
    if level is not None and level != entry.persistence:
        entry = entry.model_copy(update={"persistence": level})
        with core.draft() as tx:
            tx.update(entry)
    resolution = resolve(decision, existing, core.policy.max_supersessions)
    assert outcome.location_before is not None
    visible = {e.id for e in core.location_memories(outcome.location_before)} - {entry.id}
    supersede = [i for i in resolution.supersede if i in visible]
    invalidate = [i for i in resolution.invalidate if i in visible and i not in supersede]
    if supersede or invalidate:
        with core.draft() as tx:
            if supersede and (now := as_of(entry, outcome)) is not entry:
                entry = now  # (an older memory the rules updated supersedes as of this turn)
                tx.update(entry)
            for old_id in supersede:
                tx.supersede(old_id, entry.id)
                tx.after_commit(core.superseded_callback(old_id, entry.id))
            for old_id in invalidate:
                tx.supersede(old_id, None)
    return entry


def ending_by_model(
    core: MemoryCore, game_state: GameState, final: TurnOutcome, rules: MemoryEntry
) -> MemoryEntry | None:
    """The episode's ending with a model: the rules' world memory (`rules`: where, when, how,
    in the game's words) is proposed as the hint, and the answer is the memory. One that
    repeats it word for word, or a failed call, keeps the rules' (with the answer's level);
    an answer not to remember keeps nothing (None); another answer is the memory, in the
    model's words, with the rules' record of the ending (its scope, tags, turn and typed
    lesson) and the game's own words when it left them out."""
    hint = RulesVerdict(
        outcome="win" if final.won else "death",
        reason=(
            "the episode ended here; the rules keep its ending in the world scope, where every"
            " later episode sees it"
        ),
        category=rules.category,
        title=rules.title,
        text=rules.text,
    )
    earlier = [t for t in game_state.turns if t.turn < final.turn]
    window = core.policy.memory_history_window
    request = SynthesisRequest(
        outcome=final,
        triggers=[Trigger.DEATH] if final.died else [],
        history=earlier[-window:] if window else [],
        hint=hint,
    )
    decision = synthesize(core, request)
    if decision is None:
        return rules
    level = level_of(decision)
    if hint.agrees(decision):
        return rules.model_copy(update={"persistence": level}) if level else rules
    if not decision.should_remember or not decision.memory_title.strip():
        log.info("turn %s: the model keeps no memory of the ending", final.turn)
        return None
    text = decision.memory_text.strip()
    words = ending_text(final.response) or final.response.strip()
    if words and words not in text:
        text = f'{text} The game said: "{words}"'
    return rules.model_copy(
        update={
            "title": decision.memory_title.strip(),
            "text": text,
            "category": decision.category,
            "status": decision.status,
            "importance": decision.importance,
            "persistence": level,
        }
    )
