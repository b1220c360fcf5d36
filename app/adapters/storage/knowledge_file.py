"""knowledgebase.md: strategic knowledge rebuilt from memories and episode results.

Offline this is a HEURISTIC digest, not a model's synthesis: the dangers, scoring procedures and
failures the memories hold, ranked by importance, plus one line per episode played. Before the
episode lines cairn writes its own route section (`ROUTE_HEADER`): the scoring moves the
memories hold, in the order first made, with their places (the adventurer's prompt shows it). With a
writer (`IKnowledgeWriter`: the `summary` model, `cairn.agents.knowledge_writer`), the
knowledge is rewritten from the old file, that digest and the episode's result; a failed or
empty answer falls back to the digest. Either way the `## Episodes` lines are cairn's own,
appended after the text. The file is read whole by the objective step and rewritten atomically
at every episode end.
"""

from __future__ import annotations

from pathlib import Path

from cairn.adapters.files import atomic_write_text
from cairn.interfaces.knowledge import (
    EPISODES_HEADER,
    ROUTE_HEADER,
    IKnowledgeBase,
    IKnowledgeWriter,
)
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
        if self._writer is not None:  # from the old text without cairn's own sections
            old = _own_text(self.read())
            body = _own_text(self._writer.rewrite(old, digest, _episode_line(episode)) or digest)
        route = _route(top)
        own = [ROUTE_HEADER, *route, ""] if route else []
        episodes = [*self._episode_lines(), _episode_line(episode)]
        atomic_write_text(self.path, "\n".join([body, "", *own, EPISODES_HEADER, *episodes, ""]))

    def _episode_lines(self) -> list[str]:
        if not self.path.exists():
            return []
        text = self.path.read_text(encoding="utf-8")
        if EPISODES_HEADER not in text:
            return []
        section = text.split(EPISODES_HEADER, 1)[1]
        return [line for line in section.splitlines() if line.startswith("- Episode ")]


def _own_text(text: str) -> str:
    """`text` without the sections cairn writes itself (the route, the episode lines)."""
    return text.split(EPISODES_HEADER, 1)[0].split(ROUTE_HEADER, 1)[0].strip()


def _route(memories: list[MemoryEntry]) -> list[str]:
    """One numbered line per scoring move the memories hold (a room's memory of a turn that
    gained points, whatever a model called it short of a danger or a failure), in the order
    first made (episode, then turn): where, what (its title) and the points; each place and
    title once."""
    scoring = sorted(
        (
            m
            for m in memories
            if m.category not in (MemoryCategory.DANGER, MemoryCategory.FAILURE)
            and (m.score_delta or 0) > 0
            and m.location_id is not None
        ),
        key=lambda m: (m.episode or 0, m.turn_end or m.turn_start or 0),
    )
    lines: list[str] = []
    seen: set[tuple[int | None, str]] = set()
    for m in scoring:
        key = (m.location_id, " ".join(m.title.lower().split()))
        if key in seen:
            continue
        seen.add(key)
        name = f" ({m.location_name})" if m.location_name else ""
        title = " ".join(m.title.split())
        where = f"Location {m.location_id}{name}"
        lines.append(f"{len(lines) + 1}. {where}: {title} (+{m.score_delta})")
    return lines


def _line(memory: MemoryEntry) -> str:
    where = f"Location {memory.location_id}" if memory.location_id is not None else "World"
    name = f" ({memory.location_name})" if memory.location_name else ""
    return f"- {where}{name}: {memory.title}. {memory.text}".strip()


def _episode_line(e: EpisodeStats) -> str:
    score = "unknown" if e.score is None else str(e.score)
    end = "won" if e.won else "died" if e.died else "turn limit"
    return f"- Episode {e.episode}: {e.turns} turns, score {score}, {end}."
