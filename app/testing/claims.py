"""Playing a game with its steps followed by a `ClaimTester`, as play does: for tests of how
a lesson's claims are put to the game."""

from __future__ import annotations

from cairn.interfaces.game import IGame
from cairn.lessons.tester import ClaimTester
from cairn.models.game import TurnOutcome
from cairn.play.translator import turn_outcome


def followed(game: IGame, commands: list[str]) -> tuple[ClaimTester, list[TurnOutcome]]:
    """`commands` played on `game` from a reset, each step followed by a new ClaimTester;
    the tester (which can answer about the last turn) and every turn's outcome."""
    tester = ClaimTester(game)
    before = game.reset()
    found: list[TurnOutcome] = []
    for turn, command in enumerate(commands, 1):
        after = game.step(command)
        outcome = turn_outcome(1, turn, command, before, after)
        tester.follow(outcome)
        found.append(outcome)
        before = after
    return tester, found
