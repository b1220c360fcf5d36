"""SummarizerAgent: the LLM-backed ISummarizer (synthesis JSON, three scoped summaries)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from cairn.agents.data_fence import GAME_TEXT, MEMORIES, as_data, fenced, with_data_rule
from cairn.agents.prompt_files import render
from cairn.agents.structured import complete_structured
from cairn.errors import LLMError, SummarizerError
from cairn.interfaces.llm import ILLMClient, LLMMessage, LLMRequest
from cairn.interfaces.summarizer import ISummarizer, RulesVerdict, SynthesisRequest
from cairn.models.game import GameState, Message, NPCInstance, TurnOutcome
from cairn.models.kinds import WorldEvent
from cairn.models.memory import SynthesisDecision
from cairn.services.memory_rules import (
    ACT_NAME,
    OBJECTIVE_NAME,
    QUEST_NAME,
    location_name,
    story_line,
)

log = logging.getLogger(__name__)


class SummarizerAgent(ISummarizer):
    """Asks an ILLMClient; every prompt comes from a file in app/agents/prompts/.

    Synthesis: one structured call (validated, one repair attempt inside
    `complete_structured`); an LLM failure raises SummarizerError so the memory service
    logs it, counts it and keeps what is stored. It is LLM-first (`llm_first`): every
    triggered turn comes here, failures and known moves included, with the rules' verdict shown
    as a hint. Summaries: up to `attempts` calls; an empty answer is returned as '' (the caller
    skips with a warning).
    """

    def __init__(self, client: ILLMClient, attempts: int = 2, max_tokens: int = 400) -> None:
        self._client = client
        self._attempts = max(1, attempts)
        self._max_tokens = max_tokens

    @property
    def llm_first(self) -> bool:
        return True

    def synthesize(self, request: SynthesisRequest) -> SynthesisDecision:
        llm_request = LLMRequest(
            role="synthesis",
            system=with_data_rule(render("synthesis")),
            messages=[LLMMessage(role="user", content=synthesis_prompt(request))],
            max_tokens=self._max_tokens,
        )
        try:
            decision, _ = complete_structured(self._client, llm_request, SynthesisDecision)
        except LLMError as exc:
            raise SummarizerError(f"synthesis failed: {exc}") from exc
        return decision

    def summarize_location_session(
        self,
        game_state: GameState,
        location_id: int,
        messages: Sequence[Message],
        left_out: Sequence[int] = (),
    ) -> str:
        location = game_state.locations.get(location_id)
        name = location.name if location and location.name else f"location {location_id}"
        system = render("location_summary", location_name=name)
        return self._summary("location", system, messages, left_out_line(left_out))

    def summarize_npc_interactions(
        self, game_state: GameState, npc: NPCInstance, messages: Sequence[Message]
    ) -> str:
        return self._summary("npc", render("npc_summary", npc_name=npc.name), messages)

    def summarize_world_update(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        messages: Sequence[Message],
        related: Mapping[str, str | list[str]],
    ) -> str:
        system = render(
            "world_summary",
            event_kind=event_kind,
            related=related_text(game_state, event_kind, related),
        )
        return self._summary("world", system, messages)

    def _summary(
        self, scope: str, system: str, messages: Sequence[Message], note: str = ""
    ) -> str:
        content = fenced(transcript(messages), GAME_TEXT)
        request = LLMRequest(
            role="summary",
            system=with_data_rule(system),
            messages=[LLMMessage(role="user", content=f"{note}\n\n{content}" if note else content)],
            max_tokens=self._max_tokens,
        )
        return retry_summary(scope, self._attempts, lambda: self._client.complete(request).text)


def retry_summary(scope: str, attempts: int, call: Callable[[], str]) -> str:
    """Up to `attempts` calls; '' on an empty answer; SummarizerError when every call failed."""
    last: LLMError | None = None
    for attempt in range(1, attempts + 1):
        try:
            text = call().strip()
        except LLMError as exc:
            last = exc
            log.warning("%s summary attempt %d/%d failed: %s", scope, attempt, attempts, exc)
            continue
        if not text:
            log.warning("%s summary came back empty; skipped", scope)
        return text
    raise SummarizerError(f"{scope} summary failed after {attempts} attempts: {last}") from last


_NAMED_IDS = {QUEST_NAME: "quest_id", OBJECTIVE_NAME: "objective_id", ACT_NAME: "act_id"}


def related_text(
    game_state: GameState, event_kind: WorldEvent, related: Mapping[str, str | list[str]]
) -> str:
    """What a world event is about, as the prompt shows it: the quest, objective or act by its
    name (`story_line`), then what has no name (`encounter cellar-rats`, a location by its
    name): no `quest_id=` codes for the model to copy into a memory."""
    named = {ids for name, ids in _NAMED_IDS.items() if name in related}
    line = story_line(event_kind, related)
    parts = [line] if line else []
    for key, value in sorted(related.items()):
        text = value if isinstance(value, str) else ", ".join(value)
        if key in _NAMED_IDS:
            if not line:
                parts.append(f"{key.removesuffix('_name')} '{text}'")
            continue
        if key in named:
            continue
        if key == "location_id" and text.isdigit():
            text = location_name(game_state, int(text)) or text
        parts.append(f"{key.removesuffix('_id')} {text}")
    return "; ".join(parts) or "none"


def left_out_line(turns: Sequence[int]) -> str:
    """What a visit summary is told of the turns its transcript leaves out ('' for none)."""
    if not turns:
        return ""
    spans: list[list[int]] = []
    for turn in sorted(set(turns)):
        if spans and turn == spans[-1][-1] + 1:
            spans[-1].append(turn)
        else:
            spans.append([turn])
    named = ", ".join(f"{s[0]}-{s[-1]}" if len(s) > 1 else f"{s[0]}" for s in spans)
    plural = "s" if len(set(turns)) > 1 else ""
    return (
        f"Turn{plural} {named} of this visit {'are' if plural else 'is'} left out below: other"
        " memories hold them. Summarize only what the lines below show, and say nothing of"
        " what is not there (never that something was not done or not found)."
    )


def transcript(messages: Sequence[Message]) -> str:
    """Messages as `[index] role @ location: text` lines."""
    return "\n".join(
        f"[{m.index}] {m.role}"
        + (f" @ {m.location_name or m.location_id}" if m.location_id is not None else "")
        + f": {m.text}"
        for m in messages
    )


def _context(o: TurnOutcome) -> str:
    gained = sorted(set(o.inventory_after) - set(o.inventory_before))
    lost = sorted(set(o.inventory_before) - set(o.inventory_after))
    score = (
        f"score {o.score_before} -> {o.score_after} ({o.score_delta:+d})"
        if o.score_before is not None and o.score_after is not None
        else "score unknown"
    )
    return (
        f"{score}; location {o.location_before} -> {o.location_after}; "
        f"inventory gained {gained or 'nothing'}, lost {lost or 'nothing'}; died: {o.died}"
    )


def synthesis_prompt(request: SynthesisRequest) -> str:
    """The user message of a synthesis call: the turn, its Z-machine context, the triggers,
    the memories already here and the recent actions before it."""
    o = request.outcome
    existing = "\n".join(
        f"- [{m.status.value}] id={m.id} [{m.category.value}] {m.title}: {m.text}"
        for m in request.existing
    )
    history = "\n".join(
        f"Turn {h.turn} @ {h.location_before_name or h.location_before}: {h.action}\n"
        f"Reasoning: {h.reasoning or '(none)'}\nResponse: {h.response.strip()}"
        for h in request.history
    )
    triggers = ", ".join(request.triggers)
    return render(
        "synthesis_turn",
        location_name=o.location_before_name or "(unnamed)",
        location_id=o.location_before,
        action=o.action,
        response=as_data(o.response.strip(), GAME_TEXT),
        context=_context(o),
        triggers=triggers or ("none" if request.hint else ""),
        hint=hint_lines(request.hint),
        existing=as_data(existing, MEMORIES) or "(none yet)",
        history=as_data(history, GAME_TEXT) or "(none)",
    )


def hint_lines(hint: RulesVerdict | None) -> str:
    """The rules' verdict as the synthesis prompt shows it, after the triggers line: the
    outcome and why, then the memory the rules alone would write and the ids of those it would
    replace (the memories listed below show them); '' without a hint (the prompt is then
    exactly as it was before hints)."""
    if hint is None:
        return ""
    verdict = hint.outcome.upper().replace("_", "-")
    why = f" ({hint.reason})" if hint.reason else ""
    lines = [f"Rules' verdict (a hint; you decide): {verdict}{why}"]
    if hint.writes and hint.category is not None:
        replaces = ", ".join(f"id={i}" for i in hint.replaces)
        proposal = (  # (a line each: a title may hold a colon, and both are to be repeated)
            f"category: {hint.category.value}\ntitle: {hint.title}\ntext: {hint.text}"
        )
        lines.append(
            "The rules alone would write"
            + (f" (in place of {replaces})" if replaces else "")
            + f":\n{fenced(proposal, MEMORIES)}"
        )
    else:
        lines.append("The rules alone would write nothing themselves.")
    return "\n" + "\n".join(lines)
