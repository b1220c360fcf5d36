"""ExplorerAgent, the offline player (`agent.py`, the turn; its parts: `episode.py`, `rules.py`,
`light.py`, `traps.py`, `routes.py`, `explore.py`, `frontier.py`, `stuck.py`, `load.py`), how
it reads words and memories (`words.py`) and what the memories it is shown tell it to do or
avoid (`lessons.py`).
HEURISTICS, not a model: see `agent.py`'s docstring."""

from cairn.agents.explorer.agent import ExplorerAgent
from cairn.agents.explorer.words import (
    DIRECTIONS,
    game_object_nouns,
    normalize,
    remembered_bad,
    remembered_dangers,
    remembered_failures,
    remembered_procedures,
    visible_objects,
    which_options,
)

__all__ = [
    "DIRECTIONS",
    "ExplorerAgent",
    "game_object_nouns",
    "normalize",
    "remembered_bad",
    "remembered_dangers",
    "remembered_failures",
    "remembered_procedures",
    "visible_objects",
    "which_options",
]
