"""StandInWhileDown: the LLM summarizer, with the offline heuristics standing in while the
model's circuit is open.

A single failed call keeps the old rule: nothing is stored and the cursor waits, so the model
summarizes those messages on its next call. But while the circuit breaker refuses calls (the
model failed repeatedly, for minutes), waiting would leave a whole stretch of play without
memories; then the rule-based stand-in summarizes instead, and every such call is counted
(`stand_in_calls`, in report.json under `llm_usage.circuit`).

It is LLM-first when its primary is (`llm_first`): a turn the rules would write themselves
reaches the stand-in with the rules' memory as its hint, and the stand-in answers that memory,
so while the circuit is open the rules write it as they do offline.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from cairn.errors import LLMCircuitOpenError, SummarizerError
from cairn.interfaces.summarizer import ISummarizer, SynthesisRequest
from cairn.models.game import GameState, Message, NPCInstance
from cairn.models.kinds import WorldEvent
from cairn.models.memory import SynthesisDecision

log = logging.getLogger(__name__)

T = TypeVar("T")


def _circuit_open(exc: BaseException) -> bool:
    """Whether `exc` was caused, at any depth, by a call the circuit refused."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, LLMCircuitOpenError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class StandInWhileDown(ISummarizer):
    """`primary` (the LLM summarizer); `stand_in` (the heuristics) while the circuit is open."""

    def __init__(self, primary: ISummarizer, stand_in: ISummarizer) -> None:
        self._primary = primary
        self._stand_in = stand_in
        self.stand_in_calls: Counter[str] = Counter()

    @property
    def llm_first(self) -> bool:
        return self._primary.llm_first

    def _call(self, kind: str, primary: Callable[[], T], stand_in: Callable[[], T]) -> T:
        try:
            return primary()
        except SummarizerError as exc:
            if not _circuit_open(exc):
                raise
            if not self.stand_in_calls:
                log.warning("LLM circuit open: the rule-based stand-in summarizes meanwhile")
            self.stand_in_calls[kind] += 1
            return stand_in()

    def synthesize(self, request: SynthesisRequest) -> SynthesisDecision:
        return self._call(
            "synthesis",
            lambda: self._primary.synthesize(request),
            lambda: self._stand_in.synthesize(request),
        )

    def summarize_location_session(
        self,
        game_state: GameState,
        location_id: int,
        messages: Sequence[Message],
        left_out: Sequence[int] = (),
    ) -> str:
        return self._call(
            "location",
            lambda: self._primary.summarize_location_session(
                game_state, location_id, messages, left_out
            ),
            lambda: self._stand_in.summarize_location_session(
                game_state, location_id, messages, left_out
            ),
        )

    def summarize_npc_interactions(
        self, game_state: GameState, npc: NPCInstance, messages: Sequence[Message]
    ) -> str:
        return self._call(
            "npc",
            lambda: self._primary.summarize_npc_interactions(game_state, npc, messages),
            lambda: self._stand_in.summarize_npc_interactions(game_state, npc, messages),
        )

    def summarize_world_update(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        messages: Sequence[Message],
        related: Mapping[str, str | list[str]],
    ) -> str:
        args = (game_state, event_kind, messages, related)
        return self._call(
            "world",
            lambda: self._primary.summarize_world_update(*args),
            lambda: self._stand_in.summarize_world_update(*args),
        )
