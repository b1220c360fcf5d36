"""The run's totals in report.json, from its episodes' figures (`EpisodeStats`)."""

from __future__ import annotations

import statistics
from typing import Any

from cairn.models.episode import EpisodeStats, ratio


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
        "coverage": ratio(len(visited_ids & remembered_ids), len(visited_ids)),
        "repeated_failed_action_rate": ratio(
            sum(e.repeated_failed_actions for e in episodes), actions
        ),
        "retried_failed_action_rate": ratio(
            sum(e.retried_failed_actions for e in episodes), actions
        ),
        "llm_calls": sum(e.llm_calls for e in episodes),
        "llm_failures": sum(e.llm_failures for e in episodes),
        "stand_in_turns": sum(e.stand_in_turns for e in episodes),
        "synthesis_calls": sum(e.synthesis_calls for e in episodes),
        "synthesis_call_rate": ratio(sum(e.synthesis_calls for e in episodes), turns),
        "summarizer_calls_by_kind": _sum_kinds(episodes),
        "summarizer_calls": sum(e.summarizer_calls for e in episodes),
        "summarizer_call_rate": ratio(sum(e.summarizer_calls for e in episodes), turns),
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
