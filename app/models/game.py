"""Runtime state a game loop or narrative engine owns: messages, locations, NPCs, cursors."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from cairn.models.checkpoint import MemoryCheckpoint
from cairn.models.lesson import TurnTests
from cairn.models.memory import LocationId, utc_now


class Message(BaseModel):
    """One line of the conversation history, tagged with where it happened and who was there."""

    model_config = ConfigDict(extra="forbid")

    index: StrictInt
    timestamp: datetime = Field(default_factory=utc_now)
    role: str = "narrator"
    text: str
    location_id: LocationId | None = None
    location_name: str | None = None
    npcs_present: list[str] = Field(default_factory=list)
    npcs_mentioned: list[str] = Field(default_factory=list)
    turn: int | None = None
    episode: int | None = None


class LocationState(BaseModel):
    """A location of the running game."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: LocationId
    name: str = ""
    danger_level: str | None = None
    completed_encounters: list[str] = Field(default_factory=list)


class NPCInstance(BaseModel):
    """An NPC of the running game."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    instance_id: str = Field(min_length=1)
    name: str
    aliases: list[str] = Field(default_factory=list)
    """Other names the text may use for this NPC ("the harbourmaster" for Mira)."""
    current_location_id: LocationId | None = None


class QuestState(BaseModel):
    """A quest of the running game: its name and its objectives' names, by id."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str = Field(min_length=1)
    name: str = ""
    objectives: dict[str, str] = Field(default_factory=dict)
    """Objective id -> name ("" when the engine gave it none)."""


class ScenarioInstance(BaseModel):
    """Story progress plus the three per-scope message cursors (world, each location, each
    NPC)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    current_location_id: LocationId | None = None
    last_world_message_index: int = -1
    last_location_message_index: dict[int, int] = Field(default_factory=dict)
    last_npc_message_index: dict[str, int] = Field(default_factory=dict)
    completed_objectives: list[str] = Field(default_factory=list)
    completed_quests: list[str] = Field(default_factory=list)
    current_act: str | None = None
    tags: list[str] = Field(default_factory=list)


class TurnOutcome(BaseModel):
    """What one game turn did: the Z-machine ground truth the triggers read."""

    model_config = ConfigDict(extra="forbid")

    episode: int = 1
    turn: StrictInt
    action: str
    response: str
    reasoning: str = ""
    location_before: LocationId | None
    location_before_name: str = ""
    location_after: LocationId | None
    location_after_name: str = ""
    score_before: int | None = None
    score_after: int | None = None
    inventory_before: list[str] = Field(default_factory=list)
    inventory_after: list[str] = Field(default_factory=list)
    died: bool = False
    won: bool = False
    location_unknown: bool = False
    """The game could not say where the player was after this turn; the last known room
    stands in for it."""
    world_changed: bool | None = None
    """Whether the turn changed the game's world (an object moved or changed state, the
    player's own flags aside); None when the game cannot say."""
    tests: TurnTests | None = None
    """What the game answered about this turn's claims, when the caller asked it itself (an
    engine with its own way of testing); None otherwise: play and replay are asked lazily,
    through the memory service's `IClaimTester`, about the claims a lesson proposes."""

    @property
    def score_delta(self) -> int:
        """Score gained this turn (0 when the score is unknown)."""
        if self.score_before is None or self.score_after is None:
            return 0
        return self.score_after - self.score_before

    @property
    def moved(self) -> bool:
        """Whether the location changed."""
        return self.location_after is not None and self.location_after != self.location_before

    @property
    def inventory_changed(self) -> bool:
        """Whether an item was gained or lost."""
        return sorted(self.inventory_before) != sorted(self.inventory_after)


RECENT_TURNS = 50
"""Turns of history a GameState keeps (synthesis reads a few; prerequisites a few more)."""


class GameState(BaseModel):
    """Everything the memory service reads about the running game."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    scenario: ScenarioInstance = Field(default_factory=ScenarioInstance)
    locations: dict[int, LocationState] = Field(default_factory=dict)
    npcs: dict[str, NPCInstance] = Field(default_factory=dict)
    quests: dict[str, QuestState] = Field(default_factory=dict)
    """The quests memories name ("Completed quest 'The Goblin Cage'"), by id."""
    acts: dict[str, str] = Field(default_factory=dict)
    """Act id -> name."""
    conversation_history: list[Message] = Field(default_factory=list)
    episode: int = 1
    turn: int = 0
    turns: list[TurnOutcome] = Field(default_factory=list)
    """The episode's recorded turns, newest last (at most `RECENT_TURNS`): the history that
    synthesis reads travels with the game, not in the memory service."""
    memory_checkpoint: MemoryCheckpoint | None = None
    """The memories and cursors of the moment the game was saved (`SaveGame`, or
    `cairn.Memory.checkpoint`): serialised with the rest of the state, it is what `RestoreGame`
    goes back to when the save is loaded. None until a checkpoint is taken."""

    def record_turn(self, outcome: TurnOutcome) -> None:
        """Keep `outcome` as the newest recorded turn of the episode."""
        self.turns = [*self.turns, outcome][-RECENT_TURNS:]

    def add_message(
        self,
        text: str,
        *,
        role: str = "narrator",
        npcs_present: list[str] | None = None,
        npcs_mentioned: list[str] | None = None,
    ) -> Message:
        """Append a message at the current location and return it."""
        loc_id = self.scenario.current_location_id
        loc = self.locations.get(loc_id) if loc_id is not None else None
        message = Message(
            index=len(self.conversation_history),
            role=role,
            text=text,
            location_id=loc_id,
            location_name=loc.name if loc else None,
            npcs_present=list(npcs_present or []),
            npcs_mentioned=list(npcs_mentioned or []),
            turn=self.turn,
            episode=self.episode,
        )
        self.conversation_history.append(message)
        return message

    @property
    def current_location(self) -> LocationState | None:
        """The location the player is in, or None when unknown."""
        loc_id = self.scenario.current_location_id
        return self.locations.get(loc_id) if loc_id is not None else None
