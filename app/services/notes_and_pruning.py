"""An agent's notes (`remember`), the end of an episode and pruning (read key by key)."""

from __future__ import annotations

from cairn.models.game import GameState
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemorySource, Way
from cairn.services import policy as pruning
from cairn.services.memory_core import VISIBLE, MemoryCore
from cairn.services.memory_rules import location_name
from cairn.services.similarity import is_similar, short_title


def remember(
    core: MemoryCore,
    game_state: GameState,
    text: str,
    importance: int,
    location_id: int | None = None,
    tags: list[str] | None = None,
    ways_in: list[Way] | None = None,
) -> MemoryEntry | None:
    text = text.strip()
    if not text:
        return None
    importance = max(1, min(1000, int(importance)))
    with core.store.transaction() as tx:
        # the same words about another place are another note: dedupe per location
        here = (
            core.store.entries(location_id=location_id, statuses=VISIBLE)
            if location_id is not None
            else core.store.entries(scope=MemoryScope.WORLD, statuses=VISIBLE)
        )
        for note in here:
            if note.location_id != location_id:
                continue
            if note.source is MemorySource.NOTE and is_similar(text, note.text):
                if importance > note.importance:
                    tx.update(note.model_copy(update={"importance": importance}))
                return None
        entry = core.new_entry(
            scope=MemoryScope.LOCATION if location_id is not None else MemoryScope.WORLD,
            category=MemoryCategory.NOTE,
            title=short_title(text),
            text=text,
            importance=importance,
            tags=["note", *(tags or [])],
            ways_in=list(ways_in or []),
            source=MemorySource.NOTE,
            episode=game_state.episode,
            turn_start=game_state.turn,
            turn_end=game_state.turn,
            location_id=location_id,
            location_name=location_name(game_state, location_id),
        )
        tx.add(entry)
        core.announce(tx, entry)
    return entry


def end_episode(core: MemoryCore, game_state: GameState) -> None:
    game_state.turns = []
    with core.store.transaction() as tx:
        prune(core)
        # once the episode is stored: fold the store's recent part, archive SUPERSEDED
        tx.after_commit(core.store.checkpoint)
        tx.after_commit(core.start_episode)  # (the episode's ephemeral memories are over)


def prune(core: MemoryCore) -> list[str]:
    with core.store.transaction() as tx:
        return pruning.prune(prunable(core), core.policy, tx)


def prunable(core: MemoryCore) -> list[MemoryEntry]:
    """The memories of the scope keys pruning has work in (more visible memories than the
    cap, or more SUPERSEDED than it keeps), read key by key: the store's counts say which,
    so the others are never read (at 10,000 memories, reading them all cost an episode's
    end a tenth of a second)."""
    policy = core.policy
    found: list[MemoryEntry] = []
    for key, (visible, hidden) in core.store.scope_counts().items():
        if visible <= policy.cap_for(key[0]) and hidden <= policy.superseded_kept_per_key:
            continue
        scope, name = key
        if scope is MemoryScope.LOCATION and name.lstrip("-").isdigit():
            candidates = core.store.entries(scope=scope, location_id=int(name))
        elif scope is MemoryScope.NPC and name:
            candidates = core.store.entries(scope=scope, npc_id=name)
        else:
            candidates = core.store.entries(scope=scope)
        found.extend(e for e in candidates if pruning.scope_key(e) == key)
    return found
