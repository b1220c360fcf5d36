"""MemoryService: location, NPC and world summaries with cursors; action outcomes; notes."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from app.errors import SummarizerError
from app.events import events
from app.events.publisher import EventPublisher
from app.interfaces.clock import IClock
from app.interfaces.map import IMapRecorder
from app.interfaces.memory_service import IMemoryService
from app.interfaces.store import IMemoryStore, StoreTransaction
from app.interfaces.summarizer import ISummarizer, SynthesisRequest
from app.models.game import GameState, Message, NPCInstance, TurnOutcome
from app.models.kinds import EventRelated, WorldEvent
from app.models.memory import (
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
    MemoryStatus,
)
from app.services import policy as pruning
from app.services.clock import SystemClock
from app.services.endings import CAUSE_WORDS, DeathCause, death_cause, ending_text
from app.services.memory_rules import (
    adds_content,
    location_name,
    mention_window,
    move_tag,
    norm,
    npcs_in,
    plain_failure,
    prerequisites,
    span,
    world_title,
)
from app.services.outcomes import (
    failed_commands,
    failure_text,
    failure_title,
    ledger_key,
    normalize_command,
)
from app.services.policy import MemoryPolicy
from app.services.similarity import is_similar, short_title
from app.services.supersession import resolve
from app.services.triggers import LOCATION as LOCATION_TRIGGER
from app.services.triggers import LONG_RESPONSE as LONG_RESPONSE_TRIGGER
from app.services.triggers import detect_triggers

log = logging.getLogger(__name__)

VISIBLE = frozenset({MemoryStatus.ACTIVE, MemoryStatus.TENTATIVE})
VISIT_IMPORTANCE = 200
"""Visit summaries rank below every action memory (notes 300, failures 400, successes 550+)."""
_NEW_WORDS = 3
_MOVE_TRIGGERS = frozenset({LOCATION_TRIGGER, LONG_RESPONSE_TRIGGER})
"""A same-titled memory replaces the old one when it brings at least this many new words."""


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
        map_graph: IMapRecorder,
        policy: MemoryPolicy,
        clock: IClock | None = None,
    ) -> None:
        self._store = store
        self._clock = clock or SystemClock()
        self._summarizer = summarizer
        self._publisher = publisher
        self._map = map_graph
        self._policy = policy
        """State-changing turns that worked at the current location since arriving there."""
        self._covered: set[tuple[int | None, int]] = set()
        """(episode, message index) of messages an action outcome already read."""
        self._summarized: dict[int, set[str]] = {}
        self.summary_failures = 0
        self.summarizer_calls: Counter[str] = Counter()
        """Summarizer calls by kind: synthesis, location, npc, world."""

    @property
    def synthesis_calls(self) -> int:
        """Synthesis calls so far (one kind of `summarizer_calls`)."""
        return self.summarizer_calls["synthesis"]

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
        # Turns the action-outcome path already read are covered by its memories; a visit
        # summary is asked for only when something else happened, or the room has no memory.
        uncovered = [m for m in visit if (m.episode, m.index) not in self._covered]
        seen = self._summarized.setdefault(loc_id, set())
        news = [m for m in uncovered if m.role != "player" and norm(m.text) not in seen]
        with self._store.transaction() as tx:
            if visit and (news or not self.location_memories(loc_id)):
                if self._summarize_location(
                    game_state, tx, loc_id, name, uncovered if news else visit, visit[-1].index
                ):
                    seen.update(norm(m.text) for m in visit)
            elif visit:
                last = visit[-1].index
                tx.after_commit(
                    lambda: game_state.scenario.last_location_message_index.__setitem__(
                        loc_id, last
                    )
                )
            for npc_id in npcs_in(here, game_state):
                # every mention since the NPC's cursor, wherever it was: a summary that failed
                # elsewhere is retried here, so moving the cursor never skips it
                self._summarize_npc(game_state, npc_id, game_state.conversation_history, loc_id)

    def _summarize_location(
        self,
        game_state: GameState,
        tx: StoreTransaction,
        loc_id: int,
        name: str,
        visit: list[Message],
        upto: int,
    ) -> bool:
        """Store a visit summary; False when the summarizer gave none (its cursor stays)."""
        summary = self._ask(
            "location",
            lambda: self._summarizer.summarize_location_session(game_state, loc_id, visit),
        )
        if not summary:
            return False
        entry = self._new_entry(
            scope=MemoryScope.LOCATION,
            title=f"Visit to {name or f'location {loc_id}'}",
            text=summary,
            importance=VISIT_IMPORTANCE,
            tags=["session"],
            source=MemorySource.VISIT,
            location_id=loc_id,
            location_name=name or None,
            **span(game_state, visit),
        )
        tx.add(entry)
        tx.after_commit(
            lambda: game_state.scenario.last_location_message_index.__setitem__(loc_id, upto)
        )
        self._announce(tx, entry)
        return True

    def _summarize_npc(
        self, game_state: GameState, npc_id: str, visit: list[Message], loc_id: int
    ) -> None:
        since = game_state.scenario.last_npc_message_index.get(npc_id, -1)
        window = mention_window(visit, npc_id, since, game_state)
        if not window:
            return
        npc = game_state.npcs.get(npc_id) or NPCInstance(instance_id=npc_id, name=npc_id)
        summary = self._ask(
            "npc", lambda: self._summarizer.summarize_npc_interactions(game_state, npc, window)
        )
        if not summary:
            return
        places = dict.fromkeys(m.location_id for m in window if m.location_id is not None)
        where = " and ".join(
            location_name(game_state, p) or f"location {p}" for p in (places or {loc_id: None})
        )
        entry = self._new_entry(
            scope=MemoryScope.NPC,
            title=f"{npc.name} at {where}",
            text=summary,
            tags=["npc-session", f"location:{loc_id}", f"npc:{npc_id}"],
            source=MemorySource.NPC,
            npc_ids=[npc_id],
            location_id=loc_id,
            **span(game_state, window),
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
        record = self._store.location(to_id)
        with self._store.transaction() as tx:
            tx.record_visit(to_id, name, game_state.episode)
            if name and record is not None and record.name and record.name != name:
                self._rename(tx, to_id, record.name, name)

    def _rename(self, tx: StoreTransaction, location_id: int, old: str, new: str) -> None:
        """A better name for a room: every memory that showed the old one shows the new one."""
        log.info("location %d renamed %r -> %r", location_id, old, new)
        for entry in self._store.entries(location_id=location_id):
            if entry.location_name == old:
                tx.update(entry.model_copy(update={"location_name": new}))

    def on_world_event(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        tags: list[str] | None = None,
        related: EventRelated | Mapping[str, str] | None = None,
        title: str | None = None,
    ) -> None:
        about = (
            related
            if isinstance(related, EventRelated)
            else EventRelated.model_validate(dict(related or {}))
        )
        mapping = about.as_mapping()
        since = game_state.scenario.last_world_message_index
        history = game_state.conversation_history
        fresh = [m for m in history if m.index > since]
        if not history:
            return
        # An event that shares its messages with the one before (an objective and the quest it
        # ends) is still remembered: it is summarized from the latest messages.
        window = (fresh or history[-1:])[-self._policy.world_message_window :]
        with self._store.transaction() as tx:
            summary = self._ask(
                "world",
                lambda: self._summarizer.summarize_world_update(
                    game_state, event_kind, window, mapping
                ),
            )
            tx.after_commit(
                lambda: self._publisher.publish(
                    events.world_event_recorded, self, event_kind=event_kind, related=mapping
                )
            )
            if not summary:
                return
            location_id = about.location_id
            entry = self._new_entry(
                scope=MemoryScope.WORLD,
                category=(
                    MemoryCategory.DANGER
                    if event_kind == WorldEvent.PLAYER_DIED
                    else MemoryCategory.NOTE
                ),
                title=title or world_title(event_kind, about, game_state),
                text=summary,
                tags=[f"world:{event_kind}", *(tags or [])],
                source=MemorySource.WORLD,
                quest_id=about.quest_id,
                encounter_id=about.encounter_id,
                location_id=location_id,
                **span(game_state, window),
            )
            tx.add(entry)
            last = window[-1].index
            tx.after_commit(lambda: setattr(game_state.scenario, "last_world_message_index", last))
            self._announce(tx, entry)

    # -- action outcomes (seeds 001, 002) ----------------------------------------------------

    def record_action_outcome(
        self, game_state: GameState, outcome: TurnOutcome
    ) -> MemoryEntry | None:
        # the recent turns, plus what was done here since arriving that may have opened the way;
        # both read from the game state, which carries the episode's turns
        earlier = game_state.turns
        recent = earlier[-self._policy.memory_history_window :] if earlier else []
        history = sorted(
            {t.turn: t for t in [*prerequisites(earlier), *recent]}.values(),
            key=lambda t: (t.episode, t.turn),
        )
        game_state.record_turn(outcome)
        self._cover(game_state, outcome)
        source = outcome.location_before
        if source is None:
            log.warning("turn %s: location before the action is unknown; not stored", outcome.turn)
            return None
        if outcome.won:
            return self._record_win_here(outcome)
        if outcome.died and death_cause(outcome.action, outcome.response) is not DeathCause.COMMAND:
            return None  # the world's ending, remembered by record_ending, not this command's
        if plain_failure(outcome):
            return self._record_failure(outcome)
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
        tag = move_tag(outcome)
        if tag and not first_visit and any(tag in e.tags for e in existing):
            # A move already remembered from here: the room text that follows is old news.
            triggers = [t for t in triggers if t not in (LOCATION_TRIGGER, LONG_RESPONSE_TRIGGER)]
        if not triggers:
            return None
        plain_move = tag and not first_visit and set(triggers) <= _MOVE_TRIGGERS
        if plain_move and tag and not self._failed_here(existing, outcome.action):
            return self._record_move(outcome, tag)
        request = SynthesisRequest(
            outcome=outcome, triggers=triggers, existing=existing, history=history
        )
        self.summarizer_calls["synthesis"] += 1
        log.debug("turn %s: synthesis for triggers %s", outcome.turn, ", ".join(triggers))
        try:
            decision = self._summarizer.synthesize(request)
        except SummarizerError as exc:  # a programming error is not a summary that failed
            self._failed("synthesis", exc)
            return None
        if not decision.should_remember or not decision.memory_title.strip():
            return None
        text = decision.memory_text.strip()
        if outcome.died:
            words = ending_text(outcome.response)
            if words and words not in text:
                text = f'{text} The game said: "{words}"'
        same = [
            e
            for e in existing
            if e.title.strip().lower() == decision.memory_title.strip().lower()
            and e.category is decision.category
        ]
        if same and not any(adds_content(text, e.text) for e in same):
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
            text=text,
            importance=decision.importance,
            tags=[tag] if tag else [],  # triggers are logged, not stored
            episode=outcome.episode,
            turn_start=first_turn if decision.multi_step else outcome.turn,
            turn_end=outcome.turn,
            score_delta=outcome.score_delta,
            location_id=source,
            location_name=outcome.location_before_name or None,
        )
        resolution = resolve(decision, existing, self._policy.max_supersessions)
        # the same title with more to say (a procedure that now has its steps) replaces the old
        supersede = list(dict.fromkeys([*resolution.supersede, *(e.id for e in same)]))
        with self._store.transaction() as tx:
            tx.add(entry)
            for old_id in supersede:
                tx.supersede(old_id, entry.id)
                tx.after_commit(self._superseded_callback(old_id, entry.id))
            for old_id in resolution.invalidate:
                if old_id not in supersede:
                    tx.supersede(old_id, None)
            self._announce(tx, entry)
        return entry

    def _cover(self, game_state: GameState, outcome: TurnOutcome) -> None:
        """Mark the turn's own messages (its command and the game's answer) as read."""
        for message in reversed(game_state.conversation_history[-4:]):
            if message.turn != outcome.turn:
                break
            if message.text == outcome.response or message.text == f"> {outcome.action}":
                self._covered.add((message.episode, message.index))

    @staticmethod
    def _failed_here(existing: Sequence[MemoryEntry], action: str) -> bool:
        command = normalize_command(action)
        return any(
            e.category is MemoryCategory.FAILURE and command in failed_commands(e.text)
            for e in existing
        )

    def _record_move(self, outcome: TurnOutcome, move_tag: str) -> MemoryEntry:
        """A new way between rooms already seen: a fact of the map, remembered with no
        summarizer call (a first visit, a score or a way that failed before still asks)."""
        source = outcome.location_before
        assert source is not None
        action = normalize_command(outcome.action)
        after = outcome.location_after
        record = self._store.location(after) if after is not None else None
        known = record.name if record is not None else ""
        where = outcome.location_after_name or known or f"location {after}"
        return self._add_at_source(
            outcome,
            category=MemoryCategory.NOTE,
            title=f"'{action}' leads to {where}",
            text=f"'{action}' from here reaches {where} (L{outcome.location_after}).",
            importance=300,
            tags=[move_tag],
            source=MemorySource.MOVE,
        )

    def _add_at_source(self, outcome: TurnOutcome, **fields: Any) -> MemoryEntry:
        """Store one memory of this turn at the room where it was taken, in its own unit."""
        entry = self._new_entry(
            scope=MemoryScope.LOCATION,
            episode=outcome.episode,
            turn_start=outcome.turn,
            turn_end=outcome.turn,
            score_delta=outcome.score_delta,
            location_id=outcome.location_before,
            location_name=outcome.location_before_name or None,
            **fields,
        )
        with self._store.transaction() as tx:
            tx.add(entry)
            self._announce(tx, entry)
        return entry

    def _record_failure(self, outcome: TurnOutcome) -> MemoryEntry | None:
        """One FAILURE memory per (room, object), listing every command that failed on it.

        No summarizer call: the game's refusal is the fact. A new command on the same object
        updates that memory in place (same id); a command already listed changes nothing.
        """
        source = outcome.location_before
        assert source is not None
        command = normalize_command(outcome.action)
        thing = ledger_key(command)
        tag = f"object:{thing}" if thing else "object:-"
        current = next(
            (
                e
                for e in self.location_memories(source)
                if e.category is MemoryCategory.FAILURE and tag in e.tags
            ),
            None,
        )
        commands = failed_commands(current.text) if current is not None else []
        if command in commands:
            return None
        commands.append(command)
        fields: dict[str, Any] = {
            "title": failure_title(commands),
            "text": failure_text(commands, outcome.response),
        }
        with self._store.transaction() as tx:
            if current is None:
                entry = self._new_entry(
                    scope=MemoryScope.LOCATION,
                    category=MemoryCategory.FAILURE,
                    importance=400,
                    tags=[tag],
                    source=MemorySource.FAILURE,
                    episode=outcome.episode,
                    turn_start=outcome.turn,
                    turn_end=outcome.turn,
                    location_id=source,
                    location_name=outcome.location_before_name or None,
                    **fields,
                )
                tx.add(entry)
            else:
                if current.episode == outcome.episode:
                    fields["turn_end"] = outcome.turn
                entry = current.model_copy(update=fields)
                tx.update(entry)
            self._announce(tx, entry)
        return entry

    def _record_win_here(self, outcome: TurnOutcome) -> MemoryEntry:
        """The winning command, at the room where it won, in the game's words."""
        source = outcome.location_before
        assert source is not None
        words = ending_text(outcome.response)
        action = normalize_command(outcome.action)
        return self._add_at_source(
            outcome,
            category=MemoryCategory.SUCCESS,
            title=f"Won the game by '{action}'",
            text=f"'{action}' here won the game: {words}",
            importance=1000,
            tags=["ending:won"],
            source=MemorySource.ENDING,
        )

    def record_ending(self, game_state: GameState, final: TurnOutcome) -> MemoryEntry | None:
        if not (final.won or final.died):
            return None
        room = final.location_before_name or (
            f"location {final.location_before}" if final.location_before is not None else ""
        )
        where = f" in {room}" if room else ""
        words = ending_text(final.response) or final.response.strip()
        action = normalize_command(final.action)
        if final.won:
            title = f"Won the game{where} at turn {final.turn}"
            category = MemoryCategory.SUCCESS
            kind = WorldEvent.GAME_WON
        else:
            cause = death_cause(final.action, final.response)
            how = f"by '{action}'" if cause is DeathCause.COMMAND else f"({CAUSE_WORDS[cause]})"
            title = f"Died{where} at turn {final.turn} {how}"
            category = MemoryCategory.DANGER
            kind = WorldEvent.PLAYER_DIED
        entry = self._new_entry(
            scope=MemoryScope.WORLD,
            category=category,
            title=title,
            text=words,
            importance=1000 if final.won else 900,
            tags=[f"world:{kind}", "ending", f"episode:{final.episode}"]
            + ([] if final.won else [f"cause:{cause.value}"]),
            source=MemorySource.ENDING,
            episode=final.episode,
            turn_start=final.turn,
            turn_end=final.turn,
            score_delta=final.score_delta,
            location_id=final.location_before,
        )
        last = game_state.conversation_history[-1].index if game_state.conversation_history else -1
        with self._store.transaction() as tx:
            tx.add(entry)
            tx.after_commit(lambda: setattr(game_state.scenario, "last_world_message_index", last))
            tx.after_commit(
                lambda: self._publisher.publish(
                    events.world_event_recorded, self, event_kind=kind, related={}
                )
            )
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
                if note.source is MemorySource.NOTE and is_similar(text, note.text):
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
                source=MemorySource.NOTE,
                episode=game_state.episode,
                turn_start=game_state.turn,
                turn_end=game_state.turn,
                location_id=location_id,
                location_name=location_name(game_state, location_id),
            )
            tx.add(entry)
            self._announce(tx, entry)
        return entry

    def end_episode(self, game_state: GameState) -> None:
        game_state.turns = []
        self.prune()

    def prune(self) -> list[str]:
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
        self.summarizer_calls[scope] += 1
        try:
            return call().strip()
        except SummarizerError as exc:
            self._failed(scope, exc)
            return ""

    def _failed(self, scope: str, exc: SummarizerError) -> None:
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
