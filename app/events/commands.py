"""Commands: imperative requests, each handled by exactly one handler."""

from __future__ import annotations

from dataclasses import dataclass, field

from cairn.models.checkpoint import MemoryCheckpoint
from cairn.models.game import GameState, TurnOutcome
from cairn.models.memory import LocationRecord, MemoryCategory, MemoryEntry, Way


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
    connects: bool = True
    """Whether the move is a way between the two rooms (the map learns it); False for a move
    no exit made: a death's resurrection somewhere else, say."""


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
    turn: int | None = None
    """The turn it was completed at (its memory is tagged with it); None: the turns of the
    messages its memory sums up."""


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
    tags: tuple[str, ...] = ()
    ways_in: tuple[Way, ...] = ()
    """What the note says as fields (the memory's tags and ways in)."""


@dataclass(frozen=True)
class EndEpisode(Command):
    """Close the current episode."""

    won: bool = False
    died: bool = False
    final: TurnOutcome | None = None
    """The turn that ended it (the winning move, or the death): its words become the ending's
    memory. Without it, a won/died episode is summarized from the recent messages."""


@dataclass(frozen=True)
class SaveGame(Command):
    """The game is being saved: put a checkpoint of the memories and cursors into
    `game_state.memory_checkpoint`, taken when the command's unit of work commits (so after
    the commands before it in an enclosing unit), for the engine to serialise with the state."""


@dataclass(frozen=True)
class RestoreGame(Command):
    """A saved game was loaded: make memory what it was at `checkpoint` (default: the one the
    loaded `game_state` carries): memories recorded after it leave the live view (SUPERSEDED,
    tagged `undone`), those it had come back, the cursors return to its values. Returns a
    RestoreReport. The game's own state (location, quests, history) is the engine's to load."""

    checkpoint: MemoryCheckpoint | None = None


# -- memories written as given (`cairn.Memory`, `cairn memories import`), not from a game ------


@dataclass(frozen=True, kw_only=True)
class EditCommand(Command):
    """Base of the commands that write memories as their caller gives them. They act on the
    store, not on a game: the game state is an empty one unless given (keyword only)."""

    game_state: GameState = field(default_factory=GameState)


@dataclass(frozen=True)
class AddMemory(EditCommand):
    """Store a new, validated memory (its id new to the store); returns it as staged."""

    entry: MemoryEntry


@dataclass(frozen=True)
class UpdateMemory(EditCommand):
    """Change the given fields of memory `memory_id` (None: unchanged); returns the new
    version, or the memory as it is when nothing is given."""

    memory_id: str
    text: str | None = None
    title: str | None = None
    importance: int | None = None
    category: MemoryCategory | None = None
    tags: tuple[str, ...] | None = None
    persistence: str | None = None
    """A persistence level (`models.memory.Persistence`); "" takes the level away."""


@dataclass(frozen=True)
class ForgetMemory(EditCommand):
    """Invalidate memory `memory_id`: SUPERSEDED with no successor, never deleted."""

    memory_id: str


@dataclass(frozen=True)
class ImportMemories(EditCommand):
    """Load an export (its memories, then its location records' visits) into an empty store,
    in one unit of work; returns the warnings (filled once the unit commits)."""

    records: tuple[LocationRecord, ...] = ()
    entries: tuple[MemoryEntry, ...] = ()
