"""The `save` and `restore` an agent types, mapped onto the game's own saved state and a
memory checkpoint (`SaveGame` / `RestoreGame` on the bus), one save per episode.

Sent to the interpreter, `save` would ask for a file name and `restore` would load a file, and
memory would keep everything remembered after the save. Here `save` keeps the interpreter's
state (`IGame.save`), the translator's view of the episode and the game state with its
checkpoint; `restore` puts all three back and sends RestoreGame, so what was remembered after
the save leaves the live view and its messages are not summarized twice. Neither is a game
turn: no message, no RecordTurn (a save is no action in the world).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from cairn.errors import CheckpointError
from cairn.events import commands as c
from cairn.events.bus import MessageBus
from cairn.interfaces.game import GameObservation, IGame
from cairn.models.game import GameState
from cairn.play.translator import EpisodeTrack

SAVE = "save"
RESTORE = "restore"
SAVED_TEXT = "Saved."
RESTORED_TEXT = "Restored."
NOTHING_SAVED_TEXT = "There is no saved game to restore."


def save_command(action: str) -> str | None:
    """`save` or `restore` when the agent typed one of them (any case), else None."""
    word = action.strip().lower()
    return word if word in (SAVE, RESTORE) else None


@dataclass
class _Saved:
    game: bytes
    track: EpisodeTrack
    state: GameState | None = None
    """Copied once the turn's unit of work committed (the checkpoint is taken then)."""


class SaveSlot:
    """The episode's one save: taken by `save`, completed by `settle` after the turn's unit of
    work commits, gone back to by `restore`."""

    def __init__(self, bus: MessageBus, game: IGame) -> None:
        self._bus = bus
        self._game = game
        self._saved: _Saved | None = None
        self._pending: _Saved | None = None

    def save(
        self, state: GameState, track: EpisodeTrack, before: GameObservation
    ) -> GameObservation:
        """Keep the game's state now; the checkpoint and the copy of `state` follow when the
        turn's unit commits (`settle`)."""
        self._bus.handle(c.SaveGame(state))
        self._pending = _Saved(self._game.save(), copy.deepcopy(track))
        return before.model_copy(update={"text": SAVED_TEXT, "world_changed": False})

    def settle(self, state: GameState) -> None:
        """After the turn's unit of work committed: the save holds the game state with its
        checkpoint (taken at that commit)."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        if state.memory_checkpoint is None:
            raise CheckpointError("save: the checkpoint was not taken when the turn committed")
        pending.state = state.model_copy(deep=True)
        self._saved = pending

    def restore(
        self, before: GameObservation
    ) -> tuple[GameState, EpisodeTrack, GameObservation] | None:
        """Back to the save: the game state to play on (a copy: the save can be loaded again),
        the translator's track and the game's observation; None when nothing was saved."""
        saved = self._saved
        if saved is None or saved.state is None:
            return None
        state = saved.state.model_copy(deep=True)
        self._bus.handle(c.RestoreGame(state))
        track = copy.deepcopy(saved.track)
        obs = self._game.restore(saved.game)
        if obs.location_id is None and track.last_id is not None:
            obs = obs.model_copy(
                update={"location_id": track.last_id, "location_name": track.last_name}
            )
        return state, track, obs.model_copy(update={"text": RESTORED_TEXT})
