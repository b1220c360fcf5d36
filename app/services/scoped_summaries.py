"""Scoped summaries: a location's visit, its NPCs and world events, each with its cursor."""

from __future__ import annotations

from collections.abc import Mapping

from cairn.events import events
from cairn.interfaces.store import StoreTransaction
from cairn.models.game import GameState, Message, NPCInstance
from cairn.models.kinds import EventRelated, WorldEvent
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
)
from cairn.services.memory_core import MemoryCore, log
from cairn.services.memory_rules import (
    location_name,
    mention_window,
    naming_story,
    norm,
    npcs_in,
    span,
    story_names,
    world_title,
)

VISIT_IMPORTANCE = 200
"""Visit summaries rank below every action memory (notes 300, failures 400, successes 550+)."""


class ScopedSummaries:
    """Location, NPC and world summaries; cursors advance only after the memory is stored."""

    def __init__(self, core: MemoryCore) -> None:
        self._core = core
        """The store, summarizer, publisher, map and policy this shares with the rest of the
        memory service, and the queries over them."""

    # -- scoped summaries ------------------------------------------------------------------

    def on_location_exit(self, game_state: GameState) -> None:
        loc_id = game_state.scenario.current_location_id
        if loc_id is None:
            log.warning("on_location_exit with no current location: nothing summarized")
            return
        here = self._core.by_location.at(game_state.conversation_history, loc_id)
        since = game_state.scenario.last_location_message_index.get(loc_id, -1)
        visit = [m for m in here if m.index > since]
        location = game_state.locations.get(loc_id)
        name = location.name if location and location.name else ""
        if not name and here:
            name = here[-1].location_name or ""
        # Turns the action-outcome path already read are covered by its memories; a visit
        # summary is asked for only when something else happened, or when the room has no
        # memory and the visit says something not read here before. Given only the turns no
        # memory covers, it is told which turns of the visit it leaves out.
        uncovered = [m for m in visit if (m.episode, m.index) not in self._core.covered]
        seen = self._core.summarized.setdefault(loc_id, {})
        fresh = [m for m in visit if m.role != "player" and norm(m.text) not in seen]
        news = [m for m in fresh if (m.episode, m.index) not in self._core.covered]
        with self._core.store.transaction() as tx:
            if news or (fresh and not self._core.location_memories(loc_id)):
                given = uncovered if news else visit
                if self._summarize_location(
                    game_state, tx, loc_id, name, given, left_out(visit, given), visit[-1].index
                ):
                    for m in visit:
                        seen.setdefault(norm(m.text), (m.episode, m.index))
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
        skipped: list[int],
        upto: int,
    ) -> bool:
        """Store a visit summary; False when the summarizer failed (its cursor stays, to ask
        again). An empty answer is an answer: nothing to keep, and the visit is read."""
        failures = self._core.summary_failures
        summary = self._core.ask(
            "location",
            lambda: self._core.summarizer.summarize_location_session(
                game_state, loc_id, visit, skipped
            ),
        )
        if not summary:
            if self._core.summary_failures != failures:
                return False
            tx.after_commit(
                lambda: game_state.scenario.last_location_message_index.__setitem__(loc_id, upto)
            )
            return True
        entry = self._core.new_entry(
            scope=MemoryScope.LOCATION,
            title=f"Visit to {name or f'location {loc_id}'}",
            text=summary,
            importance=VISIT_IMPORTANCE,
            tags=["session", f"location:{loc_id}"],  # (as NPC memories name their place)
            source=MemorySource.VISIT,
            location_id=loc_id,
            location_name=name or None,
            **span(game_state, visit),
        )
        tx.add(entry)
        tx.after_commit(
            lambda: game_state.scenario.last_location_message_index.__setitem__(loc_id, upto)
        )
        self._core.announce(tx, entry)
        return True

    def _summarize_npc(
        self, game_state: GameState, npc_id: str, visit: list[Message], loc_id: int
    ) -> None:
        since = game_state.scenario.last_npc_message_index.get(npc_id, -1)
        window = mention_window(visit, npc_id, since, game_state)
        if not window:
            return
        npc = game_state.npcs.get(npc_id) or NPCInstance(instance_id=npc_id, name=npc_id)
        summary = self._core.ask(
            "npc", lambda: self._core.summarizer.summarize_npc_interactions(game_state, npc, window)
        )
        if not summary:
            return
        places = dict.fromkeys(m.location_id for m in window if m.location_id is not None)
        where = " and ".join(
            location_name(game_state, p) or f"location {p}" for p in (places or {loc_id: None})
        )
        entry = self._core.new_entry(
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
        with self._core.store.transaction() as tx:
            tx.add(entry)
            tx.after_commit(
                lambda: game_state.scenario.last_npc_message_index.__setitem__(npc_id, last)
            )
            self._core.announce(tx, entry)

    def on_location_enter(
        self, game_state: GameState, from_location_id: int | None, via: str | None = None
    ) -> None:
        to_id = game_state.scenario.current_location_id
        if to_id is None:
            return
        location = game_state.locations.get(to_id)
        name = location.name if location else ""
        self._core.map.set_name(to_id, name)
        if from_location_id is not None:
            self._core.map.add_connection(from_location_id, to_id, action=via)
        record = self._core.store.location(to_id)
        with self._core.store.transaction() as tx:
            tx.record_visit(to_id, name, game_state.episode)
            if name and record is not None and record.name and record.name != name:
                self._rename(tx, to_id, record.name, name)

    def _rename(self, tx: StoreTransaction, location_id: int, old: str, new: str) -> None:
        """A better name for a room: every memory that showed the old one shows the new one."""
        log.info("location %d renamed %r -> %r", location_id, old, new)
        for entry in self._core.store.entries(location_id=location_id):
            if entry.location_name == old:
                tx.update(entry.model_copy(update={"location_name": new}))

    def on_world_event(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        tags: list[str] | None = None,
        related: EventRelated | Mapping[str, str] | None = None,
        title: str | None = None,
        turn: int | None = None,
    ) -> None:
        about = (
            related
            if isinstance(related, EventRelated)
            else EventRelated.model_validate(dict(related or {}))
        )
        mapping = about.as_mapping()
        names = story_names(about, game_state)
        since = game_state.scenario.last_world_message_index
        history = game_state.conversation_history
        if not history:
            return
        # the newest messages after the cursor, read from the end (message indexes grow)
        fresh: list[Message] = []
        for message in reversed(history):
            if message.index <= since or len(fresh) >= self._core.policy.world_message_window:
                break
            fresh.append(message)
        fresh.reverse()
        # An event that shares its messages with the one before (an objective and the quest it
        # ends) is still remembered: it is summarized from the latest messages.
        window = (fresh or history[-1:])[-self._core.policy.world_message_window :]
        kind_tag = f"world:{event_kind}"
        again = next(
            (
                e
                for e in self._core.world_memories()
                if title and e.title == title and kind_tag in e.tags
            ),
            None,
        )
        with self._core.store.transaction() as tx:
            last = window[-1].index
            tx.after_commit(
                lambda: self._core.publisher.publish(
                    events.world_event_recorded, self, event_kind=event_kind, related=mapping
                )
            )
            if again is not None:  # the same event in a later episode: confirmed, not repeated
                self._confirm(tx, again, game_state.episode)
                tx.after_commit(
                    lambda: setattr(game_state.scenario, "last_world_message_index", last)
                )
                return
            summary = self._core.ask(
                "world",
                lambda: self._core.summarizer.summarize_world_update(
                    game_state, event_kind, window, {**mapping, **names}
                ),
            )
            if not summary:
                return
            location_id = about.location_id
            entry = self._core.new_entry(
                scope=MemoryScope.WORLD,
                category=(
                    MemoryCategory.DANGER
                    if event_kind == WorldEvent.PLAYER_DIED
                    else MemoryCategory.NOTE
                ),
                title=title or world_title(event_kind, about, game_state),
                text=naming_story(summary, event_kind, names),
                tags=[kind_tag, *(tags or []), *_episode_tag(title, game_state.episode)],
                source=MemorySource.WORLD,
                quest_id=about.quest_id,
                encounter_id=about.encounter_id,
                location_id=location_id,
                **{**span(game_state, window), **_at_turn(turn)},
            )
            tx.add(entry)
            tx.after_commit(lambda: setattr(game_state.scenario, "last_world_message_index", last))
            self._core.announce(tx, entry)


    def _confirm(self, tx: StoreTransaction, entry: MemoryEntry, episode: int) -> None:
        """A titled world event that happened again: its memory is tagged with this episode
        too (and with its own, which older memories did not carry)."""
        tags = [*entry.tags, *_episode_tag(entry.title, entry.episode), f"episode:{episode}"]
        kept = list(dict.fromkeys(tags))
        if kept != entry.tags:
            tx.update(entry.model_copy(update={"tags": kept}))
        log.info("world event %r again in episode %d: confirmed", entry.title, episode)


def _episode_tag(title: str | None, episode: int | None) -> list[str]:
    """`episode:N` for a titled event (a score): the episodes it happened in, as tags."""
    return [f"episode:{episode}"] if title and episode is not None else []


def _at_turn(turn: int | None) -> dict[str, object]:
    """The turn fields of an event that happened at `turn` (none when it is not known)."""
    return {} if turn is None else {"turn_start": turn, "turn_end": turn}


def left_out(visit: list[Message], given: list[Message]) -> list[int]:
    """The turns of `visit` none of whose messages are in `given` (other memories hold them)."""
    shown = {m.turn for m in given}
    return sorted({m.turn for m in visit if m.turn is not None and m.turn not in shown})
