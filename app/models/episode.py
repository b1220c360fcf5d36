"""EpisodeStats: what one episode of play did, the figures report.json and the knowledge base
are made of."""

from __future__ import annotations

import statistics

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
    stand_in_turns: int = 0
    """Turns the offline stand-in played because the model could not (an LLM run's failed
    calls, or every turn while its circuit was open); 0 offline, where the offline player is
    the player."""
    context_tokens: list[int] = Field(default_factory=list, exclude=True)

    def finish(self) -> EpisodeStats:
        """Fill the derived figures from the counters."""
        self.coverage = ratio(self.locations_with_memory, self.locations_visited)
        self.repeated_failed_action_rate = ratio(self.repeated_failed_actions, self.actions)
        self.retried_failed_action_rate = ratio(self.retried_failed_actions, self.actions)
        self.synthesis_call_rate = ratio(self.synthesis_calls, self.turns)
        self.summarizer_calls = sum(self.summarizer_calls_by_kind.values())
        self.summarizer_call_rate = ratio(self.summarizer_calls, self.turns)
        if self.context_tokens:
            self.context_tokens_p50 = int(statistics.median(self.context_tokens))
            self.context_tokens_max = max(self.context_tokens)
        return self


def ratio(part: int, whole: int) -> float:
    """`part / whole` to four places; 0.0 when there is no whole."""
    return round(part / whole, 4) if whole else 0.0
