"""MemoryService: location, NPC and world summaries with cursors; action outcomes; notes."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from app.events import events
from app.events.publisher import EventPublisher
from app.interfaces.memory_service import IMemoryService
from app.interfaces.store import IMemoryStore, StoreTransaction
from app.interfaces.summarizer import ISummarizer, SynthesisRequest
from app.models.game import GameState, Message, NPCInstance, TurnOutcome
from app.models.memory import (
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
)
from app.services import policy as pruning
from app.services.clock import SystemClock
from app.services.map_graph import MapGraph
from app.services.policy import MemoryPolicy
from app.services.similarity import is_similar, short_title
from app.services.supersession import resolve
from app.services.triggers import LOCATION as LOCATION_TRIGGER
from app.services.triggers import LONG_RESPONSE as LONG_RESPONSE_TRIGGER
from app.services.triggers import detect_triggers

log = logging.getLogger(__name__)

VISIBLE = frozenset({MemoryStatus.ACTIVE, MemoryStatus.TENTATIVE})


class MemoryService(IMemoryService):
    """Implements IMemoryService over an IMemoryStore and an ISummarizer.

    Every method writes in one unit of work; cursors advance in after-commit callbacks, so a
    cursor never moves past a message whose memory was not stored.
    """

    def __init__(
        self,
        store: IMemoryStore,
        summarizer: ISummarizer,
        publisher: EventPublisher,
        map_graph: MapGraph,
        policy: MemoryPolicy,
        clock: SystemClock | None = None,
    ) -> None:
        self._store = store
        self._clock = clock or SystemClock()
        self._summarizer = summarizer
        self._publisher = publisher
        self._map = map_graph
        self._policy = policy
        self._history: deque[TurnOutcome] = deque(maxlen=policy.memory_history_window)
        self.summary_failures = 0
        self.synthesis_calls = 0

    # -- scoped summaries (seed 004) -------------------------------------------------------

    def on_location_exit(self, game_state: GameState) -> None:
        loc_id = game_state.scenario.current_location_id
        if loc_id is None:
            log.warning("on_location_exit with no current location: nothing summarized")
            return
        here = [m for m in game_state.conversation_history if m.location_id == loc_id]
        since = game_state.scenario.last_location_message_index.get(loc_id, -1)
        visit = [m for m in here if m.index > since]
        location = game_state.locations.get(loc_id)
        name = location.name if location and location.name else ""
        if not name and here:
            name = here[-1].location_name or ""
        with self._store.transaction() as tx:
            if visit:
                self._summarize_location(game_state, tx, loc_id, name, visit)
            for npc_id in _npcs_in(here, game_state):
                self._summarize_npc(game_state, npc_id, here, loc_id)

    def _summarize_location(
        self,
        game_state: GameState,
        tx: StoreTransaction,
        loc_id: int,
        name: str,
        visit: list[Message],
    ) -> None:
        summary = self._ask(
            "location",
            lambda: self._summarizer.summarize_location_session(game_state, loc_id, visit),
        )
        if not summary:
            return
        entry = self._new_entry(
            scope=MemoryScope.LOCATION,
            title=f"Visit to {name or f'location {loc_id}'}",
            text=summary,
            tags=["session", f"location:{loc_id}"],
            location_id=loc_id,
            location_name=name or None,
            **_span(game_state, visit),
        )
        tx.add(entry)
        last = visit[-1].index
        tx.after_commit(
            lambda: game_state.scenario.last_location_message_index.__setitem__(loc_id, last)
        )
        self._announce(tx, entry)

    def _summarize_npc(
        self, game_state: GameState, npc_id: str, visit: list[Message], loc_id: int
    ) -> None:
        since = game_state.scenario.last_npc_message_index.get(npc_id, -1)
        window = _mention_window(visit, npc_id, since, game_state)
        if not window:
            return
        npc = game_state.npcs.get(npc_id) or NPCInstance(instance_id=npc_id, name=npc_id)
        summary = self._ask(
            "npc", lambda: self._summarizer.summarize_npc_interactions(game_state, npc, window)
        )
        if not summary:
            return
        where = _location_name(game_state, loc_id) or f"location {loc_id}"
        entry = self._new_entry(
            scope=MemoryScope.NPC,
            title=f"{npc.name} at {where}",
            text=summary,
            tags=["npc-session", f"location:{loc_id}", f"npc:{npc_id}"],
            npc_ids=[npc_id],
            location_id=loc_id,
            **_span(game_state, window),
        )
        last = window[-1].index
        with self._store.transaction() as tx:
            tx.add(entry)
            tx.after_commit(
                lambda: game_state.scenario.last_npc_message_index.__setitem__(npc_id, last)
            )
            self._announce(tx, entry)

    def on_location_enter(
        self, game_state: GameState, from_location_id: int | None, via: str | None = None
    ) -> None:
        to_id = game_state.scenario.current_location_id
        if to_id is None:
            return
        location = game_state.locations.get(to_id)
        name = location.name if location else ""
        self._map.set_name(to_id, name)
        if from_location_id is not None:
            self._map.add_connection(from_location_id, to_id, action=via)
        with self._store.transaction() as tx:
            tx.record_visit(to_id, name, game_state.episode)

    def on_world_event(
        self,
        game_state: GameState,
        event_kind: str,
        tags: list[str] | None = None,
        related: Mapping[str, str | list[str]] | None = None,
    ) -> None:
        related = dict(related or {})
        since = game_state.scenario.last_world_message_index
        fresh = [m for m in game_state.conversation_history if m.index > since]
        if not fresh:
            return
        window = fresh[-self._policy.world_message_window :]
        with self._store.transaction() as tx:
            summary = self._ask(
                "world",
                lambda: self._summarizer.summarize_world_update(
                    game_state, event_kind, window, related
                ),
            )
            tx.after_commit(
                lambda: self._publisher.publish(
                    events.world_event_recorded, self, event_kind=event_kind, related=related
                )
            )
            if not summary:
                return
            location_id = _int_or_none(related.get("location_id"))
            entry = self._new_entry(
                scope=MemoryScope.WORLD,
                category=(
                    MemoryCategory.DANGER if event_kind == "player_died" else MemoryCategory.NOTE
                ),
                title=_world_title(event_kind, related),
                text=summary,
                tags=[f"world:{event_kind}", *(tags or [])],
                quest_id=_str_or_none(related.get("quest_id")),
                encounter_id=_str_or_none(related.get("encounter_id")),
                location_id=location_id,
                **_span(game_state, window),
            )
            tx.add(entry)
            last = fresh[-1].index
            tx.after_commit(lambda: setattr(game_state.scenario, "last_world_message_index", last))
            self._announce(tx, entry)

    # -- action outcomes (seeds 001, 002) ----------------------------------------------------

    def record_action_outcome(
        self, game_state: GameState, outcome: TurnOutcome
    ) -> MemoryEntry | None:
        history = list(self._history)
        self._history.append(outcome)
        source = outcome.location_before
        if source is None:
            log.warning("turn %s: location before the action is unknown; not stored", outcome.turn)
            return None
        record = (
            self._store.location(outcome.location_after)
            if outcome.location_after is not None
            else None
        )
        first_visit = outcome.moved and (record is None or record.visits <= 1)
        triggers = detect_triggers(
            outcome, first_visit=first_visit, long_response_chars=self._policy.long_response_chars
        )
        existing = self.location_memories(source)
        move_tag = _move_tag(outcome)
        if move_tag and not first_visit and any(move_tag in e.tags for e in existing):
            # A move already remembered from here: the room text that follows is old news.
            triggers = [t for t in triggers if t not in (LOCATION_TRIGGER, LONG_RESPONSE_TRIGGER)]
        if not triggers:
            return None
        request = SynthesisRequest(
            outcome=outcome, triggers=triggers, existing=existing, history=history
        )
        self.synthesis_calls += 1
        try:
            decision = self._summarizer.synthesize(request)
        except Exception as exc:
            self._failed("synthesis", exc)
            return None
        if not decision.should_remember or not decision.memory_title.strip():
            return None
        if any(
            e.title.strip().lower() == decision.memory_title.strip().lower()
            and e.category is decision.category
            for e in existing
        ):
            log.info(
                "synthesis repeated an existing memory title %r; skipped", decision.memory_title
            )
            return None
        first_turn = min(
            (h.turn for h in history if h.location_before == source), default=outcome.turn
        )
        entry = self._new_entry(
            scope=MemoryScope.LOCATION,
            category=decision.category,
            status=decision.status,
            title=decision.memory_title.strip(),
            text=decision.memory_text.strip(),
            importance=decision.importance,
            tags=[f"location:{source}", *triggers, *([move_tag] if move_tag else [])],
            episode=outcome.episode,
            turn_start=first_turn if decision.multi_step else outcome.turn,
            turn_end=outcome.turn,
            score_delta=outcome.score_delta,
            location_id=source,
            location_name=outcome.location_before_name or None,
        )
        resolution = resolve(decision, existing, self._policy.max_supersessions)
        with self._store.transaction() as tx:
            tx.add(entry)
            for old_id in resolution.supersede:
                tx.supersede(old_id, entry.id)
                tx.after_commit(self._superseded_callback(old_id, entry.id))
            for old_id in resolution.invalidate:
                tx.supersede(old_id, None)
            self._announce(tx, entry)
        return entry

    def remember(
        self,
        game_state: GameState,
        text: str,
        importance: int,
        location_id: int | None = None,
    ) -> MemoryEntry | None:
        text = text.strip()
        if not text:
            return None
        importance = max(1, min(1000, int(importance)))
        with self._store.transaction() as tx:
            # the same words about another place are another note: dedupe per location
            for note in self._store.entries(statuses=VISIBLE):
                if note.location_id != location_id:
                    continue
                if "note" in note.tags and is_similar(text, note.text):
                    if importance > note.importance:
                        tx.update(note.model_copy(update={"importance": importance}))
                    return None
            entry = self._new_entry(
                scope=MemoryScope.LOCATION if location_id is not None else MemoryScope.WORLD,
                category=MemoryCategory.NOTE,
                title=short_title(text),
                text=text,
                importance=importance,
                tags=["note"],
                episode=game_state.episode,
                turn_start=game_state.turn,
                turn_end=game_state.turn,
                location_id=location_id,
                location_name=_location_name(game_state, location_id),
            )
            tx.add(entry)
            self._announce(tx, entry)
        return entry

    def end_episode(self, game_state: GameState) -> None:
        self._history.clear()
        self.prune(game_state)

    def prune(self, game_state: GameState | None = None) -> list[str]:
        with self._store.transaction() as tx:
            return pruning.prune(self._store.entries(), self._policy, tx)

    # -- queries ---------------------------------------------------------------------------

    def location_memories(self, location_id: int) -> list[MemoryEntry]:
        return self._store.entries(
            scope=MemoryScope.LOCATION, location_id=location_id, statuses=VISIBLE
        )

    def adjacent_memories(self, location_id: int) -> dict[int, list[MemoryEntry]]:
        return {n: self.location_memories(n) for n in self._map.neighbors(location_id)}

    def npc_memories(self, npc_id: str) -> list[MemoryEntry]:
        return self._store.entries(scope=MemoryScope.NPC, npc_id=npc_id, statuses=VISIBLE)

    def world_memories(self) -> list[MemoryEntry]:
        return self._store.entries(scope=MemoryScope.WORLD, statuses=VISIBLE)

    def top_memories(self, limit: int = 10) -> list[MemoryEntry]:
        ranked = sorted(
            self._store.entries(statuses=VISIBLE),
            key=lambda e: (e.importance, e.created_at),
            reverse=True,
        )
        return ranked[: max(0, limit)]

    def location_record(self, location_id: int) -> LocationRecord | None:
        return self._store.location(location_id)

    # -- helpers ---------------------------------------------------------------------------

    def _ask(self, scope: str, call: Callable[[], str]) -> str:
        try:
            return call().strip()
        except Exception as exc:
            self._failed(scope, exc)
            return ""

    def _failed(self, scope: str, exc: Exception) -> None:
        self.summary_failures += 1
        log.warning("%s summarizer failed (%s); nothing stored, cursor kept", scope, exc)
        self._publisher.publish(events.summary_failed, self, scope=scope, error=str(exc))

    def _new_entry(self, **fields: Any) -> MemoryEntry:
        return MemoryEntry(
            id=self._clock.new_id(str(fields.get("title", ""))),
            created_at=self._clock.now(),
            **fields,
        )

    def _superseded_callback(self, old_id: str, new_id: str) -> Callable[[], None]:
        return lambda: self._publisher.publish(
            events.memory_superseded, self, old_id=old_id, new_id=new_id
        )

    def _announce(self, tx: StoreTransaction, entry: MemoryEntry) -> None:
        tx.after_commit(lambda: self._publisher.publish(events.memory_recorded, self, entry=entry))


def _span(game_state: GameState, messages: Sequence[Message]) -> dict[str, object]:
    turns = [m.turn for m in messages if m.turn is not None]
    return {
        "episode": game_state.episode,
        "turn_start": min(turns) if turns else None,
        "turn_end": max(turns) if turns else None,
        "since_message_index": messages[-1].index,
        "since_timestamp": messages[0].timestamp,
    }


def _npcs_in(messages: Sequence[Message], game_state: GameState) -> list[str]:
    """NPC ids present in or mentioned by a message after that NPC's cursor, first seen first."""
    cursors = game_state.scenario.last_npc_message_index
    seen: dict[str, None] = {}
    for m in messages:
        for npc_id in [*m.npcs_present, *m.npcs_mentioned, *_named_in(m, game_state)]:
            if m.index > cursors.get(npc_id, -1):
                seen.setdefault(npc_id, None)
    return list(seen)


