"""Deaths and endings, stored where they lie: an attacker's lesson, the winning command at its
room, and the episode's ending as a world memory (a dark room's lesson: `dark_rooms.py`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from cairn.events import events
from cairn.fiction.llm_first import ending_by_model
from cairn.fiction.turn_writes import add_at_source
from cairn.interfaces.summarizer import RulesVerdict
from cairn.lessons.build import lesson_of
from cairn.models.game import GameState, TurnOutcome
from cairn.models.kinds import WorldEvent
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
    MemoryStatus,
    SynthesisDecision,
)
from cairn.services.causes import (
    LESSON_TAG,
    Diagnosis,
    as_tested,
    attacker_lesson_text,
    attacker_lesson_title,
    death_words,
    diagnose,
)
from cairn.services.endings import CAUSE_WORDS, DeathCause, ending_text
from cairn.services.memory_core import MemoryCore
from cairn.services.outcomes import first_sentences, normalize_command
from cairn.services.replies import is_stock, without_banners

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def as_attacker_lesson(
    core: MemoryCore, entry: MemoryEntry | None, outcome: TurnOutcome, found: Diagnosis
) -> MemoryEntry | None:
    """A death in a fight, as the summarizer remembered it (what it superseded stands): a
    memory that blames the command ("Died by 'north'") becomes the attacker's lesson at
    the room ("In <room> (L<id>) the <attacker> attacks and can kill ..."), so that the
    move last taken is no danger."""
    if entry is None or entry.category is not MemoryCategory.DANGER:
        return entry
    if f"'{normalize_command(outcome.action)}'" not in entry.title.lower():
        return entry
    lesson = entry.model_copy(
        update={
            "title": attacker_lesson_title(found.detail),
            "text": attacker_lesson_text(
                found, outcome.episode, outcome.turn, death_words(outcome.response)
            ),
            "tags": list(
                dict.fromkeys([*entry.tags, LESSON_TAG, f"cause:{DeathCause.COMBAT.value}"])
            ),
            "via": None,
            "leads_to": None,
        }
    )
    with core.draft() as tx:
        tx.update(lesson)
    return lesson


def death_decision(outcome: TurnOutcome, existing: Sequence[MemoryEntry]) -> SynthesisDecision:
    """The rules' memory of a death the command or an attacker caused, as the rule-based
    summarizer decides it offline ("Died by 'north'": "'north' here was fatal: ..."; every
    TENTATIVE memory here superseded), for the LLM-first path to write when the model repeats
    it, fails or is down; `RuleBasedSummarizer.synthesize` answers a death with it too."""
    flat = " ".join(without_banners(outcome.response).split())
    news = " ".join(
        s
        for s in (first_sentences(part) for part in _SENTENCE_END.split(flat) if part)
        if not is_stock(s)
    )
    gist = news or first_sentences(outcome.response)
    return SynthesisDecision(
        should_remember=True,
        category=MemoryCategory.DANGER,
        memory_title=f"Died by '{outcome.action}'",
        memory_text=f"'{outcome.action}' here was fatal: {ending_text(outcome.response) or gist}",
        importance=900,
        supersedes_memory_ids=[e.id for e in existing if e.status is MemoryStatus.TENTATIVE],
        reasoning="death is always worth remembering; it confirms earlier guesses",
    )


def death_hint(
    outcome: TurnOutcome, found: Diagnosis, existing: Sequence[MemoryEntry]
) -> RulesVerdict:
    """A death the command or an attacker caused, as the rules' hint to a model summarizer
    (`by_rules`): the outcome, its cause class and the memory the rules would write (an
    attacker's lesson at the room for combat, else the command's danger), in place of every
    TENTATIVE memory here."""
    cause = found.cause
    who = f": the {found.detail}" if cause is DeathCause.COMBAT and found.detail else ""
    reason = f"cause {cause.value} ({CAUSE_WORDS[cause]}{who})"
    decision = death_decision(outcome, existing)
    title, text = decision.memory_title, decision.memory_text
    if cause is DeathCause.COMBAT:
        title = attacker_lesson_title(found.detail)
        text = attacker_lesson_text(
            found, outcome.episode, outcome.turn, death_words(outcome.response)
        )
        reason += "; the attacker, not the command, is the danger here"
    else:
        reason += "; the command taken here is the danger"
    return RulesVerdict(
        outcome="death",
        reason=reason,
        category=MemoryCategory.DANGER,
        title=title,
        text=text,
        replaces=[e.id for e in existing if e.status is MemoryStatus.TENTATIVE],
    )


def world_ending_hint(found: Diagnosis) -> RulesVerdict:
    """A death the command taken did not cause (a clock, a need such as hunger or air, the
    plot), as the rules' hint to a model summarizer (`by_rules`): the rules write nothing at
    the room (the ending is the world's, `record_ending` remembers it), so a model that sees
    what a player could do about it (drink before the thirst ends it, leave before the
    timer) writes that lesson here; one that agrees with the rules writes nothing."""
    cause = found.cause
    return RulesVerdict(
        outcome="death",
        reason=(
            f"cause {cause.value} ({CAUSE_WORDS[cause]}); not the command taken here: the"
            " game's own ending, remembered in the world scope. Remember something here only"
            " if it tells a player what to do before it happens again"
        ),
    )


def _win_memory(outcome: TurnOutcome) -> tuple[str, str]:
    """The title and text of the winning command's memory."""
    action = normalize_command(outcome.action)
    words = ending_text(outcome.response)
    return f"Won the game by '{action}'", f"'{action}' here won the game: {words}"


def win_hint(outcome: TurnOutcome) -> RulesVerdict:
    """The winning command's memory as the rules' hint to a model summarizer (`by_rules`)."""
    title, text = _win_memory(outcome)
    return RulesVerdict(
        outcome="win",
        reason="the game says it was won: the command taken here won it",
        category=MemoryCategory.SUCCESS,
        title=title,
        text=text,
    )


def record_win_here(core: MemoryCore, outcome: TurnOutcome) -> MemoryEntry | None:
    """The winning command, at the room where it won, in the game's words."""
    title, text = _win_memory(outcome)
    return add_at_source(
        core,
        outcome,
        category=MemoryCategory.SUCCESS,
        title=title,
        text=text,
        importance=1000,
        tags=["ending:won"],
        source=MemorySource.ENDING,
    )


def record_ending(
    core: MemoryCore, game_state: GameState, final: TurnOutcome
) -> MemoryEntry | None:
    if not (final.won or final.died):
        return None
    room = final.location_before_name or (
        f"location {final.location_before}" if final.location_before is not None else ""
    )
    where = f" in {room}" if room else ""
    words = ending_text(final.response) or final.response.strip()
    action = normalize_command(final.action)
    if final.won:
        title = f"Won the game{where} at turn {final.turn}"
        category = MemoryCategory.SUCCESS
        kind = WorldEvent.GAME_WON
    else:
        found = diagnose(final, game_state.turns)
        given = final.tests
        found = as_tested(found, given.death_by if given is not None else core.claims.blame(final))
        cause = found.cause
        how = f"by '{action}'" if found.blames_command else f"({CAUSE_WORDS[cause]})"
        title = f"Died{where} at turn {final.turn} {how}"
        category = MemoryCategory.DANGER
        kind = WorldEvent.PLAYER_DIED
    last = game_state.conversation_history[-1].index if game_state.conversation_history else -1
    if any(_same_ending(e, title, words, kind, final) for e in core.world_memories()):
        game_state.scenario.last_world_message_index = last  # the same ending, merged
        return None
    entry = core.new_entry(
        scope=MemoryScope.WORLD,
        category=category,
        title=title,
        text=words,
        importance=1000 if final.won else 900,
        tags=[f"world:{kind}", "ending", f"episode:{final.episode}"]
        + ([] if final.won else [f"cause:{cause.value}"]),
        source=MemorySource.ENDING,
        episode=final.episode,
        turn_start=final.turn,
        turn_end=final.turn,
        score_delta=final.score_delta,
        location_id=final.location_before,
        lesson=lesson_of(
            final, claims=core.claims, death_reason=None if final.won else cause.value
        ),
    )
    if core.summarizer.llm_first:  # the rules propose; the model's answer is the memory
        answer = ending_by_model(core, game_state, final, entry)
        if answer is None:
            game_state.scenario.last_world_message_index = last  # (the ending is read)
            return None
        entry = answer
    with core.draft() as tx:
        tx.add(entry)
        tx.after_commit(lambda: setattr(game_state.scenario, "last_world_message_index", last))
        tx.after_commit(
            lambda: core.publisher.publish(
                events.world_event_recorded, core, event_kind=kind, related={}
            )
        )
        core.announce(tx, entry)
    return entry


def _same_ending(
    memory: MemoryEntry, title: str, words: str, kind: WorldEvent, final: TurnOutcome
) -> bool:
    """Whether `memory` is this ending already: the rules' own (its title and words), or one a
    model wrote of it (an ending of its kind at its room and turn that keeps its words)."""
    if memory.title == title and memory.text == words:
        return True
    return (
        "ending" in memory.tags
        and f"world:{kind}" in memory.tags
        and memory.location_id == final.location_before
        and memory.turn_start == final.turn
        and bool(words)
        and words in memory.text
    )
