"""Seed-003 memory query tools as plain functions over IMemoryService (lexical offline)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from app.interfaces.memory_service import IMemoryService
from app.models.memory import MemoryEntry

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "i",
        "you",
        "we",
        "it",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "and",
        "or",
        "do",
        "did",
        "does",
        "where",
        "what",
        "which",
        "who",
        "how",
        "why",
        "my",
        "me",
        "there",
        "this",
        "that",
        "have",
        "has",
        "had",
        "be",
    ]
)

Ranker = Callable[[str, Sequence[MemoryEntry]], str]
"""Answers a question from preselected memories (an LLM in the agent layer)."""


def words(text: str) -> set[str]:
    """Content words of a text, lower-cased, stop words removed."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def lexical_rank(question: str, memories: Sequence[MemoryEntry], limit: int) -> list[MemoryEntry]:
    """Memories sharing the most content words with the question; importance breaks ties."""
    q = words(question)
    scored = [
        (len(q & words(f"{m.title} {m.text}")), m.importance, i, m) for i, m in enumerate(memories)
    ]
    scored = [s for s in scored if s[0] > 0]
    scored.sort(key=lambda s: (s[0], s[1], s[2]), reverse=True)
    return [s[3] for s in scored[:limit]]


def format_line(n: int, m: MemoryEntry) -> str:
    """`n. [Location 79 | T12 | importance=500] Title: text`."""
    where = f"Location {m.location_id}" if m.location_id is not None else m.scope.value
    turn = f" | T{m.turn_start}" if m.turn_start is not None else ""
    return f"{n}. [{where}{turn} | importance={m.importance}] {m.title}: {m.text}"


class MemoryQueryTools:
    """get_top_memories, query_memories, get_location_memories (seed 003)."""

    def __init__(
        self, memory: IMemoryService, ranker: Ranker | None = None, candidate_limit: int = 30
    ) -> None:
        self._memory = memory
        self._ranker = ranker
        self._candidate_limit = candidate_limit

    def get_top_memories(self, limit: int = 10) -> str:
        """The most important memories, `limit` clamped to 1-20."""
        limit = max(1, min(int(limit), 20))
        top = self._memory.top_memories(limit)
        if not top:
            return "No memories recorded yet."
        lines = [format_line(i, m) for i, m in enumerate(top, 1)]
        return f"Top {len(top)} most important memories:\n" + "\n".join(lines)

    def query_memories(self, question: str) -> str:
        """Memories relevant to a question: lexical preselection, then the ranker if any."""
        if not question or not question.strip():
            return "Error: please provide a specific question."
        pool = self._memory.top_memories(10_000)
        if not pool:
            return "No memories to search yet."
        candidates = lexical_rank(question, pool, self._candidate_limit)
        if not candidates:
            return f"No memories match {question.strip()!r}."
        if self._ranker is not None:
            return self._ranker(question, candidates)
        lines = [format_line(i, m) for i, m in enumerate(candidates[:5], 1)]
        return "Relevant memories (lexical match):\n" + "\n".join(lines)

    def get_location_memories(self, location: str | int) -> str:
        """Memories of a location given by integer id or by name (every room of that name)."""
        key = str(location).strip()
        if not key:
            return "Error: please provide a location id or name."
        ids = [int(key)] if key.lstrip("-").isdigit() else self._ids_named(key)
        if not ids:
            return f"No location named {key!r} is known."
        blocks = []
        for loc_id in ids:
            record = self._memory.location_record(loc_id)
            name = record.name if record else ""
            found = self._memory.location_memories(loc_id)
            lines = [format_line(i, m) for i, m in enumerate(found, 1)] or ["(no memories)"]
            blocks.append(f"Location {loc_id} ({name}):\n" + "\n".join(lines))
        return "\n\n".join(blocks)

    def _ids_named(self, name: str) -> list[int]:
        wanted = name.lower()
        seen: dict[int, None] = {}
        for m in self._memory.top_memories(10_000):
            if m.location_id is not None and (m.location_name or "").lower() == wanted:
                seen.setdefault(m.location_id, None)
        return sorted(seen)
