"""Command handlers; each depends on ports only."""

from cairn.events.handlers.game import GameHandler
from cairn.events.handlers.location import LocationHandler
from cairn.events.handlers.memory import MemoryHandler
from cairn.events.handlers.quest import QuestHandler
from cairn.events.handlers.turn import EpisodeHandler, NoteHandler, TurnHandler

__all__ = [
    "EpisodeHandler",
    "GameHandler",
    "LocationHandler",
    "MemoryHandler",
    "NoteHandler",
    "QuestHandler",
    "TurnHandler",
]
