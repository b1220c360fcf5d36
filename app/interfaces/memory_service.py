"""IMemoryService: the port handlers call (location, NPC and world scopes with cursors);
IMemoryReader, its read-only half for prompts, the knowledge base and the query tools;
IMemoryEditor, the narrow port that writes memories as a caller gives them (`cairn.Memory`,
`cairn memories import`); and IMemoryCheckpoints, the narrow port of saving and loading a
game (`SaveGame`, `RestoreGame`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager

from cairn.interfaces.turns import IDraft, ITurnInterpreter
from cairn.models.checkpoint import MemoryCheckpoint, RestoreReport
from cairn.models.game import GameState, TurnOutcome
from cairn.models.kinds import EventRelated, WorldEvent
from cairn.models.memory import LocationRecord, MemoryCategory, MemoryEntry, Way


class IMemoryReader(ABC):
    """The read-only view of memory: what context builders, the knowledge base and the query
    tools get (they can never write)."""

    @abstractmethod
    def location_memories(self, location_id: int) -> list[MemoryEntry]:
        """Visible memories of a location, oldest first."""

    @abstractmethod
    def adjacent_memories(self, location_id: int) -> dict[int, list[MemoryEntry]]:
        """Visible memories of the locations next to this one, by id."""

    @abstractmethod
    def npc_memories(self, npc_id: str) -> list[MemoryEntry]:
        """Visible memories of an NPC, oldest first."""

    @abstractmethod
    def world_memories(self) -> list[MemoryEntry]:
        """Visible world memories, oldest first."""

    @abstractmethod
    def top_memories(self, limit: int = 10) -> list[MemoryEntry]:
        """Visible memories by importance, highest first."""

    @abstractmethod
    def memories_by_id(self, memory_ids: Iterable[str]) -> list[MemoryEntry]:
        """The visible memories with these ids, in the order given (ids of memories that are
        gone, hidden or over are left out): a prompt section's memories, read back."""

    @abstractmethod
    def location_record(self, location_id: int) -> LocationRecord | None:
        """Name, visit count and episodes of a location, when known."""


class IMemoryService(IMemoryReader):
    """Creates, supersedes and prunes memories (and reads them, as IMemoryReader)."""

    @abstractmethod
    def drafting(self) -> AbstractContextManager[IDraft]:
        """A block whose writes (in this thread) go to a draft, not the store: the draft's
        `changes()` are for the caller to apply in one unit of work (a handler: the bus's).
        The store is not locked meanwhile (the summarizer may be asked inside)."""

    @abstractmethod
    def on_location_exit(self, game_state: GameState) -> None:
        """Summarize the visit that is ending: one location memory plus NPC memories."""

    @abstractmethod
    def on_location_enter(
        self, game_state: GameState, from_location_id: int | None, via: str | None = None
    ) -> None:
        """Count a visit to the current location and learn the connection from the last one.

        `via` is the command that made the move, when known (it labels the map's connection).
        """

    @abstractmethod
    def on_world_event(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        tags: list[str] | None = None,
        related: EventRelated | Mapping[str, str] | None = None,
        title: str | None = None,
        turn: int | None = None,
    ) -> None:
        """Summarize story progress since the world cursor into one world memory.

        `title` names the event as a player would ("Scored 10 in Kitchen by 'open window'");
        without one a title is made from the kind and the related names. Every event is
        remembered, also when it shares its messages with the event before it; an event
        with a title that a world memory of its kind already has (the same score, in a later
        episode) is that memory's event again: it is confirmed (tagged with the episode), not
        written twice. `turn` is the turn the event happened at: the memory's turn (without
        one, the turns of the messages it sums up).
        """

    @abstractmethod
    def record_ending(self, game_state: GameState, final: TurnOutcome) -> MemoryEntry | None:
        """Remember how an episode ended (a win or a death) in the world scope, in the game's
        own words, with the turn and the room; a death not caused by the last command (clock,
        hunger, air, plot) is never blamed on it."""

    @abstractmethod
    def record_action_outcome(
        self, game_state: GameState, outcome: TurnOutcome
    ) -> MemoryEntry | None:
        """Run the memory triggers and, when one fires, synthesis; store at the SOURCE. (The
        turn rules' changes, `interpreter().interpret`, applied in one unit of work.)"""

    @abstractmethod
    def interpreter(self) -> ITurnInterpreter:
        """The turn rules this service interprets turns and endings with."""

    @abstractmethod
    def remember(
        self,
        game_state: GameState,
        text: str,
        importance: int,
        location_id: int | None = None,
        tags: list[str] | None = None,
        ways_in: list[Way] | None = None,
    ) -> MemoryEntry | None:
        """Store an agent note, or bump the importance of a near-duplicate. `tags` and
        `ways_in`: what the note says as fields (the offline player's trap notes)."""

    @abstractmethod
    def end_episode(self, game_state: GameState) -> None:
        """Close the episode: forget per-episode history, prune."""

    @abstractmethod
    def prune(self) -> list[str]:
        """Apply the pruning policy; return a line per memory it retired or removed."""


