"""IKnowledgeBase: the run's strategic knowledge (knowledgebase.md), as the play loop sees it."""

from __future__ import annotations

from abc import ABC, abstractmethod

from cairn.interfaces.memory_service import IMemoryReader
from cairn.play.metrics import EpisodeStats


class IKnowledgeBase(ABC):
    """Read whole by the objective step; rewritten at every episode end."""

    @abstractmethod
    def read(self) -> str:
        """The whole knowledge base (a placeholder when there is none yet)."""

    @abstractmethod
    def update(self, memory: IMemoryReader, episode: EpisodeStats, game: str) -> None:
        """Rewrite it from the memories and the episode that just ended."""
