"""MemoryCore: what every part of the memory service shares: the store, the summarizer, the
publisher, the map and the policy; queries; and the helpers that make and announce entries."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from cairn.errors import SummarizerError
from cairn.events import events
from cairn.events.publisher import EventPublisher
from cairn.interfaces.claims import IClaimTester, NoClaimTests
from cairn.interfaces.clock import IClock
from cairn.interfaces.map import IMapRecorder
from cairn.interfaces.store import IMemoryStore, StoreTransaction
from cairn.interfaces.summarizer import ISummarizer
from cairn.models.memory import (
    VISIBLE_STATUSES,
    LocationRecord,
    MemoryEntry,
    MemoryScope,
)
from cairn.services import persistence
from cairn.services.clock import SystemClock
from cairn.services.draft import DraftStore
from cairn.services.memory_rules import MessagesByLocation
from cairn.services.policy import MemoryPolicy

log = logging.getLogger("cairn.services.memory_service")

VISIBLE = VISIBLE_STATUSES


class MemoryCore:
    """The shared state and queries of the memory service (see `memory_service.py`)."""

    def __init__(
        self,
        store: IMemoryStore,
        summarizer: ISummarizer,
        publisher: EventPublisher,
        map_graph: IMapRecorder,
        policy: MemoryPolicy,
        clock: IClock | None = None,
        claims: IClaimTester | None = None,
    ) -> None:
        self._store = store
        self._drafts = threading.local()
        self.claims: IClaimTester = claims or NoClaimTests()
        """Asks the game about a lesson's claims before it is kept (nothing, by default)."""
        self.clock = clock or SystemClock()
        self.summarizer = summarizer
        self.publisher = publisher
        self.map = map_graph
        self.policy = policy
        """State-changing turns that worked at the current location since arriving there."""
        self.covered: set[tuple[int | None, int]] = set()
        """(episode, message index) of messages an action outcome already read."""
        self.summarized: dict[int, dict[str, tuple[int | None, int]]] = {}
        """Per location, the texts (normalized) of messages a visit summary read, each with
        the (episode, index) of the first message that said it (a restore forgets the texts
        first read after its checkpoint)."""
        self.by_location = MessagesByLocation()
        """The conversation's messages by location (for the visit summaries)."""
        self._current = persistence.CurrentFilter()
        self.episode_started = self.clock.mark()
        """When the current episode started (`persistence`: ephemeral memories from before it
        are over)."""
        self.summary_failures = 0
        self.summarizer_calls: Counter[str] = Counter()
        """Summarizer calls by kind: synthesis, location, npc, world."""

    @property
    def store(self) -> IMemoryStore:
        """The store, or this thread's open draft (`drafting`)."""
        draft: DraftStore | None = getattr(self._drafts, "draft", None)
        return self._store if draft is None else draft

    @contextmanager
    def drafting(self) -> Iterator[DraftStore]:
        """A block whose writes (in this thread) go to a draft, not the store: its reads see
        the store with the draft's changes; what it wrote is the draft's `changes()`, for the
        caller to apply in one unit of work. The store is not locked meanwhile, so the model
        and the game can be asked inside."""
        if getattr(self._drafts, "draft", None) is not None:
            raise RuntimeError("a draft is already open in this thread")
        self._drafts.draft = draft = DraftStore(self._store)
        try:
            yield draft
        finally:
            self._drafts.draft = None

    def draft(self) -> AbstractContextManager[StoreTransaction]:
        """A block of the open draft (`drafting`), where the turn rules write: never the
        store itself."""
        draft: DraftStore | None = getattr(self._drafts, "draft", None)
        if draft is None:
            raise RuntimeError("the turn rules write only inside a draft (MemoryCore.drafting)")
        return draft.transaction()

    @property
    def synthesis_calls(self) -> int:
        """Synthesis calls so far (one kind of `summarizer_calls`)."""
        return self.summarizer_calls["synthesis"]

    # -- queries ---------------------------------------------------------------------------

    def location_memories(self, location_id: int) -> list[MemoryEntry]:
        return self.current(
            self.store.entries(
                scope=MemoryScope.LOCATION, location_id=location_id, statuses=VISIBLE
            )
        )

    def adjacent_memories(self, location_id: int) -> dict[int, list[MemoryEntry]]:
        return {n: self.location_memories(n) for n in self.map.neighbors(location_id)}

    def npc_memories(self, npc_id: str) -> list[MemoryEntry]:
        return self.current(
            self.store.entries(scope=MemoryScope.NPC, npc_id=npc_id, statuses=VISIBLE)
        )

    def world_memories(self) -> list[MemoryEntry]:
        return self.current(self.store.entries(scope=MemoryScope.WORLD, statuses=VISIBLE))

    def memories_by_id(self, memory_ids: Iterable[str]) -> list[MemoryEntry]:
        found = [self.store.get(i) for i in memory_ids]
        return self.current([e for e in found if e is not None and e.status in VISIBLE])

    def top_memories(self, limit: int = 10) -> list[MemoryEntry]:
        ranked = self.store.ranked(limit)
        shown = self.current(ranked)
        if len(shown) < len(ranked):  # ephemeral ones of earlier episodes: look further
            shown = self.current(self.store.ranked(limit + len(ranked) - len(shown) + 20))
        return shown[:limit]

    def start_episode(self) -> None:
        """A new episode starts now: ephemeral memories written before it are over."""
        self.episode_started = self.clock.mark()

    def current(self, entries: list[MemoryEntry]) -> list[MemoryEntry]:
        """`entries` without the ephemeral ones of earlier episodes (`persistence`)."""
        return self._current(entries, self.episode_started)

    def location_record(self, location_id: int) -> LocationRecord | None:
        return self.store.location(location_id)

    # -- helpers ---------------------------------------------------------------------------

    def ask(self, scope: str, call: Callable[[], str]) -> str:
        self.summarizer_calls[scope] += 1
        try:
            return call().strip()
        except SummarizerError as exc:
            self.failed(scope, exc)
            return ""

    def failed(self, scope: str, exc: SummarizerError) -> None:
        self.summary_failures += 1
        log.warning("%s summarizer failed (%s); nothing stored, cursor kept", scope, exc)
        self.publisher.publish(events.summary_failed, self, scope=scope, error=str(exc))

    def new_entry(self, **fields: Any) -> MemoryEntry:
        return MemoryEntry(
            id=self.clock.new_id(str(fields.get("title", ""))),
            created_at=self.clock.now(),
            **fields,
        )

    def superseded_callback(self, old_id: str, new_id: str) -> Callable[[], None]:
        return lambda: self.publisher.publish(
            events.memory_superseded, self, old_id=old_id, new_id=new_id
        )

    def announce(self, tx: StoreTransaction, entry: MemoryEntry) -> None:
        tx.after_commit(lambda: self.publisher.publish(events.memory_recorded, self, entry=entry))

    def add_replacing(self, entry: MemoryEntry, replaced: Iterable[MemoryEntry]) -> MemoryEntry:
        """Store `entry` in one unit of work, superseding each of `replaced` by it; the
        events (each supersession, then the new memory) are sent after commit."""
        with self.store.transaction() as tx:
            tx.add(entry)
            for old in replaced:
                tx.supersede(old.id, entry.id)
                tx.after_commit(self.superseded_callback(old.id, entry.id))
            self.announce(tx, entry)
        return entry

