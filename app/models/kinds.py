"""The closed vocabularies of cairn as StrEnums: triggers, world events, LLM roles, prompt
kinds. Each member is also its string, so files and logs read the same as before."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, StrictInt


class Trigger(StrEnum):
    """Significance triggers: Z-machine facts that may ask for synthesis."""

    SCORE = "score_changed"
    LOCATION = "location_changed"
    INVENTORY = "inventory_changed"
    DEATH = "death"
    FIRST_VISIT = "first_visit"
    LONG_RESPONSE = "long_response"
    WORLD = "world_changed"
    """The command changed the game's world in place (a box opened, a lamp lit), read from
    the interpreter's object tree: nothing else moved, scored or changed hands."""


class WorldEvent(StrEnum):
    """Story events that make a world memory (tagged `world:<kind>`)."""

    OBJECTIVE_COMPLETED = "objective_completed"
    QUEST_COMPLETED = "quest_completed"
    ACT_PROGRESSED = "act_progressed"
    LOCATION_CLEARED = "location_cleared"
    ENCOUNTER_COMPLETED = "encounter_completed"
    GAME_WON = "game_won"
    PLAYER_DIED = "player_died"


class Role(StrEnum):
    """What a model call is for; each role has its configured model."""

    ADVENTURER = "adventurer"
    SYNTHESIS = "synthesis"
    SUMMARY = "summary"
    OBJECTIVE = "objective"
    QUERY = "query"


class PromptKind(StrEnum):
    """The prompts the context service assembles."""

    ADVENTURER = "adventurer"
    NARRATIVE = "narrative"
    OBJECTIVE = "objective"


class EventRelated(BaseModel):
    """What a world event is about, typed (no location id stringified and parsed back)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    quest_id: str | None = None
    objective_id: str | None = None
    act_id: str | None = None
    encounter_id: str | None = None
    location_id: StrictInt | None = None
    episode: int | None = None

    def as_mapping(self) -> dict[str, str]:
        """The set fields as strings, for summarizers and event receivers."""
        return {k: str(v) for k, v in self.model_dump(exclude_none=True).items()}
