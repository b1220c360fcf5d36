"""Why a death happened, read from the game's text and state, and where the cause lies.

`endings.death_cause` reads the ending's words (hunger, thirst, air, a clock; a death after an
ordinary answer or a passive command is the world's). `diagnose` reads the episode's turns too,
by classes of phrasing many games share, never one game's sentence:

- darkness: the room the player died in was last described as dark ("pitch black", "too dark
  to see", "a dark place") since the player came in, and no lit description of it followed (a
  lit room is shown under its own name). The room is the cause, not the command taken there:
  "Died by 'northeast'" in a dark room made the agent try 'northwest' into the same dark.
- a light ran out: the same, when a light was said to go out (or run out, or die) in the turns
  before: a timer, not the room.
- combat: the ending names an attacker that kills ("the ogre's club strikes you", "you are
  slain by the thief").
- a trap or a fall: a death the command caused whose words fall or trip ("you fall into the
  pit"): the command (a move into a pit) is the danger. A move whose answer first shows the
  room it reached ("Hallway\nThere is no time left...") and dies after that description
  without a fall died of the world (a timer, an event), not of the move.
- a need or a timer (hunger, thirst, air, a clock) and the plot, as `endings.death_cause` says;
  and a death whose own answer is only the score ("Your score is 0 of a possible 400."), told
  a turn before the game said it ended, is the world's too.

The lesson is stored where the cause lies: `dark_lesson_text` writes what the darkness taught at
the dark room ("Vault (L7) is dark: entering without a lit light ends in death (Ep2, T125:
"..."). Ways in: 'down' from Hall (L3)."), in the game's own words of the death, and
`ways_in` reads the ways back for an agent that must light a light before taking them. A fight
leaves the attacker's lesson at its room (`attacker_lesson_text`). Lessons are tagged `lesson`:
they blame no command.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from cairn.models.game import TurnOutcome
from cairn.models.lesson import DeathBy
from cairn.models.memory import MemoryEntry, Way
from cairn.services.endings import BLAMES_COMMAND, DeathCause, death_cause, ending_text
from cairn.services.map import normalize_direction
from cairn.services.outcomes import first_sentences, is_failure, normalize_command
from cairn.services.replies import is_junk, is_stock

DARK = re.compile(
    r"\b(?:pitch[- ]?(?:black|dark)|too dark(?: in here)? to see|(?:it is|it's|it\u2019s) "
    r"(?:now |completely |very |totally |much too |too )?dark\b|(?:into|in) a dark place|"
    r"(?:total|complete|utter) darkness|darkness (?:surrounds|envelops|closes)|"
    r"can'?t see (?:a thing|anything|your hand)|you are in the dark|(?:is|are) plunged into dark)",
    re.IGNORECASE,
)
"""A room described as dark (no light to see by)."""
DARK_ROOM = re.compile(
    r"\b(?:pitch[- ]?(?:black|dark)|too dark(?: in here)? to see|"
    r"can'?t see (?:a thing|anything|your hand)|(?:into|in) a dark place|"
    r"(?:total|complete|utter) darkness)",
    re.IGNORECASE,
)
"""The strongest of `DARK`: enough to remember a room as dark without a death there (a night
scene's "it is dark and stormy" is not)."""
LIGHT_OUT = re.compile(
    r"\b(?:lamp|lantern|torch|candle|light|flashlight|match|flame|glow)s?\b[^.!?\n]{0,60}?"
    r"\b(?:goes out|went out|has gone out|go(?:es)? dark|runs? out|ran out|has run out|"
    r"dies|died|fades? (?:out|away)|flickers? (?:out|and dies)|burn(?:s|ed|t)? out|"
    r"is (?:now )?(?:dead|out|exhausted)|gutters? out|sputters? out|expires?)\b",
    re.IGNORECASE,
)
"""A light going out ("The lamp has run out of power", "Your torch flickers and dies")."""
_ATTACK_VERBS = (
    r"kills?|killed|slays?|slew|slain|stabs?|stabbed|strikes?|struck|hits?|attacks?|attacked|"
    r"bites?|bit|mauls?|mauled|shoots?|shot|cleaves?|cleft|skewers?|skewered|impales?|impaled|"
    r"slash(?:es|ed)?|clubs?|clubbed|gores?|gored|strangles?|strangled|throttles?|throttled|"
    r"smashes|pummels?|beheads?|beheaded|decapitates?|decapitated"
)
"""Verbs of an attack, with the player as their object somewhere after them."""
_ATTACK_ON_YOU = (
    r"tears? (?:you|into you)|rips? (?:you|into you)|runs? you through|cuts? you down|"
    r"finishes you|removes? your head|cuts? off your head|knocks? you (?:out|down|dead)"
)
"""Phrasings of an attack that name the player themselves."""
_ATTACKER = (
    re.compile(
        r"\b(?:the|a|an)\s+(?:[a-z\-]+\s+){0,2}?(?P<who>[a-z\-]{3,})(?:'s\s+[a-z\-]+(?:\s+[a-z\-]+)?)?"
        rf"\s+(?:[a-z]+\s+){{0,2}}?(?:(?:{_ATTACK_VERBS})\b[^.!?]{{0,40}}?\byou(?:r)?\b|"
        rf"(?:{_ATTACK_ON_YOU})\b)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\byou (?:are|have been|were) (?:[a-z]+ )?(?:killed|slain|stabbed|shot|mauled|eaten|"
        r"devoured|cut down|struck down|beaten) by (?:the |a |an )?(?:[a-z\-]+\s+)?"
        r"(?P<who>[a-z\-]{3,})\b",
        re.IGNORECASE,
    ),
)
"""An attacker that kills, named in the death text."""
_NOT_ATTACKERS = frozenset(
    [
        "you", "yourself", "fall", "impact", "ground", "floor", "rock", "rocks", "boulder",
        "stone", "stones", "ceiling", "roof", "wall", "walls", "water", "wave", "waves",
        "lightning", "explosion", "blast", "bomb", "shockwave", "debris", "door", "trap",
    ]
)
"""Things that kill without fighting (a falling rock, a blast): no attacker."""
FALL = re.compile(
    r"\b(?:fall(?:s|en|ing)?|fell|plunge[sd]?|plummet(?:s|ed|ing)?|tumble[sd]?|topple[sd]?|"
    r"pit|chasm|abyss|precipice|spikes?|trap(?:door)?s?|crushe[sd]|collapses? (?:beneath|under)|"
    r"cave[sd]? in|"
    r"landslide|avalanche|quicksand|gives? way beneath)\b",
    re.IGNORECASE,
)
"""A trap or a fall."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LESSON_WAYS = re.compile(r"'([a-z][a-z0-9 \-]{0,40})' from [^'()]*?\(L(-?\d+)\)")
_WAYS_HEAD = "Ways in: "


@dataclass(frozen=True)
class WayIn:
    """A move that entered a room: `command` taken at `source` (named `source_name`)."""

    command: str
    source: int
    source_name: str = ""


@dataclass(frozen=True)
class Diagnosis:
    """Why a death happened and where its cause lies (`room`, for a dark room or an attacker's
    room; None when the cause is the world's or the command's)."""

    cause: DeathCause
    room: int | None = None
    room_name: str = ""
    detail: str = ""
    """The attacker of a combat death; the light's words when a light ran out."""
    ways_in: tuple[WayIn, ...] = field(default_factory=tuple)

    @property
    def blames_command(self) -> bool:
        """Whether the last command is the danger (its effect, a trap or a fall it set off)."""
        return self.cause in BLAMES_COMMAND


def as_tested(found: Diagnosis, by: DeathBy | None) -> Diagnosis:
    """`found` as the game's own answer has it (`TurnTests.death_by`: what a harmless command
    in place of the last one did): a death that comes anyway is the world's, whatever the
    words blamed; one a harmless command avoids is the command's, even when the words spoke
    of a need or the plot. Rooms (darkness, a light) and attackers keep their own lessons."""
    if by is DeathBy.EVENT and found.blames_command:
        return Diagnosis(DeathCause.PLOT)
    if by is DeathBy.ACTION and found.cause in _WORLD_CAUSES:
        return Diagnosis(DeathCause.COMMAND)
    return found


_WORLD_CAUSES = frozenset({DeathCause.CLOCK, DeathCause.HUNGER, DeathCause.AIR, DeathCause.PLOT})


def attacker(words: str) -> str | None:
    """The attacker a death text names ("The ogre's club strikes you" -> ogre), if any."""
    for pattern in _ATTACKER:
        for found in pattern.finditer(words):
            who = found.group("who").lower()
            if who not in _NOT_ATTACKERS:
                return who
    return None


def diagnose(final: TurnOutcome, earlier: Sequence[TurnOutcome]) -> Diagnosis:
    """The cause of the death `final` reports, from its words and the episode's `earlier` turns
    (oldest first, `final` itself left out or last): see the module docstring."""
    turns = [t for t in earlier if (t.episode, t.turn) != (final.episode, final.turn)]
    words = ending_text(final.response)
    cause = death_cause(final.action, final.response)
    if cause in (DeathCause.HUNGER, DeathCause.AIR, DeathCause.CLOCK):
        return Diagnosis(cause)
    if is_junk(words):
        # the death was told a turn before: this answer is only the score ("Your score is 0 of
        # a possible 400"), the command it follows did nothing to it
        return Diagnosis(DeathCause.PLOT)
    room = final.location_before
    visit = _visit(turns, room) if room is not None else []
    if room is not None and _dark_at_death(visit, final):
        name = final.location_before_name
        ways = tuple(
            WayIn(normalize_command(t.action), t.location_before, t.location_before_name)
            for t in visit[:1]
            if t.location_before is not None and t.location_before != room
        )
        went_out = next(
            (m.group(0) for t in [*turns[-10:], final] if (m := LIGHT_OUT.search(t.response))),
            None,
        )
        if went_out is not None:
            return Diagnosis(DeathCause.LIGHT, room, name, first_sentences(went_out), ways)
        return Diagnosis(DeathCause.DARKNESS, room, name, ways_in=ways)
    who = attacker(words)
    if who is not None:
        return Diagnosis(DeathCause.COMBAT, room, final.location_before_name, who)
    after = _after_arrival(final)
    if after is not None:
        # the move's own answer (the room it reached) came first: a fall there is the move's,
        # anything else is the world's (a timer, an event), never a danger of the move
        return Diagnosis(DeathCause.TRAP if FALL.search(after) else DeathCause.PLOT)
    if cause is not DeathCause.COMMAND:
        return Diagnosis(cause)
    return Diagnosis(DeathCause.TRAP if FALL.search(words) else DeathCause.COMMAND)


def _after_arrival(final: TurnOutcome) -> str | None:
    """For a move that reached a room and died there, the words after that room's description
    (its header, the room's own name, opens the answer); None for any other death."""
    if not (final.moved and is_move(final.action) and final.location_after_name.strip()):
        return None
    lead = final.response.split("***", 1)[0]
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", lead) if p.strip()]
    if len(paragraphs) == 1:  # an older game's messages, one a line
        paragraphs = [line.strip() for line in paragraphs[0].splitlines() if line.strip()]
    header = paragraphs[0].split("\n", 1)[0].strip().lower() if paragraphs else ""
    if len(paragraphs) < 2 or header != final.location_after_name.strip().lower():
        return None
    return " ".join(paragraphs[1:])


def _visit(turns: Sequence[TurnOutcome], room: int) -> list[TurnOutcome]:
    """The turns of the player's last stay in `room`, oldest first: from the move that came in
    (kept, its answer describes the room) to the latest turn there."""
    stay: list[TurnOutcome] = []
    for turn in reversed(turns):
        if turn.location_after != room:
            break
        stay.insert(0, turn)
        if turn.location_before != room:
            break
    return stay


def _dark_at_death(visit: Sequence[TurnOutcome], final: TurnOutcome) -> bool:
    """Whether the room was last described as dark before the death: a dark description since
    the player came in (or in the death's own lead), with no lit one (the room shown under its
    own name) after it."""
    dark = False
    name = final.location_before_name.strip().lower()
    lead = final.response.split("***", 1)[0]
    for text in [*(t.response for t in visit), lead]:
        for paragraph in re.split(r"\n\s*\n", text):
            head = paragraph.strip().split("\n", 1)[0].strip().lower()
            if name and head == name:
                dark = False
            if DARK.search(paragraph):
                dark = True
    return dark


# -- the darkness lesson: its writer and its reader, side by side -----------------------------


DARK_TAG = "cause:darkness"
"""The tag of a lesson that a room is dark (`dark_lesson_text`)."""
LESSON_TAG = "lesson"
"""The tag of a memory of a cause stored where it lies (never a danger of a command)."""


def dark_lesson_title(died: bool = True) -> str:
    """The title of a darkness lesson (the room's name is in its text): a danger once the dark
    killed there, else a note of what shows the room (no danger without a death)."""
    return "Dark: enter only with a lit light" if died else "Dark: a lit light shows it"


def death_words(response: str, limit: int = 160) -> str:
    """The game's words of a death, for a lesson: the last sentences before its banner that fit
    in `limit` characters, without a refusal or a stock reply that came before the death ("You
    can't go that way. Oh no! A lurking ... devoured you!" -> "Oh no! A lurking ...")."""
    lead = response.split("***", 1)[0]
    said = _SENTENCE_END.split(" ".join(lead.split()))
    kept: list[str] = []
    for sentence in reversed([s for s in said if s]):
        if kept and len(" ".join([sentence, *kept])) > limit:
            break
        kept.insert(0, sentence)
    while len(kept) > 1 and (is_failure(kept[0]) or is_stock(kept[0])):
        kept.pop(0)
    return first_sentences(" ".join(kept), count=len(kept) or 1, limit=limit)


def dark_lesson_text(
    diagnosis: Diagnosis, episode: int, turn: int, said: str, *, died: bool = True
) -> str:
    """What the darkness taught, at the dark room, in words an agent can act on: "Vault
    (L7) is dark: entering without a lit light ends in death (Ep2, T125: "...").
    Ways in: 'down' from Hall (L3)."; a room only seen dark (no death yet) "is dark:
    without a lit light nothing can be seen there (Ep1, T5: "It is pitch black...")."."""
    room = diagnosis.room_name or "This room"
    quote = f': "{said}"' if said else ""
    what = (
        "entering without a lit light ends in death"
        if died
        else "without a lit light nothing can be seen there"
    )
    text = f"{room} (L{diagnosis.room}) is dark: {what} (Ep{episode}, T{turn}{quote})."
    return with_ways_in(text, diagnosis.ways_in)


def ends_in_death(text: str) -> bool:
    """Whether a darkness lesson says a death came of it (not only that the room was dark)."""
    return "is dark: entering without a lit light ends in death" in text


def with_death(text: str, death: str) -> str:
    """A darkness lesson `text` (a room seen dark) told as the death `death` says (a
    `dark_lesson_text` with `died`), its ways in kept."""
    head = death.split(f" {_WAYS_HEAD}", 1)[0].rstrip()
    ways = [WayIn(c, source, name) for (c, source), name in _ways_named(text)]
    return with_ways_in(head, [*ways, *(WayIn(c, s, n) for (c, s), n in _ways_named(death))])


def ways_of(memory: MemoryEntry) -> list[WayIn]:
    """The ways into a room a lesson keeps: its fields; an older file's lesson, written before
    them, read from its text."""
    if memory.ways_in:
        return [WayIn(w.command, w.source, w.source_name) for w in memory.ways_in]
    return [WayIn(c, source, name) for (c, source), name in _ways_named(memory.text)]


def as_fields(ways: Sequence[WayIn]) -> list[Way]:
    """`ways` as a memory's fields, each (command, room) once."""
    seen: dict[tuple[str, int], Way] = {}
    for w in ways:
        way = Way(command=w.command, source=w.source, source_name=w.source_name)
        seen.setdefault((w.command, w.source), way)
    return list(seen.values())


def _ways_named(text: str) -> list[tuple[tuple[str, int], str]]:
    names = _named_sources(text)
    return [((c, source), names.get(source, "")) for c, source in ways_in(text)]


def dark_arrival(outcome: TurnOutcome) -> Diagnosis | None:
    """A move (no death) that brought the player into a room described as dark ("You have
    moved into a dark place. It is pitch black."): the room and that way in. A room the player
    wakes up in dark, or that only a turn there finds dark, is not remembered so: it may be lit
    by a switch, and its ways in are not known."""
    room = outcome.location_after
    source = outcome.location_before
    if room is None or source is None or not outcome.moved or outcome.died or outcome.won:
        return None
    if not DARK_ROOM.search(outcome.response):
        return None
    way = WayIn(normalize_command(outcome.action), source, outcome.location_before_name)
    return Diagnosis(DeathCause.DARKNESS, room, outcome.location_after_name, ways_in=(way,))


def with_ways_in(text: str, ways: Sequence[WayIn]) -> str:
    """`text` with the ways in it lists and `ways` (each once), as its last sentence."""
    known = ways_in(text)
    head = text.split(f" {_WAYS_HEAD}", 1)[0].rstrip()
    listed = [*known, *((w.command, w.source) for w in ways)]
    names = {w.source: w.source_name for w in ways}
    names.update(_named_sources(text))
    unique = list(dict.fromkeys(listed))
    if not unique:
        return head
    said = ", ".join(
        f"'{command}' from {names.get(source) or 'location'} (L{source})"
        for command, source in unique
    )
    return f"{head} {_WAYS_HEAD}{said}."


def ways_in(text: str) -> list[tuple[str, int]]:
    """The ways in a darkness lesson lists: (command, room it is taken in)."""
    if _WAYS_HEAD not in text:
        return []
    tail = text.split(_WAYS_HEAD, 1)[1]
    return [(m.group(1), int(m.group(2))) for m in _LESSON_WAYS.finditer(tail)]


def _named_sources(text: str) -> dict[int, str]:
    if _WAYS_HEAD not in text:
        return {}
    tail = text.split(_WAYS_HEAD, 1)[1]
    found = re.finditer(r"' from ([^'()]*?) \(L(-?\d+)\)", tail)
    return {int(m.group(2)): m.group(1) for m in found if m.group(1) != "location"}


def dark_words(response: str, limit: int = 160) -> str:
    """The game's words that a room is dark, for a lesson ("You have moved into a dark place.
    It is pitch black. Something moves in the dark.")."""
    return first_sentences(response, count=3, limit=limit)


def blamed_command(title: str) -> str | None:
    """The command a danger's title blames ("Died by 'northeast'" -> northeast), if any."""
    found = re.search(r"'([^'\n]{1,40})'", title)
    return found.group(1) if found else None


def attacker_lesson_title(who: str) -> str:
    """The title of a combat lesson: "Attacked here by the ogre"."""
    return f"Attacked here by the {who}" if who else "Attacked here"


def attacker_lesson_text(diagnosis: Diagnosis, episode: int, turn: int, said: str) -> str:
    """What a fatal fight taught, at the room it happened in: "In <room> (L<id>) the
    <attacker> attacks and can kill (Ep<n>, T<turn>: "..."). Come back better armed, or keep
    away."."""
    room = diagnosis.room_name or "this room"
    who = f"the {diagnosis.detail}" if diagnosis.detail else "an attacker"
    quote = f': "{said}"' if said else ""
    return (
        f"In {room} (L{diagnosis.room}) {who} attacks and can kill (Ep{episode}, T{turn}{quote})."
        " Come back better armed, or keep away."
    )


def is_move(command: str) -> bool:
    """Whether a command is a move (a compass direction, up, down, in, out)."""
    return normalize_direction(command) is not None
