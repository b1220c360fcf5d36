"""IClaimTester: asking the game about a turn's claims before a lesson of it is kept.

The memory service proposes claims (items that had to be held, steps that had to come first)
and asks the game through this port; play and replay attach one that asks a second
interpreter (`cairn.lessons.tester.ClaimTester`). Without one (a library user's engine, the
tests' fakes), nothing can be asked and lessons say their claims are untested.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from cairn.models.game import TurnOutcome
from cairn.models.lesson import DeathBy, TurnTests


class IClaimTester(ABC):
    """Asks the game about the turn just played (see the module docstring)."""

    @abstractmethod
    def test(
        self, outcome: TurnOutcome, needs: Sequence[str], steps: Sequence[str]
    ) -> TurnTests | None:
        """Whether the action does it again, and what leaving out each item (`needs`) and
        each step (`steps`) does; None when the game cannot be asked about `outcome`."""

    @abstractmethod
    def blame(self, outcome: TurnOutcome) -> DeathBy | None:
        """For a death or points lost: what a harmless command in the action's place does
        (`event`: the same happens; `action`: it does not); None when it cannot be asked."""

    def fatal_too(self, outcome: TurnOutcome) -> list[str]:
        """For a death the command caused by a move: the other ways of making that move
        that kill too (none by default: nothing asked)."""
        return []


class NoClaimTests(IClaimTester):
    """Nothing can be asked: every claim stays untested."""

    def test(
        self, outcome: TurnOutcome, needs: Sequence[str], steps: Sequence[str]
    ) -> TurnTests | None:
        return None

    def blame(self, outcome: TurnOutcome) -> DeathBy | None:
        return None
