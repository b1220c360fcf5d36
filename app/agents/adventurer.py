"""AdventurerAgent: the LLM player. Its context is the ContextService's adventurer prompt.

The answer is an `AgentDecision` through forced tool use (validated, one repair). The client
it is given is the container's, behind the reasoning door: `<thinking>`/`<think>` blocks come
out of the answer, and when the decision's reasoning was all in such blocks, what the model
thought (`LLMResponse.reasoning`) is its reasoning, for the turn history. With a toolbox, the
model may call the memory query tools first, in the same tool conversation as its decision
(`decide_with_research`), so the decision sees every answer. A failed call plays that turn
with the offline ExplorerAgent, marked as a stand-in turn (`AgentDecision.stand_in`) and
counted (the usage meter counts it too); whether a run goes on when the model stops answering
is the run's choice (`llm_fallback`). Each decision carries the size of the whole request
(`request_tokens`: system prompt, tools and messages).
"""

from __future__ import annotations

import logging

from cairn.agents.data_fence import as_data
from cairn.agents.memory_toolbox import MemoryToolbox, decide_with_research, research_tools
from cairn.agents.prompt_files import render
from cairn.agents.prompt_order import (
    GAME_SAID,
    GAME_TEXT_SECTIONS,
    fenced,
    sections_of,
)
from cairn.agents.structured import complete_structured
from cairn.errors import LLMBadResponseError, LLMError
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.interfaces.llm import ILLMClient, LLMMessage, LLMRequest
from cairn.interfaces.metrics import BAD_RESPONSE, FailureRecorder
from cairn.models.kinds import Role
from cairn.services.context.tokens import request_tokens

log = logging.getLogger(__name__)


__all__ = ["AdventurerAgent", "as_data", "turn_message"]


def turn_message(view: AgentView) -> str:
    """The user message of one turn (`adventurer_turn.md`): the prompt's sections in reading
    order, each fenced as data (`prompt_order.fenced`), then the objectives and the turn, the
    score and what the player carries. A prompt without the room's or the last turn's section
    (a library's own context) gets the game's text in a section of its own."""
    context = view.prompt.strip()
    found = sections_of(context) if context else []
    if found is None:  # free text: one section of memories
        context, found = f"## Memories\n{context}", [("Memories", context)]
    if not GAME_TEXT_SECTIONS & {title for title, _ in found}:
        said = f"## {GAME_SAID}\n{view.observation.text.strip() or '(nothing)'}"
        context = f"{said}\n\n{context}" if context else said
    obs = view.observation
    score = "unknown" if obs.score is None else str(obs.score)
    if obs.score is not None and obs.max_score:
        score += f" of {obs.max_score}"
    return render(
        "adventurer_turn",
        context=fenced(context),
        objectives="\n".join(f"- {o}" for o in view.objectives) or "- (none yet)",
        turn=view.turn,
        of_turns=f" of {view.max_turns}" if view.max_turns else "",
        score=score,
        inventory=", ".join(obs.inventory) or "nothing",
    )


class AdventurerAgent(IAgent):
    """Asks the `adventurer` model for the next command."""

    def __init__(
        self,
        client: ILLMClient,
        fallback: IAgent,
        toolbox: MemoryToolbox | None = None,
        max_tokens: int = 600,
        failures: FailureRecorder | None = None,
    ) -> None:
        self._client = client
        self._fallback = fallback
        self._toolbox = toolbox
        self._max_tokens = max_tokens
        self.failures = 0
        self._recorder = failures

    def new_episode(self, episode: int) -> None:
        self._fallback.new_episode(episode)

    def decide(self, view: AgentView) -> AgentDecision:
        system = render("adventurer_system")
        user = turn_message(view)
        request = LLMRequest(
            role=Role.ADVENTURER,
            system=system,
            messages=[LLMMessage(role="user", content=user)],
            max_tokens=self._max_tokens,
        )
        sent = request.model_copy(update={"tools": research_tools(self._toolbox, AgentDecision)})
        size = request_tokens(sent)
        try:
            if self._toolbox is not None:
                decision, response = decide_with_research(
                    self._client, request, AgentDecision, self._toolbox
                )
            else:
                decision, response = complete_structured(self._client, request, AgentDecision)
        except LLMError as exc:
            self.failures += 1
            kind = _failure_kind(exc)
            if self._recorder is not None:  # the failed calls were counted by the client
                self._recorder.record_fallback(kind)
            log.warning("adventurer call failed (%s); the offline explorer plays this turn", exc)
            stand_in = self._fallback.decide(view)
            return stand_in.model_copy(update={"stand_in": True, "request_tokens": size})
        return decision.model_copy(
            update={
                "reasoning": decision.reasoning or response.reasoning,
                "stand_in": False,  # the agent's to say, never the model's
                "request_tokens": size,
            }
        )


def _failure_kind(exc: LLMError) -> str:
    """A short name for the kind of failure ("bad_response", "timeout", "rate_limited")."""
    if isinstance(exc, LLMBadResponseError):  # malformed or unusable: one kind
        return BAD_RESPONSE
    name = type(exc).__name__.removeprefix("LLM").removesuffix("Error")
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_") or "error"
