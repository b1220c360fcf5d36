"""How the explorer reads words: commands, the nouns of things, and what memory says."""

from __future__ import annotations

import re
from collections.abc import Callable

from cairn.interfaces.agent import AgentView
from cairn.interfaces.game import GameObservation
from cairn.lessons.reading import missing, steps_first
from cairn.models.lesson import DeathBy
from cairn.models.memory import MemoryCategory, MemoryEntry, MemorySource
from cairn.services.causes import DARK_TAG, LESSON_TAG, ways_of
from cairn.services.map import DIRECTIONS as MAP_DIRECTIONS
from cairn.services.map import normalize_direction
from cairn.services.outcomes import (
    TAKE_VERBS,
    Command,
    got_items,
    later_notes,
    quoted_commands,
)
from cairn.services.replies import overloaded

DIRECTIONS = tuple(d for d in MAP_DIRECTIONS if d not in ("in", "out"))
_Check = Callable[[str], bool]
_GAME_WORDS = re.compile(r'"[^"]*"|\b(?:Last answer|The game said):.*$', re.DOTALL)
_ARTICLE_PHRASE = re.compile(
    r"\b(?:an?|the|some)\s+((?:[a-z\-]+\s+){0,3}?[a-z\-]+)"
    r"(?=\s*(?:[.,;:!?)]|\s(?:here|on|in|is|are|lies|lying|sits|sitting|with|which|that|"
    r"leading|to|by|and|of|from|hangs|rests|stands|stand|opens)\b))",
    re.IGNORECASE,
)
_ASKED_FIRST = re.compile(
    r"\byou(?:'ll| will)? (?:have|need) to ((?:[a-z]+ ){0,5}[a-z]+) first\b", re.IGNORECASE
)
_WORD = re.compile(r"[a-z][a-z\-]*")
_NO_SUCH_THING = re.compile(
    r"can'?t see any|don'?t see (?:any|that|the)|no such thing|\b(?:is|are) no [\w ]+ here|"
    r"(?:is|are)n'?t here|don'?t know the word|can'?t use the word|not a word i know|"
    r"don'?t recogni[sz]e|need to refer to",
    re.IGNORECASE,
)
"""Replies saying the thing a command named is not here at all (the noun was a guess)."""
_SCENERY = frozenset(
    [
        "way",
        "path",
        "forest",
        "house",
        "room",
        "wall",
        "walls",
        "floor",
        "ground",
        "ceiling",
        "sky",
        "exit",
        "exits",
        "passage",
        "trees",
        "tree",
        "clearing",
        "corridor",
        "hall",
        "area",
        "north",
        "south",
        "east",
        "west",
        "up",
        "down",
        "side",
        "direction",
        "distance",
        "moment",
        "time",
        "rest",
        "end",
        "middle",
        "top",
        "bottom",
        "kind",
        "sort",
        "lot",
        "bit",
        "game",
        "score",
        "adventure",
        "sunlight",
        "light",
        "darkness",
        "dark",
        "place",
        "world",
        "entrance",
        "opening",
        "out",
    ]
)
_LIGHT_NOUNS = frozenset(
    [
        "lamp", "lantern", "torch", "candle", "candles", "flashlight", "light", "lightbulb",
        "match", "matches", "lighter", "glowstick", "flare", "taper",
    ]
)
"""Names of things that give light: English words for light sources, no game's own."""
_OPPOSITE = {
    "north": "south", "south": "north", "east": "west", "west": "east",
    "northeast": "southwest", "southwest": "northeast", "northwest": "southeast",
    "southeast": "northwest", "up": "down", "down": "up", "in": "out", "out": "in",
}
_FIXED_VERBS = frozenset(["take", "get", "eat", "read"])
"""Verbs whose failure a change to the thing does not undo (a fixed door stays fixed)."""
_LOCKABLE = frozenset(["door", "gate", "chest", "box", "cabinet", "safe", "grate", "hatch"])
_ADJECTIVE_WORDS = frozenset(
    ["closed", "open", "locked", "unlocked", "small", "large", "big", "old", "new"]
)
_ARTICLES = frozenset(["the", "a", "an", "some", "your", "my"])
_PRONOUNS = frozenset(["it", "them", "him", "her", "you", "me", "us", "this", "that", "others"])


def _player_commands(text: str) -> list[str]:
    """Quoted commands outside the game's own words (its answer is quoted in double quotes or
    follows "Last answer:"/"The game said:", and may itself quote a word: 'xyzzy')."""
    return quoted_commands(_GAME_WORDS.sub(" ", text))


