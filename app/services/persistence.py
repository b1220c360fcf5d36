"""Persistence levels, as files written by the reference tool mark them (`[NOTE - core]`,
`permanent`, `ephemeral`; cairn reads and writes the level, and these rules give it meaning):

- `core` and `permanent`: the memory outlasts the pruning policy's caps (never retired for
  being one too many; only a person or a supersession ends it);
- `ephemeral`: the memory is for the episode it was written in: from the next episode on it
  leaves the prompts and the queries (it stays in the store, as it was), and when a cap
  retires memories, ephemeral ones go first.

Any other level (or none) changes nothing. Levels are compared without case.
"""

from __future__ import annotations

import functools
from datetime import datetime

from cairn.models.memory import MemoryEntry
from cairn.services.list_memo import ListMemo

KEPT_LEVELS = frozenset({"core", "permanent"})
EPHEMERAL = "ephemeral"


def level(entry: MemoryEntry) -> str:
    """The entry's persistence level, lower case ("" for none)."""
    return (entry.persistence or "").strip().lower()


def outlasts_caps(entry: MemoryEntry) -> bool:
    """Whether pruning may never retire it (`core`, `permanent`)."""
    return level(entry) in KEPT_LEVELS


@functools.lru_cache(maxsize=64)
def _is_ephemeral(text: str) -> bool:
    return text.strip().lower() == EPHEMERAL


def ephemeral(entry: MemoryEntry) -> bool:
    return entry.persistence is not None and _is_ephemeral(entry.persistence)


def cutoff(episode_started: datetime) -> datetime:
    """The time before which an ephemeral memory belongs to an earlier episode (to the second:
    Memories.md keeps times to the second, so one written in the episode's first second stays
    current)."""
    return episode_started.replace(microsecond=0)


def current_only(entries: list[MemoryEntry], episode_started: datetime) -> list[MemoryEntry]:
    """`entries` without the ephemeral memories of earlier episodes (`entries` itself when
    there are none). The level is read only for an entry that has one and is old enough."""
    before = cutoff(episode_started)
    kept = [
        e
        for e in entries
        if not (e.persistence and e.created_at < before and _is_ephemeral(e.persistence))
    ]
    return entries if len(kept) == len(entries) else kept


class CurrentFilter:
    """`current_only` that remembers which lists lost nothing (`ListMemo`): such a list of the
    very same memories, in the same episode, is handed back without reading each again."""

    def __init__(self) -> None:
        self._whole: ListMemo[bool] = ListMemo()

    def __call__(self, entries: list[MemoryEntry], episode_started: datetime) -> list[MemoryEntry]:
        found, whole = self._whole.get(entries, episode_started)
        if found and whole:
            return entries
        answer = current_only(entries, episode_started)
        self._whole.put(entries, answer is entries, episode_started)
        return answer
