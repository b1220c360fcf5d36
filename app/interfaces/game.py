"""IGame: what the play session needs from an interactive-fiction game (Jericho or a fake)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from cairn.models.vocabulary import Vocabulary


class GameObservation(BaseModel):
    """The game as seen after reset or after a step.

    `location_id` is the room around the player, None when the game cannot say where the
    player is: never invent an id. `location_name` is that room's own name ("" without a
    location). `location_context` says what the player is in or on there ("in the magic
    boat", "in bed"): context, never a location of its own. `objects` are the visible things
    of the room in the game's own words, lower case (the nouns an agent can use).
    `score` and `max_score` are None when the game is not fully supported (unknown, not 0).
    `world_changed` says whether the step that led here changed the game's world (an object
    moved or changed state, the player's own flags aside): None after a reset or a restore,
    and whenever the game cannot say (the outcome then rests on location, score, inventory
    and the game's words).
    """

    model_config = ConfigDict(extra="forbid")

    text: str
    location_id: StrictInt | None
    location_name: str = ""
    location_context: str = ""
    objects: list[str] = Field(default_factory=list)
    inventory: list[str] = Field(default_factory=list)
    score: int | None = None
    max_score: int | None = None
    moves: int = 0
    done: bool = False
    died: bool = False
    won: bool = False
    npcs_present: list[str] = Field(default_factory=list)
    npcs_mentioned: list[str] = Field(default_factory=list)
    world_changed: bool | None = None


class Probe(BaseModel):
    """What one command did on a second interpreter (`IGame.probe`): the played game never
    sees it. `world_changed` is given for the last command of a probe only (what that
    command changed beyond what `wait` changes from the same state), else None."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str
    text: str = ""
    location_id: StrictInt | None = None
    score: int | None = None
    inventory: list[str] = Field(default_factory=list)
    died: bool = False
    won: bool = False
    world_changed: bool | None = None


class IGame(ABC):
    """One game: reset, step, save and restore. Location ids are the game's own integers."""

    @property
    @abstractmethod
    def name(self) -> str:
        """A short name for reports (the story file's stem)."""

    @property
    @abstractmethod
    def fully_supported(self) -> bool:
        """Whether score and victory are detected (else they are reported as unknown)."""

    @abstractmethod
    def reset(self) -> GameObservation:
        """Start a new episode."""

    @abstractmethod
    def step(self, action: str) -> GameObservation:
        """Send one command."""

    @abstractmethod
    def save(self) -> bytes:
        """Serialize the full game state."""

    @abstractmethod
    def restore(self, state: bytes) -> GameObservation:
        """Return to a state from `save` (the observation is re-read, text is empty)."""

    @abstractmethod
    def walkthrough(self) -> list[str]:
        """The game's known walkthrough, or an empty list."""

    def probe(self, back: int, commands: Sequence[str]) -> list[Probe] | None:
        """Ask the game what `commands` would do, from the state before the `back`-th last
        step of this episode (1: before the last step), on an interpreter that is not the
        one played: one `Probe` per command sent (fewer when the game ended on the way).
        None when the game cannot be asked (no second interpreter, a state no longer
        kept, a game that cannot say where the player is)."""
        return None

    def vocabulary(self) -> Vocabulary | None:
        """The words the game's parser knows; None when the game cannot say."""
        return None

    def look(self) -> str | None:
        """The game's own answer to `look` now (the room's name, description and what lies
        there), asked without spending a move or changing anything; None when the game
        cannot be asked that way, or has ended."""
        return None

    @abstractmethod
    def close(self) -> None:
        """Release the interpreter."""
