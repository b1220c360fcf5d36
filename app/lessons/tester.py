"""The game disposes: a turn's claims put to the game before any lesson of it is kept.

`ClaimTester` follows the episode's steps and, for a turn worth a lesson (a score, a win, a
death, a change of the world where the player stands, a way that had failed here before),
asks the game (`IGame.probe`: a second interpreter from the state before the turn, the played
game untouched):

- did the action do it again? (`reproduced`; if not, nothing else is asked);
- for each item held: put it down first, then the action: if it still works, the item was
  not needed; if it fails, it was; an item the game would not let go is not tested;
- for each step taken here since arriving that changed something: the turns since the first
  of them again, without that step, then the action: if it still works, the step was not
  needed;
- for a death: a harmless command (`look`) in place of the last one: dies anyway, the world
  killed (an event, a clock); lives, the command killed.

Each probe is a few interpreter steps; they are spent on rare turns only (play_bench prints
their cost per turn).
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.interfaces.game import IGame, Probe
from cairn.lessons.effects import effect_of, reproduces
from cairn.models.directions import normalize_action, normalize_direction
from cairn.models.game import TurnOutcome
from cairn.models.lesson import DeathBy, Effect, EffectKind, TurnTests

HARMLESS = "look"
"""The command sent in place of a fatal one: it changes nothing in any game."""

MAX_STEPS = 5
"""Steps tested before an action at most (the latest ones)."""

_TESTED = frozenset({EffectKind.SCORED, EffectKind.WON, EffectKind.CHANGED, EffectKind.MOVED})


class ClaimTester:
    """Asks `game` about the turns of one episode (see the module docstring). `examine` is
    called once per step the game took, in order; `restart` when the game's steps start
    again (a reset, a restored save)."""

    def __init__(self, game: IGame) -> None:
        self._game = game
        self._turns: list[TurnOutcome] = []
        self.probes = 0
        """Probes sent so far (each a few interpreter steps)."""

    def restart(self) -> None:
        """The game's steps start again: what came before can no longer be asked about."""
        self._turns.clear()

    def examine(self, outcome: TurnOutcome) -> TurnTests | None:
        """The game's answers about `outcome`'s claims (None: not a turn worth asking about,
        or the game cannot be asked)."""
        earlier = list(self._turns)
        self._turns.append(outcome)
        effect = effect_of(outcome)
        if effect is None:
            return None
        if effect.kind is EffectKind.DIED:
            return self._death(outcome)
        if effect.kind is EffectKind.LOST:
            return self._harm(outcome, effect)
        if effect.kind not in _TESTED:
            return None
        plain = normalize_direction(outcome.action) is not None
        if effect.kind is EffectKind.MOVED and plain and not _failed_here_before(outcome, earlier):
            return None  # a plain way: nothing held or done first is claimed for it
        base = self._probe(1, [outcome.action])
        if base is None:
            return None
        if not (len(base) == 1 and reproduces(effect, outcome, base[0])):
            return TurnTests(reproduced=False)
        needed, not_needed = self._items(outcome, effect)
        steps_needed, steps_not = self._steps(outcome, effect, earlier)
        return TurnTests(
            reproduced=True,
            needed=needed,
            not_needed=not_needed,
            steps_needed=steps_needed,
            steps_not_needed=steps_not,
        )

    # -- the questions ---------------------------------------------------------------------

    def _death(self, outcome: TurnOutcome) -> TurnTests | None:
        instead = self._probe(1, [HARMLESS])
        if not instead:
            return None
        by = DeathBy.EVENT if instead[0].died else DeathBy.ACTION
        return TurnTests(reproduced=True, death_by=by)

    def _harm(self, outcome: TurnOutcome, effect: Effect) -> TurnTests | None:
        instead = self._probe(1, [HARMLESS])
        if not instead:
            return None
        by = DeathBy.EVENT if reproduces(effect, outcome, instead[0]) else DeathBy.ACTION
        return TurnTests(reproduced=True, harm_by=by)

    def _items(self, outcome: TurnOutcome, effect: Effect) -> tuple[list[str], list[str]]:
        needed: list[str] = []
        not_needed: list[str] = []
        for item in dict.fromkeys(outcome.inventory_before):
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
        self, outcome: TurnOutcome, effect: Effect, earlier: list[TurnOutcome]
    ) -> tuple[list[str], list[str]]:
        since = _since_arrival(outcome, earlier)
        own = normalize_action(outcome.action)
        candidates = [t for t in since if _did_something(t) and normalize_action(t.action) != own]
        steps = list(dict.fromkeys(t.action for t in candidates))[-MAX_STEPS:]
        if not steps:
            return [], []
        first = min(i for i, t in enumerate(since) if t.action in steps)
        replayed = since[first:]
        back = len(replayed) + 1  # the state before the first candidate step
        needed: list[str] = []
        not_needed: list[str] = []
        for step in steps:  # each left out wherever it was sent
            commands = [t.action for t in replayed if t.action != step] + [outcome.action]
            found = self._probe(back, commands)
            if found is None:
                continue
            works = len(found) == len(commands) and reproduces(effect, outcome, found[-1])
            (not_needed if works else needed).append(step)
        return needed, not_needed

    def _probe(self, back: int, commands: Sequence[str]) -> list[Probe] | None:
        self.probes += 1
        return self._game.probe(back, commands)


def _names(item: str) -> list[str]:
    """How to name `item` to the parser: its full name, then its last word."""
    words = item.split()
    return list(dict.fromkeys([item, words[-1]])) if words else []


def _since_arrival(outcome: TurnOutcome, earlier: list[TurnOutcome]) -> list[TurnOutcome]:
    """The steps taken in `outcome`'s room since the player last came in, oldest first."""
    found: list[TurnOutcome] = []
    for turn in reversed(earlier):
        if turn.location_before != outcome.location_before or turn.moved or turn.died:
            break
        found.insert(0, turn)
    return found


def _did_something(turn: TurnOutcome) -> bool:
    """A step that changed the world, what the player held or the score; when the game
    cannot say whether the world changed, any step (the probe tells)."""
    return turn.world_changed is not False or turn.inventory_changed or turn.score_delta != 0


def _failed_here_before(outcome: TurnOutcome, earlier: list[TurnOutcome]) -> bool:
    return any(
        t.location_before == outcome.location_before and t.action == outcome.action and not t.moved
        for t in earlier
    )
