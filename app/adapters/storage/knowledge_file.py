"""knowledgebase.md: strategic knowledge rebuilt from memories and episode results.

Offline this is a HEURISTIC digest, not a model's synthesis: the dangers, scoring procedures and
failures the memories hold, ranked by importance, plus one line per episode played. With an LLM
client, the `summary` model rewrites the knowledge from the old file, that digest and the
episode's result; a failed or empty answer falls back to the digest (and is counted). Either
way the `## Episodes` lines are cairn's own, appended after the text. The file is read whole by
the objective step and rewritten atomically at every episode end.
"""

from __future__ import annotations

import logging
from pathlib import Path

from cairn.adapters.files import atomic_write_text
from cairn.agents.prompt_files import render
from cairn.errors import LLMError
from cairn.interfaces.knowledge import IKnowledgeBase
from cairn.interfaces.llm import ILLMClient, LLMMessage, LLMRequest
from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.memory import MemoryCategory, MemoryEntry
from cairn.play.metrics import EpisodeStats

_EPISODES_HEADER = "## Episodes"
log = logging.getLogger(__name__)


class KnowledgeBase(IKnowledgeBase):
    """The strategic knowledge file of a workdir."""

    def __init__(self, path: Path, max_items: int = 12, client: ILLMClient | None = None) -> None:
        self.path = path
        self._max_items = max_items
        self._client = client
        self.failures = 0

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
        digest = "\n".join(lines).strip()
        body = self._rewrite(digest, episode) if self._client is not None else digest
        episodes = [*self._episode_lines(), _episode_line(episode)]
        atomic_write_text(self.path, "\n".join([body, "", _EPISODES_HEADER, *episodes, ""]))

    def _rewrite(self, digest: str, episode: EpisodeStats) -> str:
        """The model's rewrite of the knowledge (without an Episodes section), or the digest."""
        assert self._client is not None
        old = self.read().split(_EPISODES_HEADER, 1)[0].strip()
        prompt = render("knowledge_update", old=old, digest=digest, episode=_episode_line(episode))
        try:
            answer = self._client.complete(
                LLMRequest(
                    role="summary",
                    system="You maintain a text-adventure agent's strategic knowledge base.",
                    messages=[LLMMessage(role="user", content=prompt)],
                    max_tokens=1200,
                )
            )
        except LLMError as exc:
            self.failures += 1
            log.warning("knowledge base rewrite failed (%s); keeping the digest", exc)
            return digest
        text = answer.text.split(_EPISODES_HEADER, 1)[0].strip()
        if not text:
            self.failures += 1
            log.warning("knowledge base rewrite was empty; keeping the digest")
            return digest
        return text

    def _episode_lines(self) -> list[str]:
        if not self.path.exists():
            return []
        text = self.path.read_text(encoding="utf-8")
        if _EPISODES_HEADER not in text:
            return []
        section = text.split(_EPISODES_HEADER, 1)[1]
        return [line for line in section.splitlines() if line.startswith("- Episode ")]


def _line(memory: MemoryEntry) -> str:
    where = f"Location {memory.location_id}" if memory.location_id is not None else "World"
    name = f" ({memory.location_name})" if memory.location_name else ""
    return f"- {where}{name}: {memory.title}. {memory.text}".strip()


def _episode_line(e: EpisodeStats) -> str:
    score = "unknown" if e.score is None else str(e.score)
    end = "won" if e.won else "died" if e.died else "turn limit"
    return f"- Episode {e.episode}: {e.turns} turns, score {score}, {end}."
