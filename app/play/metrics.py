"""Per-episode figures of a play run and the report.json they make."""

from __future__ import annotations

import statistics
from typing import Any

from pydantic import BaseModel, Field


class EpisodeStats(BaseModel):
    """What one episode did. `score`/`max_score` are None when the game cannot tell them."""

    episode: int
    turns: int = 0
    score: int | None = None
    max_score: int | None = None
    best_score: int | None = None
    """The highest score the episode reached: a death can take `score` (the final one) below
    it."""
    won: bool = False
    died: bool = False
    locations_visited: int = 0
    locations_with_memory: int = 0
    coverage: float = 0.0
    actions: int = 0
    repeated_failed_actions: int = 0
    """Actions at a (location, action) pair that had failed before, in this or an earlier
    episode, and that failed again: turns wasted on a known failure."""
    repeated_failed_action_rate: float = 0.0
    retried_failed_actions: int = 0
    """Every action at a pair that had failed before, including retries that now succeed
    (`open door` once the door is unlocked)."""
    retried_failed_action_rate: float = 0.0
    llm_calls: int = 0
    synthesis_calls: int = 0
    synthesis_call_rate: float = 0.0
    summarizer_calls_by_kind: dict[str, int] = Field(default_factory=dict)
    """Summarizer calls by kind: synthesis, location (visit summaries), npc, world."""
    summarizer_calls: int = 0
    summarizer_call_rate: float = 0.0
    """Summarizer calls of every kind per turn: what an LLM summarizer would be paid for."""
    unknown_location_turns: int = 0
    """Turns where the game could not say where the player was (the last known room stood
    in for it)."""
    context_tokens_p50: int = 0
    context_tokens_max: int = 0
    location_memory_tokens_max: int = 0
    turns_to_first_score: int | None = None
    objectives_discovered: int = 0
    objectives_completed: int = 0
    llm_failures: int = 0
    context_tokens: list[int] = Field(default_factory=list, exclude=True)

    def finish(self) -> EpisodeStats:
        """Fill the derived figures from the counters."""
        self.coverage = _ratio(self.locations_with_memory, self.locations_visited)
        self.repeated_failed_action_rate = _ratio(self.repeated_failed_actions, self.actions)
        self.retried_failed_action_rate = _ratio(self.retried_failed_actions, self.actions)
        self.synthesis_call_rate = _ratio(self.synthesis_calls, self.turns)
        self.summarizer_calls = sum(self.summarizer_calls_by_kind.values())
        self.summarizer_call_rate = _ratio(self.summarizer_calls, self.turns)
        if self.context_tokens:
            self.context_tokens_p50 = int(statistics.median(self.context_tokens))
            self.context_tokens_max = max(self.context_tokens)
        return self


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def totals(
    episodes: list[EpisodeStats], visited_ids: set[int], remembered_ids: set[int]
) -> dict[str, Any]:
    """The run's totals (coverage over every location visited in the run)."""
    turns = sum(e.turns for e in episodes)
    actions = sum(e.actions for e in episodes)
    tokens = [t for e in episodes for t in e.context_tokens]
    scores = [s for e in episodes for s in (e.best_score, e.score) if s is not None]
    first = [e.turns_to_first_score for e in episodes if e.turns_to_first_score is not None]
    return {
        "episodes": len(episodes),
        "turns": turns,
        "best_score": max(scores) if scores else None,
        "max_score": episodes[-1].max_score if episodes else None,
        "won": sum(e.won for e in episodes),
        "died": sum(e.died for e in episodes),
        "locations_visited": len(visited_ids),
        "locations_with_memory": len(visited_ids & remembered_ids),
        "coverage": _ratio(len(visited_ids & remembered_ids), len(visited_ids)),
        "repeated_failed_action_rate": _ratio(
            sum(e.repeated_failed_actions for e in episodes), actions
        ),
        "retried_failed_action_rate": _ratio(
            sum(e.retried_failed_actions for e in episodes), actions
        ),
        "llm_calls": sum(e.llm_calls for e in episodes),
        "llm_failures": sum(e.llm_failures for e in episodes),
        "synthesis_calls": sum(e.synthesis_calls for e in episodes),
        "synthesis_call_rate": _ratio(sum(e.synthesis_calls for e in episodes), turns),
        "summarizer_calls_by_kind": _sum_kinds(episodes),
        "summarizer_calls": sum(e.summarizer_calls for e in episodes),
        "summarizer_call_rate": _ratio(sum(e.summarizer_calls for e in episodes), turns),
        "unknown_location_turns": sum(e.unknown_location_turns for e in episodes),
        "context_tokens_p50": int(statistics.median(tokens)) if tokens else 0,
        "context_tokens_max": max(tokens) if tokens else 0,
        "location_memory_tokens_max": max(
            (e.location_memory_tokens_max for e in episodes), default=0
        ),
        "turns_to_first_score": min(first) if first else None,
    }


def _sum_kinds(episodes: list[EpisodeStats]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for e in episodes:
        for kind, count in e.summarizer_calls_by_kind.items():
            kinds[kind] = kinds.get(kind, 0) + count
    return dict(sorted(kinds.items()))