def remembered_procedures(
    memories: list[MemoryEntry], inventory: list[str], seen: str | None = None
) -> list[str]:
    """Commands worth repeating here, most important memory first: steps, then the action;
    never a procedure whose preconditions do not hold (a step's tool, or an item it needed
    held: `preconditions.missing`). An item a "Got" memory took here is taken by its noun
    (`thing_noun`: "rusty axe (magic word...)" -> `take axe`), never while held, and, when
    `seen` (what the player has seen here: the room, the replies, the game's object names) is
    given, only once `seen` names it (a leaflet still in its closed mailbox is not there);
    so does a remembered score's take."""
    commands: list[str] = []
    words = set(_WORD.findall(seen.lower())) if seen is not None else None
    for memory in sorted(memories, key=lambda m: -m.importance):
        if memory.category is not MemoryCategory.SUCCESS:
            continue
        got = got_items(memory.title)
        if got:
            nouns = (thing_noun(item) for item in got)
            commands.extend(
                f"take {noun}"
                for noun in nouns
                if noun is not None
                and not holding(noun, inventory)
                and (words is None or noun in words)
            )
            continue
        quoted = quoted_commands(memory.text)
        steps = steps_first(memory)
        if any((tool := tool_of(s)) is not None and not holding(tool, inventory) for s in steps):
            continue  # a step needs an item not held: the action would fail before it
        if missing(memory, inventory):
            continue  # it needed items held that are not: not before they are
        if quoted and ((memory.score_delta or 0) > 0 or steps):
            # a take waits until what it takes is in sight (its steps may bring it in sight)
            commands.extend([*steps, *([quoted[0]] if _in_sight(quoted[0], words) else [])])
    return list(dict.fromkeys(c for command in commands if (c := normalize(command))))


def _in_sight(command: str, words: set[str] | None) -> bool:
    """Whether `command` takes nothing, or takes a thing `words` (what was seen) names."""
    parsed = Command.parse(command)
    if words is None or parsed.verb not in TAKE_VERBS or not parsed.object:
        return True
    return parsed.object.split()[-1] in words


_ABOUT_THE_PLAYER = frozenset({"already held", "too much carried"})
"""`why_not` reasons about what the player held then, not about the command or the place."""


def remembered_failures(memories: list[MemoryEntry]) -> set[str]:
    """Commands memory says failed here: every command a FAILURE memory quotes (outside the
    game's quoted answer), the first of an older "'x' does not work here." note, and what a
    memory of what happened (not a procedure, not a way that led on: a closed door makes the
    game say what to do first) says later did nothing ("Later, take phone: refused (...)"),
    unless only because of what the player held or what was in sight then ("already held", "too
    much carried", "no leaflet in sight")."""
    failed: set[str] = set()
    for memory in memories:
        if memory.category is MemoryCategory.FAILURE and memory.ledger is not None:
            if not overloaded(memory.ledger.answer):  # (too much held then: not the thing's)
                failed.update(memory.ledger.commands)  # the ledger's fields
        elif memory.category is MemoryCategory.FAILURE:  # a person's own, a model's
            failed.update(_player_commands(f"{memory.title}\n{memory.text}"))
        elif memory.source is MemorySource.NOTE and "does not work" in memory.text:
            failed.update(quoted_commands(memory.title + " " + memory.text)[:1])
        elif memory.category is not MemoryCategory.SUCCESS and not memory.via:
            failed.update(
                command
                for command, reason in later_notes(memory.text)
                if reason not in _ABOUT_THE_PLAYER and not reason.startswith("no ")
            )
    return failed


def remembered_dangers(memories: list[MemoryEntry]) -> set[str]:
    """The commands each DANGER memory here blames (a death or a penalty they caused), from
    its lesson: the action and the other ways of it the game confirmed fatal too; none when
    the game said the death came whatever was sent. A danger without a lesson (a person's
    own, an older file's) blames its first quoted command. A room's lesson (a dark room, an
    attacker: `causes`) blames no command: the ways in a darkness lesson quotes are taken
    elsewhere, and only without a light (`dark_rooms`)."""
    dangers: set[str] = set()
    for memory in memories:
        if memory.category is not MemoryCategory.DANGER or LESSON_TAG in memory.tags:
            continue
        lesson = memory.lesson
        if lesson is None:
            dangers.update(_player_commands(f"{memory.title}\n{memory.text}")[:1])
        elif lesson.death_cause is None or lesson.death_cause.by is not DeathBy.EVENT:
            dangers.update(normalize(c) for c in [lesson.action, *lesson.fatal_too])
    return dangers


def dark_rooms(
    memories: list[MemoryEntry], *, deadly: bool = False
) -> dict[int, list[tuple[str, int]]]:
    """Rooms a darkness lesson says are dark (`causes.dark_lesson_text`), each with the ways
    in it lists: (command, room the command is taken in). `deadly`: only the rooms where the
    dark killed (a danger: the others are notes of what shows the room)."""
    found: dict[int, list[tuple[str, int]]] = {}
    for memory in memories:
        if deadly and memory.category is not MemoryCategory.DANGER:
            continue
        if DARK_TAG in memory.tags and memory.location_id is not None:
            ways = found.setdefault(memory.location_id, [])
            known = [(w.command, w.source) for w in ways_of(memory)]  # its fields
            ways.extend(w for w in known if w not in ways)
    return found


