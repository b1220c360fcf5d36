"""The memory service's rules over messages and turns: NPC mentions, message spans, world
titles, and which turns are plain failures, moves or news. Pure functions."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from cairn.models.game import GameState, Message, TurnOutcome
from cairn.models.kinds import EventRelated, WorldEvent
from cairn.models.memory import MemoryCategory, MemoryEntry, MemorySource
from cairn.services.causes import DARK
from cairn.services.outcomes import (
    Verdict,
    action_key,
    changes_state,
    did_something,
    ledger_commands,
    quoted_commands,
    unknown_word,
    verdict,
)
from cairn.services.replies import reply

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
    """NPC ids that a message after that NPC's cursor shows both present and mentioned (see
    `engaged`), first seen first."""
    cursors = game_state.scenario.last_npc_message_index
    seen: dict[str, None] = {}
    for m in messages:
        for npc_id in dict.fromkeys([*m.npcs_present, *m.npcs_mentioned, *named_in(m, game_state)]):
            if m.index > cursors.get(npc_id, -1) and engaged(m, npc_id, game_state):
                seen.setdefault(npc_id, None)
    return list(seen)


def engaged(message: Message, npc_id: str, game_state: GameState) -> bool:
    """Whether the NPC is present and mentioned in this one message (an NPC memory is of an
    NPC who was there and took part, not of one only talked about elsewhere, nor of
    one who stood by unnamed). Present: in the message's `npcs_present`, or, when the message
    lists no one present, the NPC's current location is the message's. Mentioned: in its
    `npcs_mentioned`, or named in its text (`named_in`)."""
    if message.npcs_present:
        present = npc_id in message.npcs_present
    else:
        npc = game_state.npcs.get(npc_id)
        where = npc.current_location_id if npc is not None else None
        present = where is not None and where == message.location_id
    return present and (npc_id in message.npcs_mentioned or npc_id in named_in(message, game_state))


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
    """Messages after its cursor where the NPC is present and mentioned (`engaged`), with one
    message of context either side."""
    fresh = [m for m in visit if m.index > since]
    keep: set[int] = set()
    for pos, m in enumerate(fresh):
        if engaged(m, npc_id, game_state):
            keep.update(p for p in (pos - 1, pos, pos + 1) if 0 <= p < len(fresh))
    return [fresh[p] for p in sorted(keep)]


QUEST_NAME, OBJECTIVE_NAME, ACT_NAME = "quest_name", "objective_name", "act_name"
"""Keys of the names `story_names` adds to the `related` mapping a world summarizer reads."""


def story_names(related: EventRelated, game_state: GameState) -> dict[str, str]:
    """The names the GameState gives the quest, objective and act of a world event, under
    `quest_name`, `objective_name`, `act_name`; an unnamed one is left out (its id is internal,
    "ep1-t5", and does not belong in a memory's text)."""
    names: dict[str, str] = {}
    quest = game_state.quests.get(related.quest_id) if related.quest_id else None
    if quest and quest.name:
        names[QUEST_NAME] = quest.name
    if quest and related.objective_id and quest.objectives.get(related.objective_id):
        names[OBJECTIVE_NAME] = quest.objectives[related.objective_id]
    if related.act_id and game_state.acts.get(related.act_id):
        names[ACT_NAME] = game_state.acts[related.act_id]
    return names


def story_line(event_kind: str, related: Mapping[str, str | list[str]]) -> str:
    """ "Completed objective 'Free the prisoner' (quest 'The Goblin Cage')", "Completed quest
    'The Goblin Cage'", "Reached act 'The Siege'": the story event by the names in `related`
    (see `story_names`); '' for other events, or when the names are not known."""
    quest, objective, act = (_text(related.get(k)) for k in (QUEST_NAME, OBJECTIVE_NAME, ACT_NAME))
    of_quest = f" (quest '{quest}')" if quest else ""
    if event_kind == WorldEvent.OBJECTIVE_COMPLETED and objective:
        return f"Completed objective '{objective}'{of_quest}"
    if event_kind == WorldEvent.OBJECTIVE_COMPLETED and quest:
        return f"Completed an objective{of_quest}"
    if event_kind == WorldEvent.QUEST_COMPLETED and quest:
        return f"Completed quest '{quest}'"
    if event_kind == WorldEvent.ACT_PROGRESSED and act:
        return f"Reached act '{act}'"
    return ""


def naming_story(summary: str, event_kind: str, names: Mapping[str, str]) -> str:
    """`summary`, led by the event's `story_line` when it does not already hold every name:
    a world memory names its quest, objective or act whatever the summarizer wrote."""
    line = story_line(event_kind, names)
    said = summary.casefold()
    if not line or all(name.casefold() in said for name in names.values()):
        return summary
    return f"{line}. {summary}" if summary else f"{line}."


def _text(value: str | list[str] | None) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else ", ".join(value)


def world_title(event_kind: WorldEvent, related: EventRelated, game_state: GameState) -> str:
    """ "Completed quest 'The Goblin Cage'" when the GameState names it, else "Quest completed:
    rescue-lia", "Location cleared: Tavern Cellar": no `key=value` codes."""
    line = story_line(event_kind, story_names(related, game_state))
    if line:
        return line
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
    """A refusal that changed nothing (`verdict` FAILURE: no move, score, inventory or world
    change, no ending), about this room: "I don't know the word X" is about the game's
    vocabulary, not the room, "already so" is no failure of the room, and "too dark to see" is
    the room's darkness (a light changes it: the darkness lesson, `causes`, says so)."""
    if outcome.died or outcome.won or "'" in outcome.action:
        return False
    if DARK.search(reply(outcome.response)):
        return False  # "It's too dark to see!": the room's darkness, not a failure of the command
    return verdict(outcome) is Verdict.FAILURE and unknown_word(outcome.response) is None


def move_of(outcome: TurnOutcome) -> dict[str, object]:
    """`{"via": command, "leads_to": id}` for a turn that changed location, else {}."""
    if not outcome.moved or outcome.location_after is None:
        return {}
    return {"via": " ".join(outcome.action.lower().split()), "leads_to": outcome.location_after}


def prerequisites(turns: Sequence[TurnOutcome]) -> list[TurnOutcome]:
    """Turns of state-changing verbs that did something ("Opened.", `did_something`: the world
    changed, or, when the game cannot say, the words did not refuse) since the last move or
    death: candidate steps for the next success here (at most the last five)."""
    found: list[TurnOutcome] = []
    for turn in reversed(turns):
        if turn.moved or turn.died:
            break
        if changes_state(turn.action) and did_something(turn):
            found.insert(0, turn)
    return found[-_MAX_PREREQUISITES:]


class MessagesByLocation:
    """The messages of a conversation history by location id, read on from where the last
    call stopped: a location's messages cost what was added since, not the whole history.
    Messages are appended, not changed in place: a history that was replaced or shortened, or
    whose last message read is no longer there, is read again from the start."""

    def __init__(self) -> None:
        self._history: list[Message] | None = None
        self._read = 0
        self._last: Message | None = None
        self._at: dict[int | None, list[Message]] = {}

    def at(self, history: list[Message], location_id: int | None) -> list[Message]:
        """The messages of `history` at `location_id`, in order (a list of one's own)."""
        stale = (
            history is not self._history
            or len(history) < self._read
            or (self._read and history[self._read - 1] is not self._last)
        )
        if stale:
            self._history, self._read, self._at = history, 0, {}
        for message in history[self._read :]:
            self._at.setdefault(message.location_id, []).append(message)
        self._read = len(history)
        self._last = history[-1] if history else None
        return list(self._at.get(location_id, ()))


def action_of(entry: MemoryEntry) -> str | None:
    """The command whose outcome a memory records: its move (`via`), or the first command a
    success or discovery of an action quotes ("Got leaflet": "'take leaflet' got leaflet.");
    None for visits, notes, endings, failures and the rest."""
    if entry.via:
        return entry.via
    if entry.category not in (MemoryCategory.SUCCESS, MemoryCategory.DISCOVERY):
        return None
    if entry.source not in (MemorySource.ACTION, MemorySource.MOVE):
        return None
    quoted = quoted_commands(entry.title) or quoted_commands(entry.text)
    return quoted[0] if quoted else None


def success_of(existing: Sequence[MemoryEntry], action: str) -> MemoryEntry | None:
    """The memory here of `action` having worked (see `action_of`), the most important first."""
    key = action_key(action)
    found = [e for e in existing if (a := action_of(e)) is not None and action_key(a) == key]
    return max(found, key=lambda e: e.importance, default=None)


def ledger_of(existing: Sequence[MemoryEntry], action: str) -> MemoryEntry | None:
    """The failure ledger here that lists `action` (as the same action: `n` is `north`)."""
    key = action_key(action)
    for entry in existing:
        if entry.category is MemoryCategory.FAILURE and any(
            action_key(c) == key for c in ledger_commands(entry)
        ):
            return entry
    return None
