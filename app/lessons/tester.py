"""The game disposes: the claims a lesson would make put to the game before it is kept.

`ClaimTester` (an `IClaimTester`) follows the episode's steps (`follow`, once per step the
game took) and, when the memory service is about to write a lesson, answers its questions
(`IGame.probe`: a second interpreter from the state before the turn, the played game
untouched). Only the claims a lesson proposes are asked about, so the cost falls on the turns
that write one:

- did the action do it again? (`reproduced`; if not, nothing else is asked);
- each item proposed as needed: put it down first, then the action: if it still works, the
  item was not needed; if it fails, it was; an item the game would not let go is not tested;
- each step proposed: the turns since the player came into the room again, without that
  step wherever it was sent, then the action: if it still works, the step was not needed;
- a death or points lost (`blame`): a harmless command (`look`) in place of the last one:
  the same happens anyway, the world did it (an event, a clock); it does not, the command did.

Each probe is a few interpreter steps (play_bench prints their cost per turn).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from cairn.interfaces.claims import IClaimTester
from cairn.interfaces.game import IGame, Probe
from cairn.lessons.effects import effect_of, reproduces
from cairn.lessons.turns import since_arrival
from cairn.models.directions import normalize_action, normalize_direction
from cairn.models.game import TurnOutcome
from cairn.models.lesson import DeathBy, Effect, EffectKind, TurnTests

HARMLESS = "look"
"""The command sent in place of a fatal one: it changes nothing in any game."""

MAX_STEPS = 5
"""Steps tested before an action at most (the latest ones)."""

KEPT_TURNS = 64
"""The episode's last turns followed (a game keeps the states of fewer: `IGame.probe`)."""

MAX_ITEMS = 8
"""Items tested for one action at most."""


class ClaimTester(IClaimTester):
    """Asks `game` about the turns of one episode (see the module docstring). `follow` is
    called once per step the game took, in order; `restart` when the game's steps start
    again (a reset, a restored save)."""

    def __init__(self, game: IGame) -> None:
        self._game = game
        self._turns: deque[TurnOutcome] = deque(maxlen=KEPT_TURNS)
        self._answers: dict[tuple[object, ...], TurnTests | None] = {}
        self._again: dict[tuple[int, int], bool | None] = {}
        """Per turn, whether the action did it again (None: the game could not be asked)."""
        self._blamed: dict[tuple[int, int], DeathBy | None] = {}
        self.probes = 0
        """Probes sent so far (each a few interpreter steps)."""

    def restart(self) -> None:
        """The game's steps start again: what came before can no longer be asked about."""
        self._turns.clear()
        self._answers.clear()
        self._again.clear()
        self._blamed.clear()

    def follow(self, outcome: TurnOutcome) -> None:
        """The game took a step: `outcome` is its turn."""
        self._turns.append(outcome)

    def test(
        self, outcome: TurnOutcome, needs: Sequence[str], steps: Sequence[str]
    ) -> TurnTests | None:
        if not self._latest(outcome):
            return None
        effect = effect_of(outcome)
        if effect is None or effect.kind in (EffectKind.DIED, EffectKind.LOST):
            return None
        key = (outcome.episode, outcome.turn, tuple(needs), tuple(steps))
        if key not in self._answers:
            self._answers[key] = self._test(outcome, effect, needs, steps)
        return self._answers[key]

    def blame(self, outcome: TurnOutcome) -> DeathBy | None:
        if not self._latest(outcome):
            return None
        effect = effect_of(outcome)
        if effect is None or effect.kind not in (EffectKind.DIED, EffectKind.LOST):
            return None
        key = (outcome.episode, outcome.turn)
        if key not in self._blamed:
            self._blamed[key] = self._blame(outcome, effect)
        return self._blamed[key]

    def fatal_too(self, outcome: TurnOutcome) -> list[str]:
        """The other ways of making a fatal move (`ways_of`) that kill too, each sent from
        the state before the death in the move's place."""
        if self.blame(outcome) is not DeathBy.ACTION:
            return []
        found: list[str] = []
        for command in ways_of(outcome.action):
            answer = self._probe(1, [command])
            if answer and answer[0].died:
                found.append(command)
        return found

    def _blame(self, outcome: TurnOutcome, effect: Effect) -> DeathBy | None:
        instead = self._probe(1, [HARMLESS])
        if not instead:
            return None
        if effect.kind is EffectKind.DIED:
            return DeathBy.EVENT if instead[0].died else DeathBy.ACTION
        return DeathBy.EVENT if reproduces(effect, outcome, instead[0]) else DeathBy.ACTION

    # -- the questions ---------------------------------------------------------------------

    def _latest(self, outcome: TurnOutcome) -> bool:
        """Whether `outcome` is the last step followed (the only state the game still has)."""
        if not self._turns:
            return False
        last = self._turns[-1]
        return (last.episode, last.turn, last.action) == (
            outcome.episode,
            outcome.turn,
            outcome.action,
        )

    def _test(
        self, outcome: TurnOutcome, effect: Effect, needs: Sequence[str], steps: Sequence[str]
    ) -> TurnTests | None:
        key = (outcome.episode, outcome.turn)
        if key not in self._again:
            base = self._probe(1, [outcome.action])
            self._again[key] = (
                None if base is None else len(base) == 1 and reproduces(effect, outcome, base[0])
            )
        again = self._again[key]
        if again is None:
            return None
        if not again:
            return TurnTests(reproduced=False)
        needed, not_needed = self._items(outcome, effect, needs)
        steps_needed, steps_not = self._steps(outcome, effect, steps)
        return TurnTests(
            reproduced=True,
            needed=needed,
            not_needed=not_needed,
            steps_needed=steps_needed,
            steps_not_needed=steps_not,
        )

    def _items(
        self, outcome: TurnOutcome, effect: Effect, needs: Sequence[str]
    ) -> tuple[list[str], list[str]]:
        needed: list[str] = []
        not_needed: list[str] = []
        held = [i for i in dict.fromkeys(needs) if i in outcome.inventory_before]
        for item in held[:MAX_ITEMS]:
            answer = self._without(item, outcome)
            if answer is None:
                continue
            (not_needed if reproduces(effect, outcome, answer) else needed).append(item)
        return needed, not_needed

    def _without(self, item: str, outcome: TurnOutcome) -> Probe | None:
        """The action's probe after `item` was put down first (None: it would not go)."""
        for name in _names(item):
            found = self._probe(1, [f"drop {name}", outcome.action])
            if found is None:
                return None
            if len(found) == 2 and item not in found[0].inventory:
                return found[1]
        return None

    def _steps(
        self, outcome: TurnOutcome, effect: Effect, steps: Sequence[str]
    ) -> tuple[list[str], list[str]]:
        since = since_arrival(list(self._turns)[:-1], outcome.location_before)
        own = normalize_action(outcome.action)
        sent = {normalize_action(t.action) for t in since}
        asked = [
            s
            for s in dict.fromkeys(steps)
            if normalize_action(s) in sent and normalize_action(s) != own
        ][-MAX_STEPS:]
        if not asked:
            return [], []
        keys = {normalize_action(s) for s in asked}
        first = min(i for i, t in enumerate(since) if normalize_action(t.action) in keys)
        replayed = since[first:]
        back = len(replayed) + 1  # the state before the first step asked about
        needed: list[str] = []
        not_needed: list[str] = []
        for step in asked:  # each left out wherever it was sent
            key = normalize_action(step)
            commands = [t.action for t in replayed if normalize_action(t.action) != key]
            commands.append(outcome.action)
            found = self._probe(back, commands)
            if found is None:
                continue
            works = len(found) == len(commands) and reproduces(effect, outcome, found[-1])
            (not_needed if works else needed).append(step)
        return needed, not_needed

    def _probe(self, back: int, commands: Sequence[str]) -> list[Probe] | None:
        self.probes += 1
        return self._game.probe(back, commands)


