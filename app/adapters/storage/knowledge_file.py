"""knowledgebase.md: strategic knowledge rebuilt from memories and episode results.

Offline this is a HEURISTIC digest, not a model's synthesis: the dangers, scoring procedures and
failures the memories hold, ranked by importance, plus one line per episode played. With a
writer (`IKnowledgeWriter`: the `summary` model, `cairn.agents.knowledge_writer`), the
knowledge is rewritten from the old file, that digest and the episode's result; a failed or
empty answer falls back to the digest. Either way the `## Episodes` lines are cairn's own,
appended after the text. The file is read whole by the objective step and rewritten atomically
at every episode end.
"""

from __future__ import annotations

from pathlib import Path

from cairn.adapters.files import atomic_write_text
from cairn.interfaces.knowledge import EPISODES_HEADER, IKnowledgeBase, IKnowledgeWriter
from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.episode import EpisodeStats
from cairn.models.memory import MemoryCategory, MemoryEntry


class KnowledgeBase(IKnowledgeBase):
    """The strategic knowledge file of a workdir."""

    def __init__(
        self, path: Path, max_items: int = 12, writer: IKnowledgeWriter | None = None
    ) -> None:
        self.path = path
        self._max_items = max_items
        self._writer = writer

    def read(self) -> str:
        """The whole file, or a clear placeholder when there is none yet."""
        if not self.path.exists():
            return "No strategic knowledge available."
        return self.path.read_text(encoding="utf-8")

    def update(self, memory: IMemoryReader, episode: EpisodeStats, game: str) -> None:
        """Rewrite the file from the memories and append this episode's line."""
        top = memory.top_memories(limit=200)
        lines = [f"# Knowledge base: {game}", ""]
        for title, category in (
            ("## Dangers", MemoryCategory.DANGER),
            ("## Scoring and procedures", MemoryCategory.SUCCESS),
            ("## Known failures", MemoryCategory.FAILURE),
        ):
            picked = [m for m in top if m.category is category][: self._max_items]
            lines += [title, *(_line(m) for m in picked), ""] if picked else []
        body = digest = "\n".join(lines).strip()
        if self._writer is not None:  # from the old text without its episode lines
            old = self.read().split(EPISODES_HEADER, 1)[0].strip()
            body = self._writer.rewrite(old, digest, _episode_line(episode)) or digest
        episodes = [*self._episode_lines(), _episode_line(episode)]
        atomic_write_text(self.path, "\n".join([body, "", EPISODES_HEADER, *episodes, ""]))

    def _episode_lines(self) -> list[str]:
        if not self.path.exists():
            return []
        text = self.path.read_text(encoding="utf-8")
        if EPISODES_HEADER not in text:
            return []
        section = text.split(EPISODES_HEADER, 1)[1]
        return [line for line in section.splitlines() if line.startswith("- Episode ")]


def _line(memory: MemoryEntry) -> str:
    where = f"Location {memory.location_id}" if memory.location_id is not None else "World"
    name = f" ({memory.location_name})" if memory.location_name else ""
    return f"- {where}{name}: {memory.title}. {memory.text}".strip()


def _episode_line(e: EpisodeStats) -> str:
    score = "unknown" if e.score is None else str(e.score)
    end = "won" if e.won else "died" if e.died else "turn limit"
    return f"- Episode {e.episode}: {e.turns} turns, score {score}, {end}."
