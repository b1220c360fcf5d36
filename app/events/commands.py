"""Commands: imperative requests, each handled by exactly one handler."""

from __future__ import annotations

from dataclasses import dataclass, field

from cairn.models.game import GameState, TurnOutcome


@dataclass(frozen=True)
class Command:
    """Base of every command; carries the game state it acts on."""

    game_state: GameState


@dataclass(frozen=True)
class ChangeLocation(Command):
    """Move the player to another location (summarizes the visit being left first)."""

    to_location_id: int
    to_location_name: str = ""
    via_action: str | None = None
    """The command that made the move, when a game made it (labels the map's connection)."""


@dataclass(frozen=True)
class RecordTurn(Command):
    """Record what one game turn did (the action-outcome path: triggers, then synthesis)."""

    outcome: TurnOutcome


@dataclass(frozen=True)
class CompleteObjective(Command):
    """Mark a quest objective completed; its world memory names the objective and its quest as
    `game_state.quests` names them."""

    quest_id: str
    objective_id: str
    tags: list[str] = field(default_factory=list)
    title: str = ""
    """How a player would name it ("Scored 10 in Kitchen by 'open window'"); made when empty."""


@dataclass(frozen=True)
class CompleteQuest(Command):
    """Mark a quest completed; its world memory names it as `game_state.quests` does."""

    quest_id: str
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ProgressAct(Command):
    """Move the story to its next act; its world memory names it as `game_state.acts` does."""

    act_id: str
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class UpdateLocationState(Command):
    """Change a location's danger level and/or complete one of its encounters."""

    location_id: int
    danger_level: str | None = None
    complete_encounter: str | None = None


@dataclass(frozen=True)
class RememberNote(Command):
    """Store an agent's `remember` note with its importance."""

    text: str
    importance: int = 500
    location_id: int | None = None
    world: bool = False
    """A note about the whole world (stored in the world scope, not at a location)."""


@dataclass(frozen=True)
class EndEpisode(Command):
    """Close the current episode."""

    won: bool = False
    died: bool = False
    final: TurnOutcome | None = None
    """The turn that ended it (the winning move, or the death): its words become the ending's
    memory. Without it, a won/died episode is summarized from the recent messages."""
