"""The memory service's rules over messages and turns: NPC mentions, message spans, world
titles, and which turns are plain failures, moves or news. Pure functions."""

from __future__ import annotations

import re
from collections.abc import Sequence

from cairn.models.game import GameState, Message, TurnOutcome
from cairn.models.kinds import EventRelated, WorldEvent
from cairn.services.outcomes import changes_state, is_failure, unknown_word

_MAX_PREREQUISITES = 5
_NEW_WORDS = 3
"""A same-titled memory replaces the old one when it brings at least this many new words."""


def span(game_state: GameState, messages: Sequence[Message]) -> dict[str, object]:
    turns = [m.turn for m in messages if m.turn is not None]
    return {
        "episode": game_state.episode,
        "turn_start": min(turns) if turns else None,
        "turn_end": max(turns) if turns else None,
        "since_message_index": messages[-1].index,
        "since_timestamp": messages[0].timestamp,
    }


def npcs_in(messages: Sequence[Message], game_state: GameState) -> list[str]:
    """NPC ids present in or mentioned by a message after that NPC's cursor, first seen first."""
    cursors = game_state.scenario.last_npc_message_index
    seen: dict[str, None] = {}
    for m in messages:
        for npc_id in [*m.npcs_present, *m.npcs_mentioned, *named_in(m, game_state)]:
            if m.index > cursors.get(npc_id, -1):
                seen.setdefault(npc_id, None)
    return list(seen)


def named_in(message: Message, game_state: GameState) -> list[str]:
    """NPCs named in the text by a whole word or phrase: "Ed" is not in "opened"."""
    return [
        npc_id
        for npc_id, npc in game_state.npcs.items()
        if any(mentions(message.text, name) for name in (npc.name, *npc.aliases) if name)
    ]


def mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) is not None


def mention_window(
    visit: list[Message], npc_id: str, since: int, game_state: GameState
) -> list[Message]:
    """Messages naming the NPC after its cursor, with one message of context either side."""
    fresh = [m for m in visit if m.index > since]
    keep: set[int] = set()
    for pos, m in enumerate(fresh):
        if (
            npc_id in m.npcs_present
            or npc_id in m.npcs_mentioned
            or npc_id in named_in(m, game_state)
        ):
            keep.update(p for p in (pos - 1, pos, pos + 1) if 0 <= p < len(fresh))
    return [fresh[p] for p in sorted(keep)]


def world_title(event_kind: WorldEvent, related: EventRelated, game_state: GameState) -> str:
    """"Quest completed: rescue-lia", "Location cleared: Tavern Cellar": no `key=value` codes."""
    head = event_kind.replace("_", " ").capitalize()
    names = [
        str(value).replace("_", " ")
        for value in (related.objective_id, related.quest_id, related.act_id, related.encounter_id)
        if value
    ]
    if related.location_id is not None:
        room = location_name(game_state, related.location_id)
        names.append(room or f"location {related.location_id}")
    if not names:
        return head
    detail = names[0] + (f" ({', '.join(names[1:])})" if len(names) > 1 else "")
    return f"{head}: {detail}"


def location_name(game_state: GameState, location_id: int | None) -> str | None:
    if location_id is None:
        return None
    location = game_state.locations.get(location_id)
    return location.name if location and location.name else None


def adds_content(new: str, old: str) -> bool:
    """Whether `new` says at least a few things `old` does not (a procedure that gained steps)."""
    old_words = set(re.findall(r"[a-z0-9']+", old.lower()))
    added = {w for w in re.findall(r"[a-z0-9']+", new.lower()) if w not in old_words}
    return len(added) >= _NEW_WORDS


def norm(text: str) -> str:
    return " ".join(text.lower().split())


def plain_failure(outcome: TurnOutcome) -> bool:
    """A refusal that changed nothing (no move, score or inventory change, no ending), about
    this room: "I don't know the word X" is about the game's vocabulary, not the room."""
    if outcome.moved or outcome.score_delta != 0 or outcome.inventory_changed:
        return False
    if outcome.died or outcome.won or "'" in outcome.action:
        return False
    return is_failure(outcome.response) and unknown_word(outcome.response) is None


def move_of(outcome: TurnOutcome) -> dict[str, object]:
    """`{"via": command, "leads_to": id}` for a turn that changed location, else {}."""
    if not outcome.moved or outcome.location_after is None:
        return {}
    return {"via": " ".join(outcome.action.lower().split()), "leads_to": outcome.location_after}


def prerequisites(turns: Sequence[TurnOutcome]) -> list[TurnOutcome]:
    """Short state-changing answers ("Opened.") since the last move or death: candidate steps
    for the next success here (at most the last five)."""
    found: list[TurnOutcome] = []
    for turn in reversed(turns):
        if turn.moved or turn.died:
            break
        if changes_state(turn.action) and not is_failure(turn.response):
            found.insert(0, turn)
    return found[-_MAX_PREREQUISITES:]
