"""MemoryPolicy: the tunable limits of the memory service, and the pruning policy."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from cairn.interfaces.store import StoreTransaction
from cairn.models.memory import (
    CapKey,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
    MemoryStatus,
    cap_key,
)
from cairn.services import persistence

log = logging.getLogger(__name__)


class MemoryPolicy(BaseModel):
    """Limits of the memory service (all configurable through settings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_history_window: int = Field(3, ge=1)
    world_message_window: int = Field(30, ge=1)
    long_response_chars: int = Field(100, ge=0)
    max_supersessions: int = Field(3, ge=0)
    cap_per_location: int = Field(40, ge=1)
    cap_per_npc: int = Field(20, ge=1)
    cap_world: int = Field(50, ge=1)
    superseded_kept_per_key: int = Field(100, ge=0)

    @classmethod
    def from_settings(cls, settings: Mapping[str, object]) -> MemoryPolicy:
        """The policy's fields picked from the settings (same names); the rest is ignored."""
        return cls.model_validate({k: settings[k] for k in cls.model_fields if k in settings})

    def cap_for(self, scope: MemoryScope) -> int:
        """The visible-memory cap of one scope key."""
        return {
            MemoryScope.LOCATION: self.cap_per_location,
            MemoryScope.NPC: self.cap_per_npc,
            MemoryScope.WORLD: self.cap_world,
        }[scope]


def scope_key(entry: MemoryEntry) -> CapKey:
    """The key a cap applies to: one location, one NPC, or the world."""
    return cap_key(entry.scope, entry.location_id, entry.npc_ids)


_KIND_ORDER = {
    MemoryCategory.NOTE: 1,
    MemoryCategory.DISCOVERY: 2,
    MemoryCategory.SUCCESS: 3,
    MemoryCategory.FAILURE: 3,
    MemoryCategory.DANGER: 4,
}


def _usefulness(entry: MemoryEntry) -> int:
    """How much a memory is worth keeping by its kind: a visit summary least, a danger most."""
    return 0 if entry.source is MemorySource.VISIT else _KIND_ORDER[entry.category]


def prune(entries: Iterable[MemoryEntry], policy: MemoryPolicy, tx: StoreTransaction) -> list[str]:
    """Stage the pruning policy; return one line per memory retired or removed.

    1. Per scope key, at most `cap` visible (ACTIVE or TENTATIVE) memories. The excess is
       RETIRED, never deleted, least useful kind first: `ephemeral` ones (`persistence`),
       TENTATIVE, then visit summaries, then notes, discoveries, successes and failures,
       dangers last; inside a kind the lowest importance, then the oldest. `core` and
       `permanent` memories are never retired. A retired memory becomes SUPERSEDED (no
       successor) with the tag `pruned`, stays on disk and leaves the prompts.
    2. Per scope key, at most `superseded_kept_per_key` SUPERSEDED memories are kept; the
       oldest beyond that are removed. Only SUPERSEDED memories are ever removed.
    """
    groups: dict[tuple[MemoryScope, str], list[MemoryEntry]] = {}
    for entry in entries:
        groups.setdefault(scope_key(entry), []).append(entry)
    lines: list[str] = []
    for key, group in groups.items():
        visible = [e for e in group if e.visible]
        superseded = [e for e in group if not e.visible]
        excess = len(visible) - policy.cap_for(key[0])
        if excess > 0:
            order = sorted(
                (e for e in visible if not persistence.outlasts_caps(e)),
                key=lambda e: (
                    not persistence.ephemeral(e),
                    e.status is not MemoryStatus.TENTATIVE,
                    _usefulness(e),
                    e.importance,
                    e.created_at,
                ),
            )
            for entry in order[:excess]:
                tx.update(
                    entry.model_copy(
                        update={
                            "status": MemoryStatus.SUPERSEDED,
                            "tags": [*entry.tags, "pruned"],
                        }
                    )
                )
                lines.append(f"retired {entry.id} ({key[0]} {key[1]}): {entry.title}")
        drop = len(superseded) - policy.superseded_kept_per_key
        if drop > 0:
            for entry in sorted(superseded, key=lambda e: e.created_at)[:drop]:
                tx.delete(entry.id)
                lines.append(f"removed superseded {entry.id} ({key[0]} {key[1]}): {entry.title}")
    for line in lines:
        log.info("prune: %s", line)
    return lines
