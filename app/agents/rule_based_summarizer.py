"""RuleBasedSummarizer: the offline, deterministic stand-in for the summarizer agent.

These are HEURISTICS, not a model: keyword patterns over the game's response and the
Z-machine deltas decide the category, and summaries are extractive (sentences copied from
the messages). A summary keeps the sentences that record an exchange of items or a promise
(`is_key_sentence`, a word list) ahead of the others, and a world update names its quest,
objective or act (`story_line`). They let cairn run, and be tested, with no LLM and no network.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from cairn.fiction.ending_memories import death_decision
from cairn.interfaces.summarizer import ISummarizer, SynthesisRequest
from cairn.models.game import GameState, Message, NPCInstance, TurnOutcome
from cairn.models.kinds import WorldEvent
from cairn.models.memory import MemoryCategory, MemoryStatus, SynthesisDecision
from cairn.services.map import normalize_direction
from cairn.services.memory_rules import named_in, story_line
from cairn.services.outcomes import (
    Verdict,
    changes_state,
    first_sentences,
    got_title,
    is_failure,
    verdict,
)
from cairn.services.replies import is_banner_line, is_stock, without_banners

UNCERTAIN_PATTERNS = re.compile(r"\b(accepts?|graciously|seems? (pleased|satisfied))\b", re.I)
_PROSE = re.compile(r"[a-z]{2,}.*\s.*[a-z]{2,}")
_TITLE_LINE = re.compile(r"^[A-Z][\w'\-]*(?: [\w'\-]+){0,5}$|^-= .* =-$")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
SUMMARY_SENTENCES = 3
"""At most this many sentences in a location, NPC or world summary (the prompts ask 2-3)."""
KEY_SUMMARY_CHARS = 200
"""A summary holding an exchange or a promise gets other sentences only within this length:
the narrative prompt shows the first 200 characters of a memory."""

EXCHANGE_WORDS = (
    r"give|gives|gave|given|giving|handed|hands? (?:you|him|her|them|me|us|over)|"
    r"trade|trades|traded|trading|buy|buys|bought|buying|sell|sells|sold|selling|"
    r"receive|receives|received|pay|pays|paid|swap|swaps|swapped|exchange|exchanges|exchanged"
)
"""Verbs of an exchange of items ("You trade him a silver ring", "she sold you a map")."""
PROMISE_WORDS = (
    r"promise|promises|promised|swear|swears|swore|sworn|vow|vows|vowed|pledge|pledges|"
    r"pledged|agree to|agrees to|agreed to|i will|i['\u2019]ll|we will|we['\u2019]ll"
)
"""Words of a promise ("Grik promises to open the cage", "'I will return,' she says")."""
_KEY_SENTENCE = re.compile(rf"\b(?:{EXCHANGE_WORDS}|{PROMISE_WORDS})\b", re.I)

__all__ = [
    "RuleBasedSummarizer",
    "first_sentences",
    "is_failure",
    "is_key_sentence",
]


def is_key_sentence(sentence: str) -> bool:
    """Whether a sentence records an exchange of items (give, hand, trade, buy, sell, receive,
    pay, swap) or a promise (promise, swear, vow, pledge, agree to, "I will", "we will").

    A heuristic over an English word list, not a model: "the door gives way" is a false
    positive, a promise without one of these words is missed. Summaries keep these
    sentences ahead of the others, because what changed hands and what was promised is what
    a game master needs to remember of a scene.
    """
    return _KEY_SENTENCE.search(sentence) is not None


def sentences(text: str) -> list[str]:
    """`text` split into sentences, whitespace collapsed, each at most 220 characters."""
    flat = " ".join(text.split())
    return [first_sentences(s) for s in _SENTENCE_END.split(flat) if s]


def keep_key_sentences(
    candidates: Sequence[str],
    chosen: Sequence[str],
    limit: int = SUMMARY_SENTENCES,
    pinned: Sequence[str] = (),
) -> str:
    """At most `limit` sentences, shown in the order of `candidates`: `pinned` ones (a world
    update's latest message), then the key sentences of `candidates` (`is_key_sentence`; a
    player's `> command` is none), then `chosen` (the summary this rule improves on).

    With no key sentence the summary is `pinned` and `chosen`. With some, a `chosen` sentence
    joins them only while the summary stays within `KEY_SUMMARY_CHARS`, so that a prompt
    showing a memory's first characters shows the exchange or the promise."""
    order = {s: i for i, s in reversed(list(enumerate([*candidates, *pinned, *chosen])))}
    keys = [s for s in candidates if not s.startswith(">") and is_key_sentence(s)]
    kept = list(dict.fromkeys(s for s in (*pinned, *keys) if s))[: max(0, limit)]
    for sentence in chosen:
        if len(kept) >= limit or not sentence or sentence in kept:
            continue
        if not keys or len(" ".join([*kept, sentence])) <= KEY_SUMMARY_CHARS:
            kept.append(sentence)
    return " ".join(sorted(kept, key=order.__getitem__))


def news(text: str) -> str:
    """`text` without banner lines and stock replies ("Taken.", "Time passes..."): what it says
    of this place; "" when nothing is left."""
    return " ".join(s for s in sentences(without_banners(text)) if not is_stock(s))


def prose(text: str) -> str:
    """`text` without what is not prose: banners and credits (`replies.is_banner_line`), title
    lines, room headers, ASCII art, commands."""
    kept = []
    for line in text.splitlines():
        stripped = line.strip()
        if (
            not stripped
            or stripped.startswith(">")
            or _TITLE_LINE.match(stripped)
            or is_banner_line(stripped)
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
        hint = request.hint
        if hint is not None and hint.writes and hint.category is not None:
            # standing in for a model (its circuit open): the rules' own memory, as they write it
            return SynthesisDecision(
                should_remember=True,
                category=hint.category,
                memory_title=hint.title,
                memory_text=hint.text,
                importance=400,
                reasoning=f"the rules' verdict: {hint.outcome}",
            )
        o = request.outcome
        gist = news(o.response) or first_sentences(o.response)
        tentative = [e.id for e in request.existing if e.status is MemoryStatus.TENTATIVE]
        if o.died:  # the one death memory the rules write, offline and as a model's hint
            return death_decision(o, request.existing)
        steps = _procedure(request.history, o)
        if o.score_delta > 0:
            return SynthesisDecision(
                should_remember=True,
                category=MemoryCategory.SUCCESS,
                memory_title=f"Scored {o.score_delta} by '{o.action}'",
                memory_text=f"'{o.action}' gained {o.score_delta} points: {gist}",
                steps_first=steps,
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
                memory_text=f"'{o.action}' from here reaches {where} (L{o.location_after}).",
                steps_first=steps,
                importance=600 if steps else 300,
                multi_step=bool(steps),
                reasoning="a working exit; with its prerequisites when there were any",
            )
        if o.inventory_changed:
            return _inventory_decision(o, news(o.response))
        outcome = verdict(o)
        if outcome is Verdict.NO_OP:
            return SynthesisDecision(should_remember=False, reasoning="it already was so")
        if outcome is Verdict.FAILURE:
            return SynthesisDecision(
                should_remember=True,
                category=MemoryCategory.FAILURE,
                memory_title=f"'{o.action}' fails",
                memory_text=f"'{o.action}' does not work here: {gist}",
                importance=400,
                reasoning="remembering failures prevents repeating them",
            )
        if outcome is Verdict.CHANGED and o.world_changed:
            return SynthesisDecision(
                should_remember=True,
                category=MemoryCategory.SUCCESS,
                # (the title is for reading: a command's internal-looking word read as words)
                memory_title=f"'{' '.join(o.action.replace('_', ' ').split())}' worked",
                memory_text=f"'{o.action}' changed something here: {gist}",
                steps_first=steps,
                importance=450,
                multi_step=bool(steps),
                reasoning="the game's world changed: a step that worked here",
            )
        if not news(o.response):
            return SynthesisDecision(
                should_remember=False, reasoning="only banners and stock replies: nothing learned"
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
        self,
        game_state: GameState,
        location_id: int,
        messages: Sequence[Message],
        left_out: Sequence[int] = (),
    ) -> str:
        said = [text for m in messages if m.role != "player" and (text := news(prose(m.text)))]
        if not said:
            return ""
        first = first_sentences(said[0])
        last = first_sentences(said[-1]) if len(said) > 1 else ""
        candidates = [s for text in said for s in sentences(text)]
        return keep_key_sentences(candidates, [first, last])

    def summarize_npc_interactions(
        self, game_state: GameState, npc: NPCInstance, messages: Sequence[Message]
    ) -> str:
        names = [re.escape(n) for n in (npc.name, *npc.aliases) if n]
        named = re.compile(rf"(?<!\w)(?:{'|'.join(names)})(?!\w)", re.I) if names else None
        about = [m for m in messages if named and named.search(m.text)] or list(messages)
        # key sentences also come from the window's messages that list the NPC, or that name
        # and list no NPC at all ("You trade him a silver ring." told next to Grik's line)
        named_here = {m.index for m in about}
        scene = [
            m
            for m in messages
            if m.index in named_here
            or npc.instance_id in (*m.npcs_present, *m.npcs_mentioned)
            or not (m.npcs_present or m.npcs_mentioned or named_in(m, game_state))
        ]
        candidates = [s for m in scene for s in sentences(m.text)]
        chosen = [first_sentences(m.text) for m in about[:SUMMARY_SENTENCES]]
        return keep_key_sentences(candidates, chosen)

    def summarize_world_update(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        messages: Sequence[Message],
        related: Mapping[str, str | list[str]],
    ) -> str:
        head = story_line(event_kind, related) or event_kind.replace("_", " ").capitalize()
        # the latest message is the event itself; the key sentences of its scene (the messages
        # at its location) come before the message just before it
        latest = [first_sentences(m.text) for m in messages[-1:]]
        before = [first_sentences(m.text) for m in messages[-2:-1]]
        where = messages[-1].location_id if messages else None
        candidates = [
            s for m in messages for s in sentences(m.text) if m.location_id == where or s in before
        ]
        recent = keep_key_sentences(candidates, before, SUMMARY_SENTENCES - 1, pinned=latest)
        return f"{head}. {recent}".strip()


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
        if verdict(turn) in (Verdict.FAILURE, Verdict.NO_OP) or turn.action == outcome.action:
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
            memory_text=f"'{o.action}' got {', '.join(gained)}." + (f" {gist}" if gist else ""),
            importance=550,
            reasoning="items found here",
        )
    uncertain = bool(UNCERTAIN_PATTERNS.search(o.response))
    return SynthesisDecision(
        should_remember=True,
        category=MemoryCategory.NOTE,
        status=MemoryStatus.TENTATIVE if uncertain else MemoryStatus.ACTIVE,
        memory_title=f"Gave up {', '.join(lost)}",
        memory_text=f"'{o.action}' parted with {', '.join(lost)}" + (f": {gist}" if gist else "."),
        importance=450,
        reasoning="outcome unclear until a later turn confirms it" if uncertain else "item left",
    )
