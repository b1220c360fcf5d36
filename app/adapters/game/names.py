"""Names from game text: room headers, vehicle suffixes, parser replies, internal item codes.

Pure functions, no interpreter. A room header is a short unindented line that starts with a
capital, ends without sentence punctuation, is no parser reply ("I don't understand that",
"The door is open") and no title banner (an all-capitals line, or a line followed closely by
"Release 3 / Serial number ..." or a copyright notice). Headers printed in a vehicle carry a
suffix ("Frigid River, in the magic boat", "Bedroom (in bed)"): it is context, not the name.
Darkness headers ("Darkness", "It is pitch black.") name no room.

A game that prints no header gets a name from its room description (`described_name`): the
first noun phrase of the description's first sentence, "You are standing in a small clearing,
..." -> "Small clearing". It is read from the answer to `look`, never from the game's opening
(its title and welcome text), and dark answers name nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

_TW_HEADER = re.compile(r"^-= (.+?) =-(?:[ \t]*\(([^()\n]+)\))?[ \t]*$", re.MULTILINE)
"""TextWorld's header, with what holds the player after it: "-= Library =- (in the cart)"."""
_MAX_TITLE = 60
_MAX_WORDS = 9
_TITLE_CHARS = re.compile("^[\\w\"'\u2019\\-,&() .!]+$")
_ABBREVIATION = re.compile(r"^[A-Z][a-z]{0,2}\.$")  # "Mr.", "St.": a period inside a title
_BANNER_NEAR = re.compile(
    r"\brelease \d|\bserial number\b|copyright|\(c\)|interactive (?:fiction|fable|night)|"
    r"^by [A-Z]|\binform\b|all rights reserved",
    re.IGNORECASE,
)
_BANNER_WINDOW = 3
_REPLY_START = re.compile(
    r"^(?:I|I'm|I've|I'll|I'd|You|You're|You've|You'll|You'd|Your|It|It's|There's|That|"
    r"That's|These|Those|What|Which|Who|Why|How|Please|Sorry|Nothing|But|Oops|Huh|Really|"
    r"Can't|Don't|Let's|Hmm|Oh|Ah|Try|Perhaps|Maybe)\b(?!-)"
)
_REPLY_WORD = re.compile(
    r"\b(?:is|are|was|were|isn't|aren't|wasn't|weren't|can't|cannot|couldn't|don't|doesn't|"
    r"didn't|won't|wouldn't|has|have|hasn't|haven't|seems|seem|looks|appears|understand)\b",
    re.IGNORECASE,
)
_REPLY_LINE = re.compile(
    r"^(?:taken|dropped|done|ok|okay|opened|closed|time passes|again|yes|no|z+)\W*$", re.I
)
DARK_NAMES = frozenset(
    ["darkness", "in the dark", "it is pitch black", "it is pitch dark", "pitch black", "dark"]
)
_PAREN_SUFFIX = re.compile(r"^(.*\S)\s*\(([^()]+)\)$")
_COMMA_SUFFIX = re.compile(
    r"^(.*?\S),\s+((?:in|on|at|inside|aboard|astride|under|sitting|standing|lying|seated)\b.*)$",
    re.IGNORECASE,
)
_STATUS_LINE = re.compile(r"\A>[^\n]*? {8,}[^\n]*(?:\n|\Z)")
_ARTICLE = re.compile(r"^(?:an?|the|some)\s+", re.IGNORECASE)
_CODE_TOKEN = re.compile(r"_|^[A-Za-z]+\d+$")
_CODE_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_WORD = re.compile(r"[a-z][a-z'\-]*")


def _word_set(words: str) -> frozenset[str]:
    """The words of a space-separated list."""
    return frozenset(words.split())