def _named_in(message: Message, game_state: GameState) -> list[str]:
    text = message.text.lower()
    return [i for i, npc in game_state.npcs.items() if npc.name and npc.name.lower() in text]


def _mention_window(
    visit: list[Message], npc_id: str, since: int, game_state: GameState
) -> list[Message]:
    """Messages naming the NPC after its cursor, with one message of context either side."""
    fresh = [m for m in visit if m.index > since]
    keep: set[int] = set()
    for pos, m in enumerate(fresh):
        if (
            npc_id in m.npcs_present
            or npc_id in m.npcs_mentioned
            or npc_id in _named_in(m, game_state)
        ):
            keep.update(p for p in (pos - 1, pos, pos + 1) if 0 <= p < len(fresh))
    return [fresh[p] for p in sorted(keep)]


def _world_title(event_kind: str, related: Mapping[str, str | list[str]]) -> str:
    detail = ", ".join(f"{k}={v}" for k, v in sorted(related.items()) if isinstance(v, str))
    return f"{event_kind.replace('_', ' ').capitalize()}" + (f" ({detail})" if detail else "")


def _str_or_none(value: str | list[str] | None) -> str | None:
    return value if isinstance(value, str) else None


def _int_or_none(value: str | list[str] | None) -> int | None:
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return None


def _location_name(game_state: GameState, location_id: int | None) -> str | None:
    if location_id is None:
        return None
    location = game_state.locations.get(location_id)
    return location.name if location and location.name else None


def _move_tag(outcome: TurnOutcome) -> str | None:
    """`move:<action>-><destination id>` for a turn that changed location, else None."""
    if not outcome.moved or outcome.location_after is None:
        return None
    return f"move:{' '.join(outcome.action.lower().split())}->{outcome.location_after}"
