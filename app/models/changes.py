"""Typed memory changes: what a unit of work adds, updates, supersedes, deletes or counts.

A store stages them (`StoreTransaction`), and a turn's interpretation returns them
(`TurnChanges`): the interactive-fiction rules decide what a turn leaves in memory as these
values, and the handler applies them in one unit of work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cairn.models.memory import MemoryEntry


@dataclass(frozen=True)
class AddOp:
    """Add a new memory."""

    entry: MemoryEntry
    seq: int | None = None
    """Its place in store order within its section (a database's sequence number); None: the
    end of its section."""


@dataclass(frozen=True)
class UpdateOp:
    """Replace the memory with the same id."""

    entry: MemoryEntry


@dataclass(frozen=True)
class SupersedeOp:
    """Mark a memory SUPERSEDED, linked by id to what replaced it (None: invalidated)."""

    old_id: str
    new_id: str | None


@dataclass(frozen=True)
class DeleteOp:
    """Remove a memory."""

    entry_id: str


@dataclass(frozen=True)
class VisitOp:
    """Count one visit to a location."""

    location_id: int
    name: str
    episode: int | None


StoreOp = AddOp | UpdateOp | SupersedeOp | DeleteOp | VisitOp



@dataclass(frozen=True)
class TurnChanges:
    """What interpreting one turn (or an episode's ending) leaves in memory, not yet written:
    the changes in order, the events to send once they are committed, and the memory the turn
    stored (what `record_action_outcome` returns; None when it stored none)."""

    ops: tuple[StoreOp, ...] = ()
    after_commit: tuple[Callable[[], None], ...] = field(default=(), compare=False)
    entry: MemoryEntry | None = None
