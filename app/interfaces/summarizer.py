"""ISummarizer: turns messages and turn outcomes into summaries and synthesis decisions."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from cairn.models.game import GameState, Message, NPCInstance, TurnOutcome
from cairn.models.kinds import WorldEvent
from cairn.models.memory import MemoryEntry, SynthesisDecision


class SynthesisRequest(BaseModel):
    """Everything synthesis sees for one turn: its outcome, the triggers it fired, the memories
    already at its location and the recent turns before it."""

    model_config = ConfigDict(extra="forbid")

    outcome: TurnOutcome
    triggers: list[str]
    existing: list[MemoryEntry] = Field(default_factory=list)
    history: list[TurnOutcome] = Field(default_factory=list)


class ISummarizer(ABC):
    """The summarizer agent port. Implementations raise SummarizerError on failure."""

    @abstractmethod
    def synthesize(self, request: SynthesisRequest) -> SynthesisDecision:
        """Decide whether and what to remember about a turn."""

    @abstractmethod
    def summarize_location_session(
        self, game_state: GameState, location_id: int, messages: Sequence[Message]
    ) -> str:
        """Summarize a visit to a location in 2-3 sentences ('' means nothing to keep)."""

    @abstractmethod
    def summarize_npc_interactions(
        self, game_state: GameState, npc: NPCInstance, messages: Sequence[Message]
    ) -> str:
        """Summarize interactions with one NPC in 2-3 sentences ('' means nothing to keep)."""

    @abstractmethod
    def summarize_world_update(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        messages: Sequence[Message],
        related: Mapping[str, str | list[str]],
    ) -> str:
        """Summarize story progress since the last world update ('' means nothing to keep).

        `related` holds the event's ids (`quest_id`, `objective_id`, `act_id`, ...) and the
        names the GameState gives them (`quest_name`, `objective_name`, `act_name`): a summary
        names them, never shows the ids.
        """
