"""FictionRules: the interactive-fiction rules as an `ITurnInterpreter`."""

from __future__ import annotations

from typing import Any

from cairn.fiction.ending_memories import record_ending
from cairn.fiction.turn_rules import TurnRules
from cairn.interfaces.turns import ITurnInterpreter
from cairn.models.changes import TurnChanges
from cairn.models.game import GameState, TurnOutcome
from cairn.services.memory_core import MemoryCore
from cairn.services.memory_service import MemoryService


class FictionRules(ITurnInterpreter):
    """Runs the rules (`turn_rules.py`, `ending_memories.py`) against a draft of the store
    (`MemoryCore.drafting`): what they would write comes back as the turn's changes."""

    def __init__(self, core: MemoryCore) -> None:
        self._core = core
        self._rules = TurnRules(core)

    def interpret(self, game_state: GameState, outcome: TurnOutcome) -> TurnChanges:
        with self._core.drafting() as draft:
            entry = self._rules.record_action_outcome(game_state, outcome)
        return draft.changes(entry)

    def interpret_ending(self, game_state: GameState, final: TurnOutcome) -> TurnChanges:
        with self._core.drafting() as draft:
            entry = record_ending(self._core, game_state, final)
        return draft.changes(entry)


def fiction_memory_service(*args: Any, **kwargs: Any) -> MemoryService:
    """A `MemoryService` with these rules, as the container builds it (for engines and tests
    that build one by hand); takes `MemoryService`'s arguments."""
    return MemoryService(*args, **{**kwargs, "rules": FictionRules})