_STOP_WORDS = _word_set(
    "a an the and or but of to in on at by for with from into onto upon over under out off up "
    "down is are was were be been it its it's this that these those there here you your yours "
    "i me my we us our he him his she her they them their some any all no not nothing can't "
    "cannot don't won't which what who whom whose where when why how as so if then than too "
    "very just only also still even more most much many such own other another each every "
    "s t room rooms way ways"
)
_DIRECTIONS = _word_set(
    "north south east west northeast northwest southeast southwest up down in out n s e w ne "
    "nw se sw u d fore aft port starboard"
)
_LEADS_TO = frozenset(["to", "onto", "into"])
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s")
_PLACE_WORDS = (
    r"in|on|at|inside|outside|under|beneath|below|above|atop|upon|within|beside|by|near|"
    r"before|among|amid|amidst|between|along|across|behind|over|into|onto"
)
_LEAD_IN = re.compile(
    r"^(?:(?:you(?:'re|\s+are|\s+find\s+yourself|\s+stand|\s+(?:can\s+)?see|"
    r"\s+have\s+(?:come|arrived)\s+(?:to|at))"
    r"|i(?:'m|\s+am)|this\s+is|here\s+is)\s+)?"
    r"(?:(?:now|still)\s+)?"
    r"(?:(?:standing|sitting|lying|floating|crouching|kneeling|perched|hanging|walking|stuck|"
    r"trapped|somewhere)\s+)?"
    rf"(?:(?:{_PLACE_WORDS})\s+)?"
    r"(?:(?:the|a|an)\s+(?:middle|midst|centre|center|edge|corner|side|end|top|bottom)\s+of\s+)?"
    r"(?:(?:a|an|the|some|this|your)\s+)?",
    re.IGNORECASE,
)
_PHRASE_STOP = (
    _word_set(
        f"{_PLACE_WORDS.replace('|', ' ')} to from with without through around against toward "
        "towards beyond past here there which that where who whose whom while and but or nor "
        "so as if is are was were be been being has have had seems can could will would may "
        "might must shall should"
    )
    | _DIRECTIONS
)
_VERB_STOP = _word_set(
    "looks look stands stand lies lie leads lead runs run opens open rises rise stretches "
    "stretch sits sit hangs hang fills fill seem"
)
"""Verbs that end a noun phrase, except as its first word ("Open field", "Cobbles lie ...")."""
_DARK_TEXT = re.compile(
    r"pitch[- ](?:black|dark)|too dark|\b(?:is|it's|very|so) dark\b|^darkness\b|"
    r"can(?:no|')t see|unable to see",
    re.IGNORECASE,
)
_MAX_DESCRIBED_WORDS = 5


# -- headers ---------------------------------------------------------------------------------


def is_parser_reply(line: str) -> bool:
    """Whether `line` reads like the parser answering ("I don't understand that.", "Taken.")."""
    text = " ".join(line.split())
    if not text:
        return False
    return bool(_REPLY_LINE.match(text) or _REPLY_START.match(text) or _REPLY_WORD.search(text))


def is_title(line: str) -> bool:
    """Whether `line` can be a room header: short, unindented, capitalised, no sentence."""
    if not line or line != line.lstrip() or len(line.rstrip()) > _MAX_TITLE:
        return False
    line = line.rstrip()
    if not (line[0].isupper() or line[0].isdigit()) or line[-1] in ".!?:;,":
        return False
    if not _TITLE_CHARS.match(line):
        return False
    words = line.split()
    if len(words) > _MAX_WORDS:
        return False
    if any(w.endswith(".") and not _ABBREVIATION.match(w) for w in words):
        return False
    letters = [c for c in line if c.isalpha()]
    if len(letters) > 3 and line.isupper():  # "CURSES", "MOTHER LOOSE": a title banner
        return False
    return not is_parser_reply(line)


def _is_banner(lines: list[str], index: int) -> bool:
    """Whether `lines[index]` is a game's title: a release or copyright line follows closely."""
    window = lines[index + 1 : index + 1 + _BANNER_WINDOW]
    return any(_BANNER_NEAR.search(line) for line in window)


def room_header(text: str, anywhere: bool = True) -> str | None:
    """The room header a game printed in `text`, if any (suffix included).

    TextWorld's `-= Name =-` is taken wherever it is (its suffix left out). Otherwise the
    header must be followed by a description line. With `anywhere` the first such line counts
    (after an intro, "You have moved into a dark place.", a death...) unless it is a title
    banner; without it only the first line of the text can be the header.
    """
    found = _TW_HEADER.search(text)
    if found:
        return found.group(1).strip()
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    candidates = range(len(lines) - 1) if anywhere else range(min(1, len(lines) - 1))
    for index in candidates:
        line = lines[index]
        if _BANNER_NEAR.search(line) or _is_banner(lines, index):
            continue
        if is_title(line) and line.casefold() not in DARK_NAMES:
            return line
    return None


def strip_status_line(text: str) -> str:
    """`text` without a leading status line (unsupported games print a stale one first)."""
    return _STATUS_LINE.sub("", text, count=1)


