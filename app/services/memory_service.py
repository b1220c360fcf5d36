"""MemoryService: location, NPC and world summaries with cursors; action outcomes; notes;
checkpoints of a saved game.

It is composed of collaborators over one `MemoryCore` (`memory_core.py`: the store,
summarizer, publisher, map and policy, the queries, and the helpers that make and announce
entries): `ScopedSummaries` (`scoped_summaries.py`: visits, NPCs, world events), notes and
pruning (`notes_and_pruning.py`) and the checkpoint functions (`checkpoints.py`). What a turn
or an ending leaves in memory is decided by the turn rules it is given (`ITurnInterpreter`,
`rules=`) as typed changes, then written in one unit of work (`apply`). Each holds the core;
none shares state any other way. Every method writes in one unit of work; cursors advance in
after-commit callbacks, so a cursor never moves past a message whose memory was not stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager

from cairn.errors import ConfigError
from cairn.events.publisher import EventPublisher
from cairn.interfaces.claims import IClaimTester
from cairn.interfaces.clock import IClock
from cairn.interfaces.map import IMapRecorder
from cairn.interfaces.memory_service import IMemoryCheckpoints, IMemoryService
from cairn.interfaces.store import IMemoryStore
from cairn.interfaces.summarizer import ISummarizer
from cairn.interfaces.turns import IDraft, ITurnInterpreter
from cairn.models.changes import TurnChanges
from cairn.models.checkpoint import MemoryCheckpoint, RestoreReport
from cairn.models.game import GameState, TurnOutcome
from cairn.models.kinds import EventRelated, WorldEvent
from cairn.models.memory import LocationRecord, MemoryEntry, Way
from cairn.services import checkpoints, notes_and_pruning
from cairn.services.memory_core import VISIBLE, MemoryCore
from cairn.services.policy import MemoryPolicy
from cairn.services.scoped_summaries import VISIT_IMPORTANCE, ScopedSummaries

__all__ = ["VISIBLE", "VISIT_IMPORTANCE", "MemoryCore", "MemoryService"]


class MemoryService(IMemoryService, IMemoryCheckpoints):
    """Implements IMemoryService and IMemoryCheckpoints over an IMemoryStore and an
    ISummarizer (see the module docstring)."""

    def __init__(
        self,
        store: IMemoryStore,
        summarizer: ISummarizer,
        publisher: EventPublisher,
        map_graph: IMapRecorder,
        policy: MemoryPolicy,
        clock: IClock | None = None,
        claims: IClaimTester | None = None,
        rules: Callable[[MemoryCore], ITurnInterpreter] | None = None,
    ) -> None:
        self.core = MemoryCore(store, summarizer, publisher, map_graph, policy, clock, claims)
        self._scoped = ScopedSummaries(self.core)
        self._rules = rules(self.core) if rules is not None else None
        """What a turn leaves in memory (`ITurnInterpreter`; the container gives the
        interactive-fiction rules, `cairn.fiction.FictionRules`)."""

    # -- figures (the core's) ----------------------------------------------------------------

    @property
    def summary_failures(self) -> int:
        return self.core.summary_failures

    @property
    def summarizer_calls(self) -> Counter[str]:
        return self.core.summarizer_calls

    @property
    def synthesis_calls(self) -> int:
        return self.core.synthesis_calls

    # -- queries -----------------------------------------------------------------------------

    def location_memories(self, location_id: int) -> list[MemoryEntry]:
        return self.core.location_memories(location_id)

    def adjacent_memories(self, location_id: int) -> dict[int, list[MemoryEntry]]:
        return self.core.adjacent_memories(location_id)

    def npc_memories(self, npc_id: str) -> list[MemoryEntry]:
        return self.core.npc_memories(npc_id)

    def world_memories(self) -> list[MemoryEntry]:
        return self.core.world_memories()

    def top_memories(self, limit: int = 10) -> list[MemoryEntry]:
        return self.core.top_memories(limit)

    def memories_by_id(self, memory_ids: Iterable[str]) -> list[MemoryEntry]:
        return self.core.memories_by_id(memory_ids)

    def location_record(self, location_id: int) -> LocationRecord | None:
        return self.core.location_record(location_id)

    # -- scopes ------------------------------------------------------------------------------

    def on_location_exit(self, game_state: GameState) -> None:
        self._scoped.on_location_exit(game_state)

    def on_location_enter(
        self, game_state: GameState, from_location_id: int | None, via: str | None = None
    ) -> None:
        self._scoped.on_location_enter(game_state, from_location_id, via)

    def on_world_event(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        tags: list[str] | None = None,
        related: EventRelated | Mapping[str, str] | None = None,
        title: str | None = None,
        turn: int | None = None,
    ) -> None:
        self._scoped.on_world_event(game_state, event_kind, tags, related, title, turn)

    # -- turns, notes, episodes --------------------------------------------------------------

    def drafting(self) -> AbstractContextManager[IDraft]:
        return self.core.drafting()

    def interpreter(self) -> ITurnInterpreter:
        """The turn rules this service was given."""
        if self._rules is None:
            raise ConfigError(
                "this MemoryService has no turn rules: build it with rules=FictionRules"
                " (cairn.fiction.interpreter), or through the container"
            )
        return self._rules

    def record_ending(self, game_state: GameState, final: TurnOutcome) -> MemoryEntry | None:
        return self.apply(self.interpreter().interpret_ending(game_state, final))

    def record_action_outcome(
        self, game_state: GameState, outcome: TurnOutcome
    ) -> MemoryEntry | None:
        # the rules run first, with the store unlocked (they may ask the model and the game);
        # what they decided is then written in one unit of work
        return self.apply(self.interpreter().interpret(game_state, outcome))

    def apply(self, changes: TurnChanges) -> MemoryEntry | None:
        """Write a turn's changes in one unit of work (joining the caller's, if open)."""
        with self.core.store.transaction() as tx:
            return tx.apply(changes)

    def remember(
        self,
        game_state: GameState,
        text: str,
        importance: int,
        location_id: int | None = None,
        tags: list[str] | None = None,
        ways_in: list[Way] | None = None,
    ) -> MemoryEntry | None:
        return notes_and_pruning.remember(
            self.core, game_state, text, importance, location_id, tags=tags, ways_in=ways_in
        )

    def end_episode(self, game_state: GameState) -> None:
        notes_and_pruning.end_episode(self.core, game_state)

    def prune(self) -> list[str]:
        return notes_and_pruning.prune(self.core)

    # -- saved games -------------------------------------------------------------------------

    def checkpoint(self, game_state: GameState) -> None:
        checkpoints.checkpoint(self.core, game_state)

    def restore(self, game_state: GameState, checkpoint: MemoryCheckpoint) -> RestoreReport:
        return checkpoints.restore(self.core, game_state, checkpoint)
