"""What a game's answer means, read by rules: refusals, commands' objects, and the failure ledger.

These are deterministic readings of the game's own words, shared by the play loop, the memory
service and the offline stand-ins. The failure ledger's sentence format and its parser live here
together, so a memory written by one is read back by the other (see `tests/unit/test_outcomes.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cairn.services.map import normalize_direction

FAILURE_PATTERNS = re.compile(
    r"\b(you can'?t|can not|cannot|i don'?t (understand|know)|doesn'?t (fit|work|seem)|"
    r"won'?t budge|is locked|nothing happens|there is no|you don'?t see|not possible|"
    r"that'?s not|isn'?t (open|possible)|you are empty-handed|too heavy|no verb|"
    r"not something you can|beyond your|futile|have no effect|you fail|you have to|"
    r"fixed in place|isn'?t something you can|you'?ll have to|first\.$)\b",
    re.IGNORECASE,
)
UNKNOWN_WORD = re.compile(
    r"""\b(?:i don'?t know the word|that'?s not a word i know|i don'?t recognise the word)"""
    r"""\s*["'`]?(\w+)""",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_ARTICLES = frozenset(["a", "an", "the", "some", "my", "your"])
_TOOL_WORDS = frozenset(["with", "using", "to", "into", "in", "on", "onto", "at", "from", "under"])
_PARTICLE_VERBS = frozenset(
    [
        "pick up",
        "put down",
        "look at",
        "look in",
        "look under",
        "turn on",
        "turn off",
        "switch on",
        "switch off",
        "climb up",
        "climb down",
        "climb on",
        "get in",
        "get on",
        "get out",
        "talk to",
        "listen to",
    ]
)
_QUOTED = re.compile(r"'([^'\n]{1,60})'")
_LEDGER = re.compile(r"^Tried here, did not work: (.+?)\.(?: The game said: .*)?$", re.DOTALL)


STATE_VERBS = frozenset(
    [
        "open", "unlock", "push", "pull", "move", "turn", "press", "lift", "raise", "lower",
        "light", "tie", "untie", "put", "insert", "give", "wave", "ring", "dig", "climb", "enter",
        "board", "close", "lock", "unlatch", "break", "cut", "burn", "fill", "pour", "drop",
        "wear", "remove", "inflate", "deflate", "set", "switch",
    ]
)
"""Verbs whose short answer ("Opened.") may change the world: candidate prerequisite steps."""


def first_sentences(text: str, count: int = 1, limit: int = 220) -> str:
    """The first `count` sentences of `text`, whitespace collapsed, at most `limit` chars."""
    flat = " ".join(text.split())
    picked = " ".join(_SENTENCE.split(flat)[:count])
    return picked if len(picked) <= limit else picked[: limit - 3].rstrip() + "..."


def is_failure(response: str) -> bool:
    """Whether a game response reads as a refusal or a failed action."""
    return bool(FAILURE_PATTERNS.search(response))


def unknown_word(response: str) -> str | None:
    """The word the game said it does not know ("I don't know the word 'xyzzy'."), if any."""
    found = UNKNOWN_WORD.search(response)
    return found.group(1).lower() if found else None


@dataclass(frozen=True)
class Command:
    """A player command read as verb + object (`unlock the door with key` -> unlock, door)."""

    verb: str
    object: str

    @classmethod
    def parse(cls, command: str) -> Command:
        """Split a command; the object drops articles and any tool clause (`with key`)."""
        words = command.lower().split()
        if not words:
            return cls("", "")
        verb_len = 2 if len(words) > 1 and " ".join(words[:2]) in _PARTICLE_VERBS else 1
        verb = " ".join(words[:verb_len])
        rest: list[str] = []
        for word in words[verb_len:]:
            if word in _TOOL_WORDS and rest:
                break
            if word in _ARTICLES or (word in _TOOL_WORDS and not rest):
                continue
            rest.append(word)
        return cls(verb, " ".join(rest))


def ledger_key(command: str) -> str:
    """What a failed command is filed under: its object, or "" for moves and bare verbs."""
    if normalize_direction(command) is not None:
        return ""
    return Command.parse(command).object


def changes_state(command: str) -> bool:
    """Whether a command's verb may change the world (see STATE_VERBS)."""
    words = command.lower().split()
    return bool(words) and words[0] in STATE_VERBS


def normalize_command(command: str) -> str:
    """A command as the ledger keeps it: lower case, single spaces."""
    return " ".join(command.lower().split())


def failure_title(commands: list[str]) -> str:
    """A player's title for failed commands on one object: "Take or break window".

    Commands with no object read "Tried: jump, xyzzy"; compass moves "No way: north, up".
    """
    if all(normalize_direction(c) is not None for c in commands):
        return "No way: " + ", ".join(commands)
    parsed = [Command.parse(c) for c in commands]
    thing = next((p.object for p in parsed if p.object), "")
    verbs = list(dict.fromkeys(p.verb for p in parsed if p.verb))
    if not thing:
        return "Tried: " + ", ".join(commands)
    joined = verbs[0] if len(verbs) == 1 else ", ".join(verbs[:-1]) + " or " + verbs[-1]
    return f"{joined[:1].upper()}{joined[1:]} {thing}"


def failure_text(commands: list[str], answer: str) -> str:
    """The ledger's text: every failed command quoted, then the game's last answer."""
    quoted = ", ".join(f"'{c}'" for c in commands)
    said = first_sentences(answer, count=2, limit=200)
    return f"Tried here, did not work: {quoted}." + (f' The game said: "{said}"' if said else "")


def failed_commands(text: str) -> list[str]:
    """The commands a ledger text lists (the inverse of `failure_text`); [] for other texts."""
    found = _LEDGER.match(text.strip())
    if not found:
        return []
    return [m.group(1) for m in _QUOTED.finditer(found.group(1))]


# -- the offline grammar of procedures and items: writers and their parsers, side by side ------

_COMMAND_QUOTE = re.compile(r"'([a-z][a-z0-9 \-]{1,40})'")
_STEPS = re.compile(r"Steps first: (.*?)\.?$")
_STEP = re.compile(r"\(\d+\) ([^,]+)")
_GOT = re.compile(r"^Got (.+)$")


def quoted_commands(text: str) -> list[str]:
    """Commands quoted in a memory text, in order (`'open window'` -> "open window")."""
    return [m.group(1).strip() for m in _COMMAND_QUOTE.finditer(text)]


def with_steps(text: str, steps: list[str]) -> str:
    """`text` with its prerequisite steps: "... Steps first: (1) open window."."""
    if not steps:
        return text
    numbered = ", ".join(f"({i}) {s}" for i, s in enumerate(steps, 1))
    return f"{text} Steps first: {numbered}."


def procedure_steps(text: str) -> list[str]:
    """The steps `with_steps` wrote (`Steps first: (1) a, (2) b.` -> [a, b])."""
    found = _STEPS.search(text)
    return [s.strip() for s in _STEP.findall(found.group(1))] if found else []


def got_title(items: list[str]) -> str:
    """The title of a memory of items taken here: "Got brass lantern, leaflet"."""
    return f"Got {', '.join(items)}"


def got_items(title: str) -> list[str]:
    """The items of a `got_title` ([] for other titles)."""
    found = _GOT.match(title)
    return found.group(1).split(", ") if found else []