def split_suffix(header: str, in_something: bool, tree_name: str = "") -> tuple[str, str]:
    """(name, context) of a header: "Frigid River, in the magic boat" -> the river and the boat.

    The suffix is only split off when the player is inside something, or when what precedes
    it is the room's own object-tree name; "Stairwell (First Floor)" stays whole otherwise.
    """
    header = " ".join(header.split())
    if tree_name and header.casefold() == tree_name.casefold():
        return header, ""
    for pattern in (_PAREN_SUFFIX, _COMMA_SUFFIX):
        found = pattern.match(header)
        if found is None:
            continue
        name, context = found.group(1).strip(), found.group(2).strip()
        if in_something or (tree_name and name.casefold() == tree_name.casefold()):
            return name, context
    return header, ""


@dataclass(frozen=True)
class LookReading:
    """What a `look` answer says about the room: its name (when it prints one) and context.

    `confirmed` when the name is the room's object-tree name too (or the words of its internal
    identifier: "Gnome Room" for "(gnomeRoom)").
    """

    name: str
    context: str
    found: bool
    confirmed: bool = False
    described: str = ""
    """When no header was found: the name the description gives (`described_name`), or ""."""


def tree_name_words(tree_name: str) -> str:
    """The words of a tree name, lower case: "(gnomeRoom)" -> "gnome room"."""
    name = " ".join(tree_name.split())
    if len(name) > 2 and name.startswith("(") and name.endswith(")"):
        name = " ".join(_CODE_PARTS.findall(name[1:-1]))
    return name.casefold()


def read_look(text: str, tree_name: str, in_something: bool) -> LookReading:
    """The room's name and context from the answer to `look` (the header is its first line).

    Leading lines wholly in parentheses ("(You clamber out of the mummy case.)") are skipped.
    A first line equal to the room's object-tree name is its name; otherwise it must be a title
    followed by a description, and no darkness header. `found` is False when no name was read
    (a dark room, a question, an echo): the caller falls back to the tree name. TextWorld's
    `-= Name =-` is always the name (its tree has none); a suffix in parentheses after it is
    the context ("in the cart").
    """
    tw = _TW_HEADER.search(text)
    if tw:
        return LookReading(tw.group(1).strip(), (tw.group(2) or "").strip(), True, confirmed=True)
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    while lines and lines[0].strip()[:1] in "([" and lines[0].strip()[-1:] in ")]":
        lines.pop(0)
    if not lines:
        return LookReading("", "", False)
    first = lines[0].strip()
    name, context = split_suffix(first, in_something, tree_name)
    if tree_name and name.casefold() == " ".join(tree_name.split()).casefold():
        return LookReading(name, context, True, confirmed=True)
    dark = first.casefold().rstrip(".") in DARK_NAMES or name.casefold() in DARK_NAMES
    if dark or (len(lines) < 2 and is_title(lines[0])):
        return LookReading("", "", False)
    if not is_title(lines[0]):
        return LookReading("", "", False, described=described_name(" ".join(lines)))
    confirmed = bool(tree_name) and name.casefold() == tree_name_words(tree_name)
    return LookReading(name, context, True, confirmed)


def described_name(description: str) -> str:
    """A room's name from its description, for games that print none (see the module
    docstring): "A cramped study that smells of ink." -> "Cramped study". "" for a dark
    answer, a title banner or a sentence with no noun phrase up front.
    """
    text = " ".join(description.split())
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0].strip()
    if not sentence or _DARK_TEXT.search(sentence) or _BANNER_NEAR.search(sentence):
        return ""
    rest = _LEAD_IN.sub("", sentence, count=1)
    words: list[str] = []
    for token in rest.split():
        word = token.strip("\"'()[]")
        folded = word.casefold().rstrip(".,;:!?-")
        if not word or folded in _PHRASE_STOP or (words and folded in _VERB_STOP):
            break
        clause_ends = word[-1] in ".,;:!?-" or token[-1] in ",;:"
        word = word.rstrip(".,;:!?-")
        if word:
            words.append(word)
        if clause_ends or len(words) == _MAX_DESCRIBED_WORDS:
            break
    while words and words[-1].casefold() in {"of", "a", "an", "the"}:
        words.pop()
    if not words or not any(c.isalpha() for c in words[0]):
        return ""
    name = " ".join(words)
    name = name[0].upper() + name[1:]
    folded = name.casefold()
    if is_parser_reply(name) or folded in _STOP_WORDS or folded in _VERB_STOP:
        return ""
    return name


