"""RuleBasedSummarizer: the offline, deterministic stand-in for the summarizer agent.

These are HEURISTICS, not a model: keyword patterns over the game's response and the
Z-machine deltas decide the category, and summaries are extractive (sentences copied from
the messages). They let cairn run, and be tested, with no LLM and no network.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from cairn.interfaces.summarizer import ISummarizer, SynthesisRequest
from cairn.models.game import GameState, Message, NPCInstance, TurnOutcome
from cairn.models.kinds import WorldEvent
from cairn.models.memory import MemoryCategory, MemoryStatus, SynthesisDecision
from cairn.services.endings import ending_text
from cairn.services.map import normalize_direction
from cairn.services.outcomes import (
    FAILURE_PATTERNS,
    changes_state,
    first_sentences,
    got_title,
    is_failure,
    with_steps,
)

UNCERTAIN_PATTERNS = re.compile(r"\b(accepts?|graciously|seems? (pleased|satisfied))\b", re.I)
_PROSE = re.compile(r"[a-z]{2,}.*\s.*[a-z]{2,}")
_TITLE_LINE = re.compile(r"^[A-Z][\w'\-]*(?: [\w'\-]+){0,5}$|^-= .* =-$")
_BANNER_WORDS = re.compile(
    r"\b(copyright|\(c\)|release \d|serial (?:number|no)|inform v?\d|all rights reserved|"
    r"interpreter|version \d)", re.I
)

__all__ = ["FAILURE_PATTERNS", "RuleBasedSummarizer", "first_sentences", "is_failure"]


def prose(text: str) -> str:
    """`text` without what is not prose: title banners, room headers, ASCII art, commands."""
    kept = []
    for line in text.splitlines():
        stripped = line.strip()
        if (
            not stripped
            or stripped.startswith(">")
            or _TITLE_LINE.match(stripped)
            or _BANNER_WORDS.search(stripped)
        ):
            continue
        letters = sum(ch.isalpha() for ch in stripped)
        if letters < len(stripped) * 0.6 or not _PROSE.search(stripped):
            continue
        kept.append(stripped)
    return " ".join(kept)


class RuleBasedSummarizer(ISummarizer):
    """Deterministic heuristics standing in for the LLM summarizer (see module docstring)."""

    def synthesize(self, request: SynthesisRequest) -> SynthesisDecision:
        o = request.outcome
        gist = first_sentences(o.response)
        tentative = [e.id for e in request.existing if e.status is MemoryStatus.TENTATIVE]
        if o.died:
            return SynthesisDecision(
                should_remember=True,
                category=MemoryCategory.DANGER,
                memory_title=f"Died by '{o.action}'",
                memory_text=f"'{o.action}' here was fatal: {ending_text(o.response) or gist}",
                importance=900,
                supersedes_memory_ids=tentative,
                reasoning="death is always worth remembering; it confirms earlier guesses",
            )
        steps = _procedure(request.history, o)
        if o.score_delta > 0:
            return SynthesisDecision(
                should_remember=True,
                category=MemoryCategory.SUCCESS,
                memory_title=f"Scored {o.score_delta} by '{o.action}'",
                memory_text=with_steps(
                    f"'{o.action}' gained {o.score_delta} points: {gist}", steps
                ),
                importance=800,
                multi_step=bool(steps),
                supersedes_memory_ids=tentative,
                reasoning="a score gain marks progress",
            )
        if o.score_delta < 0:
            return SynthesisDecision(
                should_remember=True,
                category=MemoryCategory.DANGER,
                memory_title=f"Penalty: {o.action}",
                memory_text=f"'{o.action}' cost {-o.score_delta} points: {gist}",
                importance=700,
                reasoning="a score loss is a hazard",
            )
        if o.moved:
            where = o.location_after_name or f"location {o.location_after}"
            return SynthesisDecision(
                should_remember=True,
                category=MemoryCategory.SUCCESS if steps else MemoryCategory.NOTE,
                memory_title=f"'{o.action}' leads to {where}",
                memory_text=with_steps(
                    f"'{o.action}' from here reaches {where} (L{o.location_after}).", steps
                ),
                importance=600 if steps else 300,
                multi_step=bool(steps),
                reasoning="a working exit; with its prerequisites when there were any",
            )
        if o.inventory_changed:
            return _inventory_decision(o, gist)
        if is_failure(o.response):
            return SynthesisDecision(
                should_remember=True,
                category=MemoryCategory.FAILURE,
                memory_title=f"'{o.action}' fails",
                memory_text=f"'{o.action}' does not work here: {gist}",
                importance=400,
                reasoning="remembering failures prevents repeating them",
            )
        return SynthesisDecision(
            should_remember=True,
            category=MemoryCategory.DISCOVERY,
            memory_title=f"Result of '{o.action}'",
            memory_text=gist,
            importance=350,
            reasoning="a long response usually carries information",
        )

    def summarize_location_session(
        self, game_state: GameState, location_id: int, messages: Sequence[Message]
    ) -> str:
        said = [text for m in messages if m.role != "player" and (text := prose(m.text))]
        if not said:
            return ""
        first = first_sentences(said[0])
        last = first_sentences(said[-1]) if len(said) > 1 else ""
        return " ".join(dict.fromkeys(p for p in (first, last) if p))

    def summarize_npc_interactions(
        self, game_state: GameState, npc: NPCInstance, messages: Sequence[Message]
    ) -> str:
        names = [re.escape(n) for n in (npc.name, *npc.aliases) if n]
        named = re.compile(rf"(?<!\w)(?:{'|'.join(names)})(?!\w)", re.I) if names else None
        about = [m for m in messages if named and named.search(m.text)] or list(messages)
        return " ".join(first_sentences(m.text) for m in about[:3])

    def summarize_world_update(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        messages: Sequence[Message],
        related: Mapping[str, str | list[str]],
    ) -> str:
        recent = " ".join(first_sentences(m.text) for m in messages[-2:])
        return f"{event_kind.replace('_', ' ').capitalize()}. {recent}".strip()


def _procedure(history: Sequence[TurnOutcome], outcome: TurnOutcome) -> list[str]:
    """Earlier actions at the same location that did not fail: the steps before this one.

    A plain compass move needs no steps, unless it scored (then the state-changing steps taken
    here before it: `open window`, then `west`), or it had failed here before (then everything
    done in between is what opened the way).
    """
    direction = normalize_direction(outcome.action)
    plain_move = direction is not None and direction not in ("in", "out")
    failed_before = any(
        t.location_before == outcome.location_before and t.action == outcome.action and not t.moved
        for t in history
    )
    steps: list[str] = []
    for turn in reversed(history):
        if turn.location_before != outcome.location_before or turn.moved:
            break
        if is_failure(turn.response) or turn.action == outcome.action:
            continue
        if plain_move and not failed_before:
            if outcome.score_delta <= 0:
                return []
            if not changes_state(turn.action):
                continue
        steps.insert(0, turn.action)
    return list(dict.fromkeys(steps))


def _inventory_decision(o: TurnOutcome, gist: str) -> SynthesisDecision:
    gained = sorted(set(o.inventory_after) - set(o.inventory_before))
    lost = sorted(set(o.inventory_before) - set(o.inventory_after))
    if gained:
        return SynthesisDecision(
            should_remember=True,
            category=MemoryCategory.SUCCESS,
            memory_title=got_title(gained),
            memory_text=f"'{o.action}' got {', '.join(gained)}. {gist}",
            importance=550,
            reasoning="items found here",
        )
    uncertain = bool(UNCERTAIN_PATTERNS.search(o.response))
    return SynthesisDecision(
        should_remember=True,
        category=MemoryCategory.NOTE,
        status=MemoryStatus.TENTATIVE if uncertain else MemoryStatus.ACTIVE,
        memory_title=f"Gave up {', '.join(lost)}",
        memory_text=f"'{o.action}' parted with {', '.join(lost)}: {gist}",
        importance=450,
        reasoning="outcome unclear until a later turn confirms it" if uncertain else "item left",
    )
