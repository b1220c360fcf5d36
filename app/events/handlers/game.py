"""Game handler: saving and loading a game (SaveGame, RestoreGame)."""

from __future__ import annotations

from cairn.errors import CheckpointError
from cairn.events.commands import RestoreGame, SaveGame
from cairn.interfaces.memory_service import IMemoryCheckpoints
from cairn.models.checkpoint import RestoreReport


class GameHandler:
    """SaveGame, RestoreGame -> IMemoryCheckpoints, inside the command's unit of work."""

    def __init__(self, checkpoints: IMemoryCheckpoints) -> None:
        self._checkpoints = checkpoints

    def save_game(self, command: SaveGame) -> None:
        """Take the checkpoint into the game state (when the unit of work commits)."""
        self._checkpoints.checkpoint(command.game_state)

    def restore_game(self, command: RestoreGame) -> RestoreReport:
        """Go back to the command's checkpoint, else the game state's; CheckpointError when
        there is neither."""
        mark = command.checkpoint or command.game_state.memory_checkpoint
        if mark is None:
            raise CheckpointError(
                "RestoreGame: no checkpoint given and game_state.memory_checkpoint is None"
                " (send SaveGame, or cairn.Memory.checkpoint, before saving the game)"
            )
        return self._checkpoints.restore(command.game_state, mark)
