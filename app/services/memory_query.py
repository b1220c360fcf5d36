"""Memory query tools over IMemoryReader: a query model when given, else lexical."""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from cairn.errors import CairnError
from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.memory import MemoryEntry

log = logging.getLogger(__name__)

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


@dataclass(frozen=True)
class RankedAnswer:
    """The query model's answer: the chosen memories, most useful first, and a one-line answer."""

    memories: list[MemoryEntry]
    answer: str


class IMemoryRetriever(ABC):
    """Port for the cheap model behind query_memories and get_location_memories.

    Implementations raise a CairnError (an LLMError for a failed or unusable answer);
    MemoryQueryTools then counts the failure and answers lexically.
    """

    @abstractmethod
    def rank(self, question: str, candidates: Sequence[MemoryEntry], limit: int) -> RankedAnswer:
        """At most `limit` of `candidates` that answer `question`, best first, and an answer."""

    @abstractmethod
    def summarize_location(self, label: str, memories: Sequence[MemoryEntry]) -> str:
        """A 2-3 sentence summary of what the memories of the location `label` say."""


def words(text: str) -> set[str]:
    """Content words of a text, lower-cased, stop words removed."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def lexical_rank(question: str, memories: Sequence[MemoryEntry], limit: int) -> list[MemoryEntry]:
    """Memories sharing the most content words with the question; importance breaks ties, then
    the order `memories` come in (the store's ranking: the latest in game time first)."""
    q = words(question)
    scored = [
        (-len(q & words(f"{m.title} {m.text}")), -m.importance, i) for i, m in enumerate(memories)
    ]
    scored = sorted(s for s in scored if s[0] < 0)
    return [memories[s[2]] for s in scored[:limit]]


def candidate_pool(question: str, memories: Sequence[MemoryEntry], limit: int) -> list[MemoryEntry]:
    """What the query model sees: lexical matches first, then the most important of the rest.

    `memories` come by importance, highest first, so a question sharing no word with the
    answer ("how do I get light?" for "brass lantern") still reaches the model.
    """
    chosen = lexical_rank(question, memories, limit)
    ids = {m.id for m in chosen}
    for m in memories:
        if len(chosen) >= limit:
            break
        if m.id not in ids:
            chosen.append(m)
            ids.add(m.id)
    return chosen


def format_line(n: int, m: MemoryEntry) -> str:
    """`n. [Location 79 | T12 | importance=500] Title: text`."""
    where = f"Location {m.location_id}" if m.location_id is not None else m.scope.value
    turn = f" | T{m.turn_start}" if m.turn_start is not None else ""
    return f"{n}. [{where}{turn} | importance={m.importance}] {m.title}: {m.text}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _named_in(entries: Sequence[MemoryEntry]) -> str:
    """The room name the memories carry, for a location the store has no record of."""
    return next((m.location_name for m in entries if m.location_name), "")


class MemoryQueryTools:
    """get_top_memories, query_memories, get_location_memories.

    With a retriever (the query model), query_memories returns the memories the model ranked
    plus its one-line answer, and get_location_memories a 2-3 sentence summary by the model
    followed by the memory titles. Without one, both answer lexically. A retriever failure
    (an LLM error, unknown ids, an empty answer) is logged, counted in `failures` and answered
    lexically: these tools never raise into the research loop.
    """

    def __init__(
        self,
        memory: IMemoryReader,
        retriever: IMemoryRetriever | None = None,
        *,
        candidate_limit: int = 30,
        max_results: int = 5,
        summary_limit: int = 40,
    ) -> None:
        self._memory = memory
        self._retriever = retriever
        self._candidate_limit = candidate_limit
        self._max_results = max_results
        self._summary_limit = summary_limit
        self.failures = 0

    def get_top_memories(self, limit: int = 10) -> str:
        """The most important memories, `limit` clamped to 1-20."""
        limit = max(1, min(int(limit), 20))
        top = self._memory.top_memories(limit)
        if not top:
            return "No memories recorded yet."
        lines = [format_line(i, m) for i, m in enumerate(top, 1)]
        return f"Top {len(top)} most important memories:\n" + "\n".join(lines)

    def query_memories(self, question: str) -> str:
        """Memories relevant to a question: ranked by the query model, else lexically."""
        if not question or not question.strip():
            return "Error: please provide a specific question."
        pool = self._memory.top_memories(10_000)
        if not pool:
            return "No memories to search yet."
        if self._retriever is not None:
            candidates = candidate_pool(question, pool, self._candidate_limit)
            try:
                ranked = self._retriever.rank(question, candidates, self._max_results)
            except CairnError as exc:
                self._failed("query_memories", str(exc))
            else:
                answer = self._ranked_answer(ranked, candidates)
                if answer is not None:
                    return answer
                self._failed("query_memories", "it chose none of the memories offered")
        return self._lexical_query(question, pool)

    def get_location_memories(self, location: str | int) -> str:
        """Memories of a location given by integer id or by name (every room of that name)."""
        key = str(location).strip()
        if not key:
            return "Error: please provide a location id or name."
        by_id = key.lstrip("-").isdigit()
        ids = [int(key)] if by_id else self._ids_named(key)
        if not ids:
            return f"No location named {key!r} is known."
        found = {loc_id: self._memory.location_memories(loc_id) for loc_id in ids}
        names = {loc_id: self._name(loc_id) for loc_id in ids}
        if self._retriever is not None and any(found.values()):
            shown = {i: names[i] or _named_in(found[i]) for i in ids}
            label = self._label(key, by_id, ids, shown)
            try:
                summary = _one_line(
                    self._retriever.summarize_location(label, self._for_summary(found))
                )
            except CairnError as exc:
                self._failed("get_location_memories", str(exc))
            else:
                if summary:
                    return self._summarized(label, summary, found, shown)
                self._failed("get_location_memories", "the summary came back empty")
        blocks = []
        for loc_id in ids:
            lines = [format_line(i, m) for i, m in enumerate(found[loc_id], 1)]
            body = "\n".join(lines or ["(no memories)"])
            blocks.append(f"Location {loc_id} ({names[loc_id]}):\n{body}")
        return "\n\n".join(blocks)

    def _lexical_query(self, question: str, pool: Sequence[MemoryEntry]) -> str:
        candidates = lexical_rank(question, pool, self._candidate_limit)
        if not candidates:
            return f"No memories match {question.strip()!r}."
        lines = [format_line(i, m) for i, m in enumerate(candidates[:5], 1)]
        return "Relevant memories (lexical match):\n" + "\n".join(lines)

    def _ranked_answer(self, ranked: RankedAnswer, candidates: Sequence[MemoryEntry]) -> str | None:
        """The ranked memories and the answer; None when none of them was offered."""
        offered = {m.id for m in candidates}
        chosen: list[MemoryEntry] = []
        for m in ranked.memories:
            if m.id in offered:
                offered.discard(m.id)
                chosen.append(m)
        if not chosen:
            return None
        lines = [format_line(i, m) for i, m in enumerate(chosen[: self._max_results], 1)]
        answer = _one_line(ranked.answer)
        head = f"Answer: {answer}\n" if answer else ""
        return head + "Relevant memories (ranked by the query model):\n" + "\n".join(lines)

    def _for_summary(self, found: dict[int, list[MemoryEntry]]) -> list[MemoryEntry]:
        """Every memory found, oldest first per room; beyond `summary_limit`, the most important."""
        every = [m for entries in found.values() for m in entries]
        if len(every) <= self._summary_limit:
            return every
        keep = sorted(every, key=lambda m: m.importance, reverse=True)[: self._summary_limit]
        kept = {m.id for m in keep}
        return [m for m in every if m.id in kept]

    @staticmethod
    def _label(key: str, by_id: bool, ids: list[int], names: dict[int, str]) -> str:
        if by_id:
            return f"Location {ids[0]} ({names[ids[0]] or 'unnamed'})"
        return f"{key!r}, which matched location id(s) " + ", ".join(str(i) for i in ids)

    @staticmethod
    def _summarized(
        label: str, summary: str, found: dict[int, list[MemoryEntry]], names: dict[int, str]
    ) -> str:
        lines = [f"{label}.", f"Summary: {summary}", "Memories:"]
        for loc_id, entries in found.items():
            lines.append(f"Location {loc_id} ({names[loc_id]}):")
            lines.extend(f"- [{m.category.value}] {m.title}" for m in entries)
            if not entries:
                lines.append("- (no memories)")
        return "\n".join(lines)

    def _failed(self, tool: str, problem: str) -> None:
        self.failures += 1
        log.warning("%s: the query model failed (%s); answering lexically", tool, problem)

    def _name(self, loc_id: int) -> str:
        record = self._memory.location_record(loc_id)
        return record.name if record else ""

    def _ids_named(self, name: str) -> list[int]:
        wanted = name.lower()
        seen: dict[int, None] = {}
        for m in self._memory.top_memories(10_000):
            if m.location_id is not None and (m.location_name or "").lower() == wanted:
                seen.setdefault(m.location_id, None)
        return sorted(seen)
