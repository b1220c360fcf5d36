"""Quest handler: objectives, quests and acts, each announced as a world event."""

from __future__ import annotations

from cairn.events.commands import CompleteObjective, CompleteQuest, ProgressAct
from cairn.interfaces.memory_service import IMemoryService
from cairn.interfaces.store import IMemoryStore
from cairn.models.kinds import EventRelated, WorldEvent


class QuestHandler:
    """Records story progress in the scenario, then asks for a world memory."""

    def __init__(self, memory_service: IMemoryService, store: IMemoryStore) -> None:
        self._memory = memory_service
        self._store = store

    def complete_objective(self, command: CompleteObjective) -> None:
        """Mark the objective done; world event `objective_completed` (drafted, then applied in
        the command's unit of work: the summarizer is asked with the store unlocked)."""
        scenario = command.game_state.scenario
        key = f"{command.quest_id}:{command.objective_id}"
        if key not in scenario.completed_objectives:
            scenario.completed_objectives.append(key)
        with self._memory.drafting() as draft:
            self._memory.on_world_event(
                command.game_state,
                WorldEvent.OBJECTIVE_COMPLETED,
                tags=list(command.tags),
                related=EventRelated(
                    quest_id=command.quest_id, objective_id=command.objective_id
                ),
                title=command.title or None,
                turn=command.turn,
            )
        with self._store.transaction() as tx:  # the bus's unit (joined)
            tx.apply(draft.changes())

    def complete_quest(self, command: CompleteQuest) -> None:
        """Mark the quest done; world event `quest_completed`."""
        scenario = command.game_state.scenario
        if command.quest_id not in scenario.completed_quests:
            scenario.completed_quests.append(command.quest_id)
        self._memory.on_world_event(
            command.game_state,
            WorldEvent.QUEST_COMPLETED,
            tags=list(command.tags),
            related=EventRelated(quest_id=command.quest_id),
        )

    def progress_act(self, command: ProgressAct) -> None:
        """Move to the next act; world event `act_progressed`."""
        command.game_state.scenario.current_act = command.act_id
        self._memory.on_world_event(
            command.game_state,
            WorldEvent.ACT_PROGRESSED,
            tags=list(command.tags),
            related=EventRelated(act_id=command.act_id),
        )
