"""LLMMemoryRetriever: the cheap `query` model ranks memories and sums up a location."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from cairn.agents.data_fence import MEMORIES, as_data, with_data_rule
from cairn.agents.prompt_files import render
from cairn.agents.structured import complete_structured
from cairn.errors import LLMUnusableAnswerError
from cairn.interfaces.llm import ILLMClient, LLMMessage, LLMRequest
from cairn.models.memory import MemoryEntry
from cairn.services.memory_query import IMemoryRetriever, RankedAnswer

log = logging.getLogger(__name__)

_SHORT_ID = re.compile(r"#?m?\s*(\d+)", re.IGNORECASE)


class MemoryRanking(BaseModel):
    """Record the memories that answer the question, most useful first, and a one-line answer."""

    model_config = ConfigDict(extra="ignore")

    ids: list[str] = Field(
        description="Short ids from the list (like 'M3'), most useful first; [] when none helps."
    )
    answer: str = Field(description="One line answering the question from those memories.")


def short_id(n: int) -> str:
    """The id a candidate is shown with: M1, M2, ..."""
    return f"M{n}"


def memory_line(tag: str, m: MemoryEntry) -> str:
    """`M3 [Location 10 Forest Path | T12 | DANGER | importance=900] Title: text`."""
    if m.location_id is not None:
        where = f"Location {m.location_id}" + (f" {m.location_name}" if m.location_name else "")
    else:
        where = m.scope.value
    turn = f" | T{m.turn_start}" if m.turn_start is not None else ""
    return (
        f"{tag} [{where}{turn} | {m.category.value} | importance={m.importance}] "
        f"{m.title}: {m.text}".rstrip()
    )


class LLMMemoryRetriever(IMemoryRetriever):
    """Asks the model of `role` (the cheap `query` model by default).

    `rank` sends the candidates with short ids and asks, through one forced tool
    (`MemoryRanking`, validated with one repair attempt), for the ids in order plus a one-line
    answer. Unknown ids are logged and ignored; an answer with no known id raises
    LLMUnusableAnswerError. `summarize_location` asks for 2-3 plain sentences; an empty answer
    raises LLMUnusableAnswerError. Every LLMError reaches MemoryQueryTools, which falls back.
    """

    def __init__(
        self,
        client: ILLMClient,
        *,
        role: str = "query",
        rank_max_tokens: int = 300,
        summary_max_tokens: int = 250,
    ) -> None:
        self._client = client
        self._role = role
        self._rank_max_tokens = rank_max_tokens
        self._summary_max_tokens = summary_max_tokens

    def rank(self, question: str, candidates: Sequence[MemoryEntry], limit: int) -> RankedAnswer:
        by_tag = {short_id(i): m for i, m in enumerate(candidates, 1)}
        prompt = render(
            "memory_query_turn",
            question=question.strip(),
            memories=as_data("\n".join(memory_line(tag, m) for tag, m in by_tag.items()), MEMORIES),
            limit=limit,
        )
        request = LLMRequest(
            role=self._role,
            system=with_data_rule(render("memory_query", limit=limit)),
            messages=[LLMMessage(role="user", content=prompt)],
            max_tokens=self._rank_max_tokens,
        )
        ranking, _ = complete_structured(self._client, request, MemoryRanking)
        by_id = {m.id: m for m in candidates}
        chosen: list[MemoryEntry] = []
        unknown: list[str] = []
        for raw in ranking.ids:
            m = by_tag.get(_normalized(raw)) or by_id.get(raw.strip())
            if m is None:
                unknown.append(raw)
            elif m not in chosen:
                chosen.append(m)
        if unknown:
            log.warning("query model named unknown memory ids %s; ignored", unknown)
        if not chosen:
            raise LLMUnusableAnswerError(
                f"MemoryRanking (role {self._role!r}): no known memory id in {ranking.ids!r}"
            )
        return RankedAnswer(memories=chosen[:limit], answer=ranking.answer.strip())

    def summarize_location(self, label: str, memories: Sequence[MemoryEntry]) -> str:
        lines = [memory_line("-", m) for m in memories]
        request = LLMRequest(
            role=self._role,
            system=with_data_rule(render("memory_location")),
            messages=[
                LLMMessage(
                    role="user",
                    content=render(
                        "memory_location_turn",
                        location=label,
                        memories=as_data("\n".join(lines), MEMORIES),
                    ),
                )
            ],
            max_tokens=self._summary_max_tokens,
        )
        text = self._client.complete(request).text.strip()
        if not text:
            self._client.report_unusable(request)
            raise LLMUnusableAnswerError(f"location summary (role {self._role!r}): empty answer")
        return text


def _normalized(raw: str) -> str:
    """'m3', '#3', ' M3 ', '3' -> 'M3'; anything else unchanged (and then unknown)."""
    match = _SHORT_ID.fullmatch(raw.strip())
    return short_id(int(match.group(1))) if match else raw.strip()


def build_memory_retriever(client: ILLMClient | None) -> IMemoryRetriever | None:
    """The LLM retriever when a client is configured; None offline (lexical answers)."""
    return None if client is None else LLMMemoryRetriever(client)
