"""Command handlers; each depends on ports only."""

from app.events.handlers.location import LocationHandler
from app.events.handlers.quest import QuestHandler
from app.events.handlers.turn import EpisodeHandler, NoteHandler, TurnHandler

__all__ = ["EpisodeHandler", "LocationHandler", "NoteHandler", "QuestHandler", "TurnHandler"]