# -- object and item names -------------------------------------------------------------------


def _known(word: str, vocabulary: Collection[str] | None, resolution: int) -> bool:
    """Whether `word` is in the game's dictionary (which keeps only `resolution` letters)."""
    if vocabulary is None:
        return True
    lowered = word.lower()
    return lowered in vocabulary or lowered[:resolution] in vocabulary


def clean_item_name(
    raw: str, vocabulary: Collection[str] | None = None, resolution: int = 9
) -> str:
    """An object-tree name without internal codes: "(Ball0)" -> "ball", "Ticket_N" -> "ticket".

    A name wholly in parentheses is an author's internal identifier: its words are split
    (underscores, camel case, digits) and only those in the game's dictionary are kept, so
    "(missingBR)" becomes "" when the parser knows no such word. Elsewhere a token with an
    underscore or trailing digits ("Brick_1") is a code: its letters are kept, lone letters
    and digits dropped. Ordinary names ("ZM$100000", "Booth 1") are left as they are.
    """
    name = " ".join(raw.split())
    internal = len(name) > 2 and name.startswith("(") and name.endswith(")")
    if internal:
        name = name[1:-1]
    words: list[str] = []
    for token in name.split(" "):
        if internal or _CODE_TOKEN.search(token):
            parts = [p for p in _CODE_PARTS.findall(token) if len(p) > 1 and not p.isdigit()]
            words += [p.lower() for p in parts if not internal or _known(p, vocabulary, resolution)]
        elif token:
            words.append(token)
    return " ".join(words)


def object_name(raw: str, vocabulary: Collection[str] | None = None, resolution: int = 9) -> str:
    """An object's name as an agent would type it: cleaned, lower case, no decoration.

    "*DRAGON EGGS* (very rare)" gives "dragon eggs": the stars and the note in
    parentheses are how the game dresses the name, not words to type.
    """
    name = clean_item_name(raw, vocabulary, resolution).lower().replace("*", " ")
    name = re.sub(r"\([^()]*\)", " ", name)
    return " ".join(name.split()).strip(" -.,\"'")


def clean_room_name(raw: str) -> str:
    """An object-tree room name fit for display, or "" for an internal one ("(gnomeRoom)")."""
    name = " ".join(raw.split())
    if not name or (name.startswith("(") and name.endswith(")")) or "_" in name:
        return ""
    return name


def nouns_in_text(
    text: str, vocabulary: Collection[str], resolution: int = 9, skip: Iterable[str] = ()
) -> list[str]:
    """Runs of `vocabulary` words in `text`, without function words or directions.

    For games whose object tree has no names (TextWorld): "An old oak chest stands against the
    wall." gives ["oak chest"] when the parser knows "oak" and "chest" but not "wall". Pass the
    dictionary's words that are no verbs, prepositions or directions. Phrases made only of
    words of `skip` (the names of the rooms: "hall" in the Entrance Hall) are left out, and so
    are the places exits lead to ("north to a library").
    """
    skipped = {w for phrase in skip for w in _WORD.findall(phrase.lower())}
    found: list[str] = []
    for clause in re.split(r"[.,;:!?\n()\[\]\"]+", text.lower()):
        run: list[str] = []
        before: list[str] = []  # the words between the last run and this one
        directed = False  # a direction was named earlier in the clause
        for word in [*_WORD.findall(clause), ""]:
            if (
                word
                and word not in _STOP_WORDS
                and word not in _DIRECTIONS
                and _known(word, vocabulary, resolution)
            ):
                run.append(word)
                continue
            phrase = " ".join(run)
            destination = directed and bool(_LEADS_TO & set(before[-2:]))
            place = set(run) <= skipped  # "hall" in the Entrance Hall: a room, no thing
            if phrase and not (destination or place) and phrase not in found:
                found.append(phrase)
            if run:
                before = []
            run = []
            before.append(word)
            directed = directed or word in _DIRECTIONS
    return found


def parse_inventory(text: str) -> list[str]:
    """Item names from an `inventory` answer ("You are carrying: an iron key, a lamp.")."""
    if "carrying" not in text.lower() or "nothing" in text.lower():
        return []
    body = text.split(":", 1)[1] if ":" in text else text
    parts = re.split(r",\s*|\s+and\s+|\n", body.strip().rstrip("."))
    return [_ARTICLE.sub("", p.strip()).strip() for p in parts if p.strip()]