def light_sources(inventory: list[str]) -> list[str]:
    """The nouns of carried things that give light by their name ("brass lantern" ->
    lantern): a lamp, lantern, torch, candle, flashlight, match... (`_LIGHT_NOUNS`)."""
    found: list[str] = []
    for item in inventory:
        words: list[str] = _WORD.findall(item.lower())
        noun = head_noun(item)
        lights = [w for w in words if w in _LIGHT_NOUNS]
        if lights:
            found.append(noun if noun is not None and noun in lights else lights[-1])
    return list(dict.fromkeys(found))


def lighting_commands(noun: str) -> list[str]:
    """Ways to light a carried light source, the commonest first."""
    return [f"turn on {noun}", f"light {noun}"]


def opposite(direction: str) -> str | None:
    """The compass opposite of a move (`up` -> `down`), the likely way back."""
    return _OPPOSITE.get(direction)


def remembered_bad(memories: list[MemoryEntry]) -> set[str]:
    """Commands memory marks as failing or dangerous here."""
    return remembered_failures(memories) | remembered_dangers(memories)



def tool_of(command: str) -> str | None:
    """The item a command uses (`unlock door with key` -> key), if any."""
    found = re.search(r"\bwith (?:the )?([a-z\-]+)$", command)
    return found.group(1) if found else None


def _noun(command: str) -> str | None:
    words = command.split()
    return words[1] if len(words) > 1 and words[0] not in DIRECTIONS else None


def _object_noun(command: str) -> str | None:
    """The thing a command acts on: the last word before any `with` clause."""
    words = command.split(" with ")[0].split()
    return words[-1] if len(words) > 1 and words[0] not in DIRECTIONS else None


def holding(item: str, inventory: list[str]) -> bool:
    """Whether an inventory item's name contains the word `item`."""
    return any(item in name.lower().split() for name in inventory)



_UNKNOWN_WORD = re.compile(
    r"""I (?:don't know|can't use) the word ["'](\w+)["']""", re.IGNORECASE
)
_UNKNOWN_VERB = re.compile(r"\bnot a verb I recogni[sz]e\b", re.IGNORECASE)
_UNKNOWN_NOTE = re.compile(r"does not know the word '(\w+)'")


def unknown_word_in(text: str, command: str) -> str | None:
    """The word a reply says the game does not know or cannot use ("I don't know the word
    'xyzzy'.", "I can't use the word 'again' here."), or the command's first word when the
    reply says it is no verb the game knows ("That's not a verb I recognise.")."""
    found = _UNKNOWN_WORD.search(text)
    if found:
        return found.group(1).lower()
    words = command.split()
    return words[0] if words and _UNKNOWN_VERB.search(text) else None


def unknown_words(world_notes: list[MemoryEntry]) -> set[str]:
    """Words the game said it does not know, from world notes."""
    return {m.group(1) for n in world_notes if (m := _UNKNOWN_NOTE.search(n.text))}



def visible_objects(text: str) -> list[str]:
    """Nouns of the things a room text mentions (`There is a small mailbox here` -> mailbox)."""
    nouns: list[str] = []
    for match in _ARTICLE_PHRASE.finditer(text):
        words = [w.lower() for w in match.group(1).split()]
        noun = words[-1]
        if noun in _SCENERY or noun in _ADJECTIVE_WORDS or len(noun) < 3:
            continue
        nouns.append(noun)
    return list(dict.fromkeys(nouns))


def known_words(nouns: list[str], view: AgentView) -> list[str]:
    """`nouns` the game's parser knows (all of them when its vocabulary is unknown): a noun
    guessed from text ("The phone rings." -> rings) that the game has no word for is no thing
    a command can name."""
    vocabulary = view.vocabulary
    return nouns if vocabulary is None else [n for n in nouns if vocabulary.knows(n)]


def head_noun(name: str) -> str | None:
    """The noun of a thing's name: its last word before any `with ...` clause ("spider web
    with writing on it" -> web); None for a name that reads as a sentence, or a pronoun."""
    text = str(name).lower()
    words: list[str] = _WORD.findall(text.split(" with ")[0])
    if "," in text or not words or words[-1] in _PRONOUNS or len(words[-1]) < 2:
        return None
    return words[-1]


_ASIDES = re.compile(r"\([^)]*\)|\[[^\]]*\]|\*")


