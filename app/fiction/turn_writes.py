"""A turn's plain facts, stored at the room where it was taken: the same memory again is
merged (`add_at_source`); a new way between known rooms is a map fact (`record_move`)."""

from __future__ import annotations

from typing import Any

from cairn.models.game import TurnOutcome
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemorySource
from cairn.services.memory_core import MemoryCore
from cairn.services.outcomes import normalize_command


def record_move(
    core: MemoryCore, outcome: TurnOutcome, move: dict[str, object]
) -> MemoryEntry | None:
    """A new way between rooms already seen: a fact of the map, remembered with no
    summarizer call (a first visit, a score or a way that failed before still asks)."""
    action = normalize_command(outcome.action)
    after = outcome.location_after
    record = core.store.location(after) if after is not None else None
    known = record.name if record is not None else ""
    where = outcome.location_after_name or known or f"location {after}"
    return add_at_source(
        core,
        outcome,
        category=MemoryCategory.NOTE,
        title=f"'{action}' leads to {where}",
        text=f"'{action}' from here reaches {where} (L{outcome.location_after}).",
        importance=300,
        source=MemorySource.MOVE,
        **move,
    )


def as_of(entry: MemoryEntry, outcome: TurnOutcome) -> MemoryEntry:
    """`entry` told again at this turn (updated, or superseding others now): its last turn is
    the outcome's, so a mark that names when it superseded another names this turn. Only in
    the entry's own episode and never before its first turn (agents sharing a memory space
    count their own turns); otherwise `entry` as it is."""
    start = entry.turn_start
    last = entry.turn_end if entry.turn_end is not None else start
    if entry.episode != outcome.episode or start is None or outcome.turn < start:
        return entry
    if last is not None and outcome.turn <= last:
        return entry
    return entry.model_copy(update={"turn_end": outcome.turn})


def add_at_source(core: MemoryCore, outcome: TurnOutcome, **fields: Any) -> MemoryEntry | None:
    """Store one memory of this turn at the room where it was taken, in its own unit. The
    same memory again (category, title and text) is merged into the one there: nothing is
    added; the same title from the same source with other words (a win, later) supersedes
    the old one."""
    assert outcome.location_before is not None
    same = [
        e
        for e in core.location_memories(outcome.location_before)
        if e.category is fields.get("category")
        and e.title == fields.get("title")
        and e.source is fields.get("source", MemorySource.ACTION)
    ]
    if any(e.text == fields.get("text") for e in same):
        return None
    entry = core.new_entry(
        scope=MemoryScope.LOCATION,
        episode=outcome.episode,
        turn_start=outcome.turn,
        turn_end=outcome.turn,
        score_delta=outcome.score_delta,
        location_id=outcome.location_before,
        location_name=outcome.location_before_name or None,
        **fields,
    )
    return core.add_replacing(entry, same)
