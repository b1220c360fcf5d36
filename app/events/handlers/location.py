"""Location handler: ChangeLocation and UpdateLocationState."""

from __future__ import annotations

import logging

from cairn.errors import InvalidLocationError
from cairn.events import events
from cairn.events.commands import ChangeLocation, UpdateLocationState
from cairn.events.publisher import EventPublisher
from cairn.interfaces.memory_service import IMemoryService
from cairn.interfaces.store import IMemoryStore
from cairn.models.game import LocationState
from cairn.models.kinds import EventRelated, WorldEvent

log = logging.getLogger(__name__)


def _require_int_id(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidLocationError(f"{field}: location ids are integers, got {value!r}")
    return value


class LocationHandler:
    """Moves the player; summarizes the visit being left BEFORE the move."""

    def __init__(
        self, memory_service: IMemoryService, publisher: EventPublisher, store: IMemoryStore
    ) -> None:
        self._memory = memory_service
        self._publisher = publisher
        self._store = store

    def change_location(self, command: ChangeLocation) -> None:
        """Summarize the current visit, then move to `to_location_id`: what the memory service
        writes is drafted first (the summarizer is asked with the store unlocked), then
        applied in the command's unit of work."""
        with self._memory.drafting() as draft:
            self._move(command)
        with self._store.transaction() as tx:  # the bus's unit (joined)
            tx.apply(draft.changes())

    def _move(self, command: ChangeLocation) -> None:
        to_id = _require_int_id(command.to_location_id, "to_location_id")
        state = command.game_state
        from_id = state.scenario.current_location_id
        if from_id is None:
            log.debug("ChangeLocation to %s: the first move, nothing to summarize", to_id)
        elif from_id not in state.locations:
            log.warning("ChangeLocation from unknown location %s: summarizing by id only", from_id)
        if from_id is not None:
            self._memory.on_location_exit(state)
            self._publisher.publish(events.location_exited, self, location_id=from_id)
        location = state.locations.get(to_id)
        if location is None:
            location = LocationState(id=to_id, name=command.to_location_name)
            state.locations[to_id] = location
        elif command.to_location_name and location.name != command.to_location_name:
            location.name = command.to_location_name  # a better name learned later
        state.scenario.current_location_id = to_id
        # a move no exit made (a death's resurrection) teaches the map no way from there
        came_from = from_id if command.connects else None
        self._memory.on_location_enter(state, came_from, via=command.via_action)
        self._publisher.publish(
            events.location_entered, self, location_id=to_id, from_location_id=from_id
        )

    def update_location_state(self, command: UpdateLocationState) -> None:
        """Apply a danger-level change and/or an encounter completion; each is a world event."""
        loc_id = _require_int_id(command.location_id, "location_id")
        state = command.game_state
        location = state.locations.get(loc_id)
        if location is None:
            raise InvalidLocationError(f"location_id: no location {loc_id} in the game state")
        if command.danger_level is not None:
            location.danger_level = command.danger_level
            if command.danger_level.upper() == "CLEARED":
                self._memory.on_world_event(
                    state,
                    WorldEvent.LOCATION_CLEARED,
                    tags=[f"location:{loc_id}"],
                    related=EventRelated(location_id=loc_id),
                )
        if command.complete_encounter is not None:
            if command.complete_encounter not in location.completed_encounters:
                location.completed_encounters.append(command.complete_encounter)
            self._memory.on_world_event(
                state,
                WorldEvent.ENCOUNTER_COMPLETED,
                tags=[f"location:{loc_id}", f"encounter:{command.complete_encounter}"],
                related=EventRelated(
                    location_id=loc_id, encounter_id=command.complete_encounter
                ),
            )
