"""A dark room's lesson, stored at the room: planned (`dark_lesson`), proposed to a model
(`dark_hint`) and written (`record_dark_room`), so that what a model is shown is what the
rules would write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cairn.fiction.turn_writes import as_of
from cairn.interfaces.claims import IClaimTester
from cairn.interfaces.summarizer import RulesVerdict
from cairn.models.game import TurnOutcome
from cairn.models.lesson import DeathBy, Effect, EffectKind, Evidence, Lesson
from cairn.models.lesson import DeathCause as LessonCause
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemorySource
from cairn.services.causes import (
    DARK_TAG,
    LESSON_TAG,
    Diagnosis,
    as_fields,
    blamed_command,
    dark_lesson_text,
    dark_lesson_title,
    dark_words,
    death_words,
    is_move,
    ways_of,
    with_death,
    with_ways_in,
)
from cairn.services.memory_core import MemoryCore
from cairn.services.outcomes import verdict


@dataclass(frozen=True)
class DarkLesson:
    """The darkness lesson the rules would write: `entry`, either the room's lesson updated
    (`updates`) or a new one superseding the dangers in `replaces` that blamed a move."""

    entry: MemoryEntry
    updates: bool
    replaces: list[MemoryEntry]


def dark_lesson(
    core: MemoryCore, outcome: TurnOutcome, found: Diagnosis, *, died: bool = True
) -> DarkLesson | None:
    """A room the game describes as dark: the lesson is the room's ("Vault (L7) is dark:
    entering without a lit light ends in death (...). Ways in: 'down' from Hall (L3)."),
    written when the player first finds it dark and told again when the dark kills, never
    a danger of the move last taken there. The lesson already there gains the new ways in;
    a danger here that blamed a move for the same death words is superseded by it. None when
    the lesson there says it all already."""
    room = found.room
    assert room is not None
    here = core.location_memories(room)
    words = death_words(outcome.response) if died else dark_words(outcome.response)
    text = dark_lesson_text(found, outcome.episode, outcome.turn, words, died=died)
    earlier = next((e for e in here if DARK_TAG in e.tags), None)
    if earlier is not None:
        ways = as_fields([*ways_of(earlier), *found.ways_in])
        if died and earlier.category is not MemoryCategory.DANGER:
            text = with_death(earlier.text, text)
        else:
            text = with_ways_in(earlier.text, found.ways_in)
        if text == earlier.text and ways == earlier.ways_in:
            return None
        update: dict[str, Any] = {"text": text, "ways_in": ways}
        if died:
            update["importance"] = max(earlier.importance, 950)
            update["source"] = MemorySource.ENDING
            update["category"] = MemoryCategory.DANGER  # a death happened: now a danger
            update["title"] = dark_lesson_title(died=True)
            update["lesson"] = _dark_death(outcome, core.claims)
        return DarkLesson(as_of(earlier.model_copy(update=update), outcome), True, [])
    entry = core.new_entry(
        scope=MemoryScope.LOCATION,
        category=MemoryCategory.DANGER if died else MemoryCategory.NOTE,
        title=dark_lesson_title(died),
        text=text,
        lesson=_dark_death(outcome, core.claims) if died else None,
        ways_in=as_fields(found.ways_in),
        importance=950 if died else 800,
        tags=[LESSON_TAG, DARK_TAG],
        source=MemorySource.ENDING if died else MemorySource.ACTION,
        episode=outcome.episode,
        turn_start=outcome.turn,
        turn_end=outcome.turn,
        location_id=room,
        location_name=found.room_name or None,
    )
    blamed = [
        e
        for e in here
        if died
        and e.category is MemoryCategory.DANGER
        and LESSON_TAG not in e.tags
        and (command := blamed_command(e.title)) is not None
        and is_move(command)
        and words
        and words in e.text
    ]
    return DarkLesson(entry, False, blamed)


def record_dark_room(
    core: MemoryCore,
    outcome: TurnOutcome,
    found: Diagnosis,
    *,
    died: bool = True,
    planned: DarkLesson | None = None,
) -> MemoryEntry | None:
    """Write the darkness lesson (`dark_lesson`; `planned` when already made)."""
    lesson = planned or dark_lesson(core, outcome, found, died=died)
    if lesson is None:
        return None
    if lesson.updates:
        with core.draft() as tx:
            tx.update(lesson.entry)
            core.announce(tx, lesson.entry)
        return lesson.entry
    return core.add_replacing(lesson.entry, lesson.replaces)


def _dark_death(outcome: TurnOutcome, claims: IClaimTester) -> Lesson:
    """The lesson of a death in the dark: what the game said of the command taken there."""
    tests = outcome.tests
    by = tests.death_by if tests is not None else claims.blame(outcome)
    return Lesson(
        action=outcome.action,
        effect=Effect(kind=EffectKind.DIED),
        death_cause=LessonCause(
            by=by or DeathBy.UNKNOWN,
            action=outcome.action if by is DeathBy.ACTION else None,
            reason="darkness",
        ),
        evidence=Evidence.TESTED if by is not None else Evidence.OBSERVED,
        episode=outcome.episode,
        turn=outcome.turn,
    )


def dark_hint(outcome: TurnOutcome, lesson: DarkLesson, *, died: bool = True) -> RulesVerdict:
    """The darkness lesson as the rules' hint to a model summarizer (`by_rules`): the memory
    they would write, word for word, at the dark room."""
    entry = lesson.entry
    reason = (
        "died in a room last described as dark, with no light lit: the room is the cause,"
        " not the command taken there"
        if died
        else "the room reached is dark: without a lit light nothing can be seen there"
    )
    room = entry.location_name or "the dark room"
    where = f"; the rules keep it at {room} (L{entry.location_id})"
    return RulesVerdict(
        outcome=verdict(outcome).value,
        reason=reason + where,
        category=entry.category,
        title=entry.title,
        text=entry.text,
        replaces=[entry.id] if lesson.updates else [e.id for e in lesson.replaces],
    )