class IMemoryEditor(ABC):
    """Writes memories as given, not from a game: what the library's add/update/forget and an
    import ask for. Each method writes in one unit of work (the command's, on the bus) and
    sends its events after that unit commits."""

    @abstractmethod
    def add_memory(self, entry: MemoryEntry) -> MemoryEntry:
        """Store `entry` (its id new to the store); a location memory without a location name
        takes the one the store knows. Returns the entry staged; `memory_recorded` is sent,
        with the entry as stored, after commit."""

    @abstractmethod
    def update_memory(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        title: str | None = None,
        importance: int | None = None,
        category: MemoryCategory | None = None,
        tags: Iterable[str] | None = None,
        persistence: str | None = None,
    ) -> MemoryEntry:
        """Change the given fields of a memory (the others stay) and return the new version;
        nothing given changes nothing (`persistence=""` takes the level away).
        MemoryNotFoundError for an unknown id; pydantic's ValidationError when the changed
        memory would be invalid, InvalidMemoryError for an unknown persistence level (nothing
        is staged)."""

    @abstractmethod
    def forget_memory(self, memory_id: str) -> None:
        """Mark a memory SUPERSEDED with no successor (never deleted); `memory_superseded` after
        commit. One already SUPERSEDED is left as it is (its successor link is kept).
        MemoryNotFoundError for an unknown id."""

    @abstractmethod
    def import_memories(
        self, records: Iterable[LocationRecord], entries: Iterable[MemoryEntry]
    ) -> list[str]:
        """Add every memory and location record to an empty store (StoreError when it holds
        any), announcing nothing: an import restores memories, it records none. Returns a list
        that holds, once the unit commits, a warning per location record the store's
        operations could not make exactly (e.g. more episodes than visits)."""


class IMemoryCheckpoints(ABC):
    """Saving and loading a game: a checkpoint of the memories and cursors goes into the saved
    `GameState`, and a restore brings the store's live view and the cursors back to it."""

    @abstractmethod
    def checkpoint(self, game_state: GameState) -> None:
        """Put a `MemoryCheckpoint` of the memories and cursors as stored into
        `game_state.memory_checkpoint`: at once outside a unit of work; inside one, when it
        commits (until then the field is None), so that it never holds a memory whose
        cursor has not moved yet."""

    @abstractmethod
    def restore(self, game_state: GameState, checkpoint: MemoryCheckpoint) -> RestoreReport:
        """Make the live view the checkpoint's again, in one unit of work: every visible
        memory it did not have becomes SUPERSEDED with the tag `undone` (never deleted; the
        archive step moves it), every memory of its live view that left it (superseded,
        retired, archived) comes back as it was; once that commits, the game state's cursors
        are the checkpoint's (its messages are summarized again where their memories were
        undone, never twice). Returns the ids it changed."""
