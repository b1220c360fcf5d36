"""Scripted fakes of cairn's own ports: a summarizer that records calls and fails on demand."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cairn.errors import SummarizerError
from cairn.interfaces.summarizer import ISummarizer, SynthesisRequest
from cairn.models.game import GameState, Message, NPCInstance
from cairn.models.kinds import WorldEvent
from cairn.models.memory import SynthesisDecision


class FakeSummarizer(ISummarizer):
    """Answers from scripts, records every call, and fails on demand.

    `decisions` are returned in order by `synthesize` (then "don't remember");
    summaries echo the message indices they were given, so tests can see exactly what was
    summarized. Set `fail = True` (or `fail_scopes`) to raise SummarizerError.
    """

    def __init__(self, decisions: Sequence[SynthesisDecision] = ()) -> None:
        self.decisions = list(decisions)
        self.requests: list[SynthesisRequest] = []
        self.calls: list[tuple[str, str, list[int]]] = []
        self.left_out: list[list[int]] = []
        """The turns each visit summary was told it leaves out, in the order asked."""
        self.fail = False
        self.fail_scopes: set[str] = set()

    def _check(self, scope: str) -> None:
        if self.fail or scope in self.fail_scopes:
            raise SummarizerError(f"scripted {scope} failure")

    def synthesize(self, request: SynthesisRequest) -> SynthesisDecision:
        self.requests.append(request)
        self._check("synthesis")
        if self.decisions:
            return self.decisions.pop(0)
        return SynthesisDecision(should_remember=False)

    def summarize_location_session(
        self,
        game_state: GameState,
        location_id: int,
        messages: Sequence[Message],
        left_out: Sequence[int] = (),
    ) -> str:
        self._check("location")
        self.left_out.append(list(left_out))
        idx = [m.index for m in messages]
        self.calls.append(("location", str(location_id), idx))
        return f"location {location_id} messages {idx}"

    def summarize_npc_interactions(
        self, game_state: GameState, npc: NPCInstance, messages: Sequence[Message]
    ) -> str:
        self._check("npc")
        idx = [m.index for m in messages]
        self.calls.append(("npc", npc.instance_id, idx))
        return f"npc {npc.instance_id} messages {idx}"

    def summarize_world_update(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        messages: Sequence[Message],
        related: Mapping[str, str | list[str]],
    ) -> str:
        self._check("world")
        idx = [m.index for m in messages]
        self.calls.append(("world", event_kind, idx))
        return f"world {event_kind} messages {idx}"
