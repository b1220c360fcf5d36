"""Turn, note and episode handlers: the action-outcome path, agent notes, episode end."""

from __future__ import annotations

from cairn.events import events
from cairn.events.commands import EndEpisode, RecordTurn, RememberNote
from cairn.events.publisher import EventPublisher
from cairn.interfaces.memory_service import IMemoryService
from cairn.interfaces.store import IMemoryStore
from cairn.interfaces.turns import ITurnInterpreter
from cairn.models.kinds import EventRelated, WorldEvent
from cairn.models.memory import MemoryEntry


class TurnHandler:
    """RecordTurn -> the turn rules' changes (`ITurnInterpreter`), applied in the command's
    unit of work."""

    def __init__(self, rules: ITurnInterpreter, store: IMemoryStore) -> None:
        self._rules = rules
        self._store = store

    def record_turn(self, command: RecordTurn) -> MemoryEntry | None:
        """Record the turn; returns the memory stored, if any. The rules run before anything
        is staged, so the store is not locked while they ask the model or the game."""
        command.game_state.turn = command.outcome.turn
        changes = self._rules.interpret(command.game_state, command.outcome)
        with self._store.transaction() as tx:  # the bus's unit (joined)
            return tx.apply(changes)


class NoteHandler:
    """RememberNote -> remember."""

    def __init__(self, memory_service: IMemoryService) -> None:
        self._memory = memory_service

    def remember_note(self, command: RememberNote) -> MemoryEntry | None:
        """Store the note, or bump a near-duplicate's importance."""
        location_id = command.location_id
        if location_id is None and not command.world:
            location_id = command.game_state.scenario.current_location_id
        return self._memory.remember(
            command.game_state,
            command.text,
            command.importance,
            location_id=location_id,
            tags=list(command.tags),
            ways_in=list(command.ways_in),
        )


class EpisodeHandler:
    """EndEpisode -> a world event for the outcome, then end_episode (prune, reset)."""

    def __init__(self, memory_service: IMemoryService, publisher: EventPublisher) -> None:
        self._memory = memory_service
        self._publisher = publisher

    def end_episode(self, command: EndEpisode) -> None:
        """Close the episode."""
        state = command.game_state
        if command.final is not None and (command.won or command.died):
            final = command.final.model_copy(
                update={"won": command.won, "died": command.died and not command.won}
            )
            self._memory.record_ending(state, final)
        elif command.won or command.died:
            kind = WorldEvent.GAME_WON if command.won else WorldEvent.PLAYER_DIED
            self._memory.on_world_event(
                state,
                kind,
                tags=[f"episode:{state.episode}"],
                related=EventRelated(episode=state.episode),
            )
        self._memory.end_episode(state)
        self._publisher.publish(
            events.episode_ended, self, episode=state.episode, won=command.won, died=command.died
        )