COMPASS: tuple[str, ...] = ("north", "south", "east", "west", "northeast", "northwest")
COMPASS += ("southeast", "southwest", "up", "down")
"""The compass moves tried beside a fatal one."""

_MOVE_VERBS = frozenset(["climb", "go", "walk", "run", "jump", "descend", "ascend"])
"""Verbs that make a move in a direction (`climb down`, `jump down`)."""


def ways_of(action: str) -> list[str]:
    """The commands to try beside a fatal move `action` (a compass move, or a move verb with
    a direction: `climb down`; `jump` alone is down): the same move made otherwise (the
    direction itself, `climb d` for up and down, `jump` for down), then the other compass
    moves (a place every way out of which kills); [] for a command that is no move."""
    direction = move_direction(action)
    if direction is None:
        return []
    ways = [direction]
    if direction in ("up", "down"):
        ways.append(f"climb {direction}")
    if direction == "down":
        ways.append("jump")
    ways += [d for d in COMPASS if d != direction]  # a place every way out of which kills
    said = " ".join(action.lower().split())
    return [w for w in ways if w != said and normalize_action(w) != normalize_action(said)]


def move_direction(action: str) -> str | None:
    """The direction `action` moves in: a compass move, a move verb with a direction, or a
    bare `jump` (down); None for another command."""
    words = action.lower().split()
    if not words:
        return None
    if (direction := normalize_direction(action)) is not None:
        return direction
    if words[0] in _MOVE_VERBS and len(words) == 2:
        return normalize_direction(words[1])
    return "down" if words == ["jump"] else None


def _names(item: str) -> list[str]:
    """How to name `item` to the parser: its full name, then its last word."""
    words = item.split()
    return list(dict.fromkeys([item, words[-1]])) if words else []
