"""The run's strategic knowledge (knowledgebase.md): IKnowledgeBase, as the play loop sees it,
and IKnowledgeWriter, the model that may rewrite it."""

from __future__ import annotations

from abc import ABC, abstractmethod

from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.episode import EpisodeStats

EPISODES_HEADER = "## Episodes"
"""The section of one line per episode that cairn appends itself: a rewrite never holds it."""


class IKnowledgeBase(ABC):
    """Read whole by the objective step; rewritten at every episode end."""

    @abstractmethod
    def read(self) -> str:
        """The whole knowledge base (a placeholder when there is none yet)."""

    @abstractmethod
    def update(self, memory: IMemoryReader, episode: EpisodeStats, game: str) -> None:
        """Rewrite it from the memories and the episode that just ended."""


class IKnowledgeWriter(ABC):
    """Rewrites the knowledge in a model's words (offline there is none: the digest stays)."""

    @abstractmethod
    def rewrite(self, old: str, digest: str, episode: str) -> str | None:
        """The knowledge rewritten from the `old` text (without its episode lines), the
        memories' `digest` and the `episode`'s line, without an `EPISODES_HEADER` section;
        None when no usable rewrite came (the digest is kept)."""