def thing_noun(name: str) -> str | None:
    """The noun a command can name a thing by: `head_noun` of its name without asides in
    brackets or stars ("rusty axe (magic word- BUNYON -on it)" -> axe, "*SMALL STATUE OF A BLUE
    OX*" -> ox, "bird's nest" -> nest)."""
    return head_noun(_ASIDES.sub(" ", name))


def game_object_nouns(obs: GameObservation) -> list[str]:
    """The nouns of the game's own names for the things here (`objects`); two things with one
    noun ("yellow apple", "green apple") by their names, so the game need not ask which."""
    names = getattr(obs, "objects", None) or []
    heads = [(name, n) for name in names if (n := head_noun(name))]
    shared = {n for n in {n for _, n in heads} if sum(h == n for _, h in heads) > 1}
    return list(
        dict.fromkeys(
            " ".join(_WORD.findall(name.lower().split(" with ")[0])) if n in shared else n
            for name, n in heads
        )
    )


def normalize(command: str) -> str:
    """A command as the session records it: lower case, single spaces, no stray symbols."""
    return " ".join(re.sub(r"[^a-z0-9 \-]", " ", command.lower()).split())


def _entered(obs: GameObservation) -> bool:
    """Whether the reply opens with the room's own header: a move that stayed in the same room
    id (a maze of look-alike rooms: "In the Desert") still moved the player."""
    first = obs.text.strip().split("\n", 1)[0].strip().lower()
    name = obs.location_name.strip().lower()
    return bool(name) and first.startswith(name)


_WHICH_LIST = re.compile(
    r"\b(?:which do you mean|what do you want to [a-z ]+?)[,:]\s*(?:one of )?"
    r"([^?]+? or [^?]+?)\?",
    re.IGNORECASE,
)


def which_options(text: str) -> list[str]:
    """Every thing offered when the game asks which was meant, in its order ("Which do you
    mean, the small bowl or the large bowl?" -> small bowl, large bowl); [] when it asks
    nothing. The parser reads the next command as the answer, so a move sent now would be
    taken for one ("take west")."""
    found = _WHICH_LIST.search(text)
    if not found:
        return []
    options: list[str] = []
    for part in re.split(r",\s*(?:or\s+)?|\s+or\s+", found.group(1)):
        words = [w for w in _WORD.findall(part.lower()) if w not in _ARTICLES and len(w) > 1]
        if words:
            options.append(" ".join(words))
    return list(dict.fromkeys(options))


_MOVING_VERBS = frozenset(
    ["go", "walk", "run", "enter", "climb", "board", "cross", "swim", "jump", "follow", "exit"]
)


_WAY_BEFORE = (
    r"(?:to|from|toward|towards|lead|leads|leading|lie|lies|go|goes|going|head|heads|heading|run|"
    r"runs|running|wind|winds|continue|continues|descend|descends|climb|climbs|exit|exits|"
    r"opening|passage|path|door|doorway|stairs|staircase|steps|ladder|way)"
)
_WAY_AFTER = (
    r"(?:wall|door|doorway|exit|side|end|passage|path|corridor|archway|opening|stair|stairs|"
    r"staircase)"
)


def names_way(direction: str, text: str) -> bool:
    """Whether `text` (lower case) names `direction` as a way: "a door to the south", "stairs
    lead up", "in the south wall", "the exit leading east" (not "you wake up")."""
    return (
        re.search(rf"\b{_WAY_BEFORE}\s+(?:[a-z]+\s+){{0,2}}?{direction}\b", text) is not None
        or re.search(rf"\b{direction}(?:ward|wards|ern)?\s+{_WAY_AFTER}\b", text) is not None
    )


def own_move(command: str) -> bool:
    """Whether a command is the player's own move (a direction, `enter boat`, `climb tree`)."""
    words = command.split()
    return bool(words) and (normalize_direction(command) is not None or words[0] in _MOVING_VERBS)


def asked_first(text: str) -> str | None:
    """What the game says must be done first ("You'll have to get out of the bed first.")."""
    found = _ASKED_FIRST.search(text)
    if not found:
        return None
    words = [w for w in found.group(1).lower().split() if w not in _ARTICLES]
    return " ".join(words) or None


def object_commands(text: str, inventory: list[str], nouns: list[str] | None = None) -> list[str]:
    """Commands to try on what is here: `nouns` when given, else nouns seen in `text`."""
    commands: list[str] = []
    keys = [item for item in inventory if "key" in item.lower().split()]
    lowered = text.lower()
    for noun in visible_objects(text) if nouns is None else nouns:
        lockable = noun in _LOCKABLE or re.search(rf"\blocked\b[^.]*\b{re.escape(noun)}\b", lowered)
        if keys and lockable:
            commands.append(f"unlock {noun} with {keys[0].lower().split()[-1]}")
        commands.extend((f"open {noun}", f"take {noun}"))
    return commands


