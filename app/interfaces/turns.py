"""ITurnInterpreter: what a turn leaves in memory, decided without writing it.

Interpreting a turn is a function of the turn (its outcome, the episode's game state) and the
memories that exist, giving typed changes (`TurnChanges`); the turn's handler applies them in
one unit of work. The interactive-fiction rules (`cairn.fiction`) are one implementation; an
engine with other rules gives its own to the memory service (`MemoryService(rules=...)`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Protocol

from cairn.models.changes import TurnChanges
from cairn.models.game import GameState, TurnOutcome
from cairn.models.memory import MemoryEntry


class IDraft(Protocol):
    """A draft of the store (`IMemoryService.drafting`): what the service would have written
    meanwhile, as typed changes for the caller to apply in its unit of work."""

    def changes(self, entry: MemoryEntry | None = None) -> TurnChanges:
        """The draft's changes (and `entry`, the memory they stored, if one)."""


class ITurnInterpreter(ABC):
    """Turns and endings -> typed memory changes (see the module docstring). An
    implementation reads the store and may ask the model and the game; it never writes: the
    store is not locked while it runs."""

    @abstractmethod
    def interpret(self, game_state: GameState, outcome: TurnOutcome) -> TurnChanges:
        """What the turn `outcome` leaves in memory. The turn is recorded in `game_state`
        (its turns, the messages it read)."""

    @abstractmethod
    def interpret_ending(self, game_state: GameState, final: TurnOutcome) -> TurnChanges:
        """What an episode's ending (a death or a win, on `final`) leaves in memory."""
