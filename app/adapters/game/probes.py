"""Asking a second interpreter what commands would do (`JerichoGame.probe`), and what every
interpreter is read for: its world diff, how a step ended, an answer undone."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from cairn.interfaces.game import Probe

_DEATH = re.compile(r"\*+\s*you (?:have )?(?:died|lost)\s*\*+|\byou have died\b", re.I)

ProbeReader = Callable[[Any, str, str, bool, "bool | None"], Probe]
"""Reads one probe from the interpreter after a step: (env, command, text, done, changed)."""


def run_probe(
    shadow: Any, start: tuple[Any, ...], commands: Sequence[str], read: ProbeReader
) -> list[Probe]:
    """`commands` sent to `shadow` from the state `start`, one `Probe` each (`read`), up to
    the one that ends the game; the last one's `world_changed` is what it changed beyond what
    `wait` changes from the same state."""
    shadow.set_state(start)
    found: list[Probe] = []
    for index, command in enumerate(commands):
        before = shadow.get_state() if index == len(commands) - 1 else None
        text, _reward, done, _info = shadow.step(command)
        # read before the wait's comparison: some games (TextWorld's) report the score
        # restored with a state only after the next step
        probe = read(shadow, command, str(text), bool(done), None)
        if before is not None:
            changed = changed_beyond_waiting(shadow, before)
            probe = probe.model_copy(update={"world_changed": changed})
        found.append(probe)
        if done:
            break
    return found


def changed_beyond_waiting(env: Any, start: tuple[Any, ...]) -> bool:
    """Whether the step `env` just took from `start` changed the world beyond what `wait`
    changes from there (`env` is left where the step took it)."""
    own = world_diff(env)
    if not own:
        return False
    after = env.get_state()
    passing = waiting_diff(env, start)
    env.set_state(after)
    return bool(own - passing)


def waiting_diff(env: Any, start: tuple[Any, ...]) -> set[tuple[int, int, int]]:
    """What `wait` changes from the state `start` (time alone: a timed event); `env` is
    left after the wait."""
    env.set_state(start)
    env.step("wait")
    return world_diff(env)


def command_changed(
    env: Any, second: Callable[[], Any], before: tuple[Any, ...] | None
) -> bool | None:
    """Whether the command `env` just played from the state `before` changed the world beyond
    what `wait` changes from there (tried on `second()`, never on `env`); None with no state
    before (an unsupported game) or an interpreter without the diff."""
    if before is None:
        return None
    try:
        own = world_diff(env)
        if not own:
            return False
        passing = waiting_diff(second(), before)
    except Exception:  # an interpreter without the diff: the game cannot say
        return None
    return bool(own - passing)


def answers_aside(
    second: Callable[[], Any], env: Any, commands: Sequence[str]
) -> list[str] | None:
    """The answers to `commands`, each sent to `second()` from `env`'s current state (`env`
    never moves); None when the second interpreter cannot follow."""
    try:
        state = env.get_state()
        shadow = second()
        answers = []
        for command in commands:
            shadow.set_state(state)
            answers.append(str(shadow.step(command)[0]))
    except Exception:  # an interpreter that cannot follow: the game cannot be asked
        return None
    return answers


def asked(env: Any, command: str) -> str:
    """`env`'s answer to `command`, undone: it costs no move and changes nothing."""
    state = env.get_state()
    try:
        text, _r, _d, _i = env.step(command)
    except Exception:  # an interpreter error while asking: no answer
        text = ""
    finally:
        env.set_state(state)
    return str(text)


def ending(
    env: Any, text: str, done: bool, supported: bool, score: int | None, max_score: int | None
) -> tuple[bool, bool]:
    """(won, died) of `env` after a step that answered `text`. A death banner without `done`
    (a resurrection) is still a death; for supported games, `victory()` or reaching the max
    score when the game ended is a win, else `game_over()` is a death."""
    banner = _DEATH.search(text) is not None
    if not done or not supported:
        return False, banner
    full = score is not None and max_score is not None and 0 < max_score <= score
    won = bool(env.victory()) or full
    return won, not won and (bool(env.game_over()) or banner)


def world_diff(env: Any) -> set[tuple[int, int, int]]:
    """The last step's changes as (kind, object or address, parent, flag or value): kinds 0
    moved, 1 flag set, 2 flag cleared, 3 special memory; the player's own flags left out."""
    player = int(getattr(env, "player_obj_num", 0) or 0)
    found: set[tuple[int, int, int]] = set()
    for kind, pairs in enumerate(env._get_world_diff()):
        for first, second in pairs:
            if not (kind in (1, 2) and int(first) == player):
                found.add((kind, int(first), int(second)))
    return found
