"""Resolve a synthesis answer's supersede/invalidate ids (and, from older answers, titles) to
the memories they name, exactly."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from cairn.models.memory import MemoryEntry, SynthesisDecision

log = logging.getLogger(__name__)


@dataclass
class Resolution:
    """Ids to supersede and to invalidate, plus what could not be used."""

    supersede: list[str] = field(default_factory=list)
    invalidate: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    clipped: list[str] = field(default_factory=list)


def resolve(
    decision: SynthesisDecision, candidates: list[MemoryEntry], max_supersessions: int
) -> Resolution:
    """The ids among `candidates` the decision names: its ids as given, and titles (older
    answers) by EXACT match (never by substring).

    Unknown ids and names are reported and ignored; ids beyond `max_supersessions` are clipped
    and reported. The new memory is never lost because of either.
    """
    by_title: dict[str, list[str]] = {}
    by_id = {c.id: c for c in candidates}
    for c in candidates:
        by_title.setdefault(c.title, []).append(c.id)
    result = Resolution()
    wanted: list[str] = [i for i in decision.supersedes_memory_ids if i in by_id]
    result.unknown += [i for i in decision.supersedes_memory_ids if i not in by_id]
    for title in decision.supersedes_memory_titles:
        ids = by_title.get(title)
        if ids is None:
            result.unknown.append(title)
        wanted += ids or []
    for memory_id in decision.invalidate_memory_ids:
        if memory_id not in by_id:
            result.unknown.append(memory_id)
        elif memory_id not in result.invalidate:
            result.invalidate.append(memory_id)
    for title in decision.invalidate_memory_titles:
        ids = by_title.get(title)
        if ids is None:
            result.unknown.append(title)
        result.invalidate += [i for i in ids or [] if i not in result.invalidate]
    seen: set[str] = set(result.invalidate)
    for entry_id in wanted:
        if entry_id in seen:
            continue
        seen.add(entry_id)
        if len(result.supersede) < max_supersessions:
            result.supersede.append(entry_id)
        else:
            result.clipped.append(entry_id)
    if result.unknown:
        log.warning("synthesis named memories that do not exist here: %s", result.unknown)
    if result.clipped:
        log.warning(
            "synthesis asked to supersede more than %d memories; not superseded: %s",
            max_supersessions,
            result.clipped,
        )
    return result
