"""The run's strategic knowledge (knowledgebase.md): IKnowledgeBase, as the play loop sees it,
and IKnowledgeWriter, the model that may rewrite it."""

from __future__ import annotations

from abc import ABC, abstractmethod

from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.episode import EpisodeStats

EPISODES_HEADER = "## Episodes"
"""The section of one line per episode that cairn appends itself: a rewrite never holds it."""
ROUTE_HEADER = "## Route (scoring moves in the order first made)"
"""The section cairn writes itself from the memories before the episode lines: where and how
points were scored, in the order first achieved. A rewrite never holds it either."""


class IKnowledgeBase(ABC):
    """Read whole by the objective step; rewritten at every episode end."""

    @abstractmethod
    def read(self) -> str:
        """The whole knowledge base (a placeholder when there is none yet)."""

    @abstractmethod
    def update(self, memory: IMemoryReader, episode: EpisodeStats, game: str) -> None:
        """Rewrite it from the memories and the episode that just ended."""

    def route(self) -> str:
        """The lines of its route section (`ROUTE_HEADER`), "" when it has none."""
        text = self.read()
        if ROUTE_HEADER not in text:
            return ""
        section = text.split(ROUTE_HEADER, 1)[1]
        return section.split("\n## ", 1)[0].strip()


class IKnowledgeWriter(ABC):
    """Rewrites the knowledge in a model's words (offline there is none: the digest stays)."""

    @abstractmethod
    def rewrite(self, old: str, digest: str, episode: str) -> str | None:
        """The knowledge rewritten from the `old` text (without its episode lines), the
        memories' `digest` and the `episode`'s line, without an `EPISODES_HEADER` section;
        None when no usable rewrite came (the digest is kept)."""
