"""ClaimSlot: the composition root's one `IClaimTester`, which a play or a replay session
attaches its game's tester to while it runs (none attached: nothing can be asked)."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.interfaces.claims import IClaimTester, NoClaimTests
from cairn.models.game import TurnOutcome
from cairn.models.lesson import DeathBy, TurnTests


class ClaimSlot(IClaimTester):
    """Delegates to the attached tester (see the module docstring)."""

    def __init__(self) -> None:
        self._tester: IClaimTester = NoClaimTests()

    def attach(self, tester: IClaimTester | None) -> None:
        """Ask `tester` from now on (None: nothing can be asked)."""
        self._tester = tester if tester is not None else NoClaimTests()

    def test(
        self, outcome: TurnOutcome, needs: Sequence[str], steps: Sequence[str]
    ) -> TurnTests | None:
        return self._tester.test(outcome, needs, steps)

    def blame(self, outcome: TurnOutcome) -> DeathBy | None:
        return self._tester.blame(outcome)

    def fatal_too(self, outcome: TurnOutcome) -> list[str]:
        return self._tester.fatal_too(outcome)
