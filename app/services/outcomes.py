"""What a turn did and what a game's answer means: the outcome (state first, words second),
commands' objects, and the failure ledger.

`verdict` decides an outcome from what changed first: the location, the score, the inventory and
the game's world (the object tree, `TurnOutcome.world_changed`). Any change means the action did
something: never a failure, whatever the words say. Only when nothing changed do the words decide
between the outcomes the state leaves open: FAILURE (a refusal, plain or polite), NO_OP (it was
already so: "You already have that!", a `take` of a thing already held, or one refused for what
the player carries: "Your load is too heavy.") and NEUTRAL (nothing
refused). Commands that only observe or pass time (`look`, `wait`, `z`, `inventory`, `score`) are
never failures; reading ones (`examine`, `read`, `look at`, `listen`) fail only when their thing
is not there. When the game cannot say whether its world changed (`world_changed` None), the
location, score and inventory are the state and the words decide the rest. The word classes are
in `replies.py`.

The failure ledger's sentence format and its parser live here together, so a memory written by
one is read back by the other (see `tests/unit/test_outcomes.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from cairn.models.game import TurnOutcome
from cairn.models.memory import Ledger, MemoryCategory, MemoryEntry
from cairn.services.map import normalize_direction
from cairn.services.replies import (
    NO_NEED,
    absent,
    declined,
    first_sentence,
    overloaded,
    refused,
    reply,
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
_LEDGER_ANSWER = re.compile(r' The game said: "(.*)"$', re.DOTALL)


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
    """Whether a game response reads as a refusal, by its words alone (see `replies.refused`);
    `verdict` reads the state first and should be preferred wherever a turn is known."""
    return refused(reply(response))


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


# -- the outcome of a turn: state first, words second (see the module docstring) -------------


class Verdict(StrEnum):
    """What a turn did."""

    CHANGED = "changed"
    """The location, score, inventory or world changed: the action did something."""
    NEUTRAL = "neutral"
    """Nothing changed and nothing was refused: an observation, a wait, an answer."""
    NO_OP = "no_op"
    """Nothing changed because it already was so: "You already have that!"."""
    FAILURE = "failure"
    """Nothing changed and the game refused: "You can't go that way.", "There's no need"."""


NEVER_FAIL_VERBS = frozenset(
    [
        "look", "l", "wait", "z", "inventory", "i", "inv", "score", "fullscore", "full",
        "diagnose", "verbose", "brief", "superbrief", "notify", "save", "restore", "help",
        "hint", "hints", "about", "info", "credits", "version", "time",
    ]
)
"""Commands that observe or pass time: never a failure (`look`/`l` with an object reads)."""
READING_VERBS = frozenset(
    [
        "examine", "x", "read", "look at", "look in", "look under", "look", "l", "search",
        "listen", "listen to", "smell", "check", "inspect", "watch", "describe",
    ]
)
"""Commands that read a thing: they fail only when the thing is not there."""
TAKE_VERBS = frozenset(["take", "get", "pick up", "grab", "carry", "steal"])


def verdict(outcome: TurnOutcome) -> Verdict:
    """What the turn did: the state decides first, the words only what it leaves open."""
    if (
        outcome.moved
        or outcome.score_delta != 0
        or outcome.inventory_changed
        or outcome.world_changed
    ):
        return Verdict.CHANGED
    command = Command.parse(outcome.action)
    if command.verb in NEVER_FAIL_VERBS and not (command.verb in ("look", "l") and command.object):
        return Verdict.NEUTRAL
    words = reply(outcome.response)
    unknown = unknown_word(outcome.response) is not None
    if command.verb in READING_VERBS:
        return Verdict.FAILURE if unknown or absent(words) else Verdict.NEUTRAL
    if held_already(command, outcome.inventory_before) or (declined(words) and not unknown):
        return Verdict.NO_OP
    if command.verb in TAKE_VERBS and overloaded(words):
        return Verdict.NO_OP  # about what the player holds: dropping something makes it work
    return Verdict.FAILURE if unknown or refused(words) else Verdict.NEUTRAL


def did_something(outcome: TurnOutcome) -> bool:
    """Whether a turn counts as a step that worked: its state changed, or, when the game cannot
    say whether its world changed, its words did not refuse."""
    found = verdict(outcome)
    if outcome.world_changed is not None:
        return found is Verdict.CHANGED
    return found in (Verdict.CHANGED, Verdict.NEUTRAL)


_POSSESSION = re.compile(
    r"\byou(?:'ve|'re| are| have)? already (?:have|got|hold|holding|carry|carrying|own)\b",
    re.IGNORECASE,
)
"""An answer that the player holds the thing already: a no-op about the player, not the place."""


def lasting_no_op(outcome: TurnOutcome) -> bool:
    """A turn that did nothing because the place already was so ("It is already open.", "You
    are already standing."): the same answer comes again at the same point of every episode,
    so the failure ledger files it (a later success here takes it out again). Never a take of
    a thing held ("You already have that!" is about what the player holds, not the place),
    an unknown word (the game's vocabulary) or an ending."""
    if outcome.died or outcome.won or "'" in outcome.action:
        return False
    if verdict(outcome) is not Verdict.NO_OP:
        return False
    command = Command.parse(outcome.action)
    if command.verb in TAKE_VERBS and (
        held_already(command, outcome.inventory_before)
        or _POSSESSION.search(outcome.response)
        or overloaded(reply(outcome.response))
    ):
        return False
    return unknown_word(outcome.response) is None


def held_already(command: Command, inventory: list[str]) -> bool:
    """Whether `command` takes a thing the player already holds (by its words)."""
    if command.verb not in TAKE_VERBS or not command.object:
        return False
    wanted = command.object.split()
    return any(set(wanted) <= set(item.lower().split()) for item in inventory)


def why_not(outcome: TurnOutcome) -> str:
    """Why a turn did nothing, in a few words an agent can act on: "already held", "too much
    carried", "already so", "no leaflet in sight", "locked", "no need", "unknown word 'xyzzy'",
    "refused"."""
    command = Command.parse(outcome.action)
    words = reply(outcome.response)
    unknown = unknown_word(outcome.response)
    if held_already(command, outcome.inventory_before):
        return "already held"
    if command.verb in TAKE_VERBS and overloaded(words):
        return "too much carried"
    if unknown is not None:
        return f"unknown word '{unknown}'"
    if declined(words):
        return "already so"
    if absent(words):
        return f"no {command.object} in sight" if command.object else "nothing there"
    if NO_NEED.search(words):
        return "no need"
    if re.search(r"\block(?:ed)?\b", words, re.IGNORECASE):
        return "locked"
    return "refused" if refused(words) else "nothing happened"


def action_key(command: str) -> str:
    """What makes two commands the same action: `n` is `north`, `get leaflet` is `take leaflet`."""
    direction = normalize_direction(command)
    if direction is not None:
        return direction
    parsed = Command.parse(command)
    if parsed.verb in TAKE_VERBS and parsed.object:
        return f"take {parsed.object}"
    return normalize_command(command)


def said(response: str) -> str:
    """The game's reply in one sentence, for a memory ("You already have that!")."""
    return first_sentences(first_sentence(reply(response)) or response, count=1, limit=160)


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
    return render_ledger(ledger_of_commands(commands, answer))


def ledger_of_commands(commands: list[str], answer: str) -> Ledger:
    """A ledger's fields: its commands and the first sentences of the game's answer."""
    return Ledger(commands=list(commands), answer=first_sentences(answer, count=2, limit=200))


def render_ledger(ledger: Ledger) -> str:
    """A ledger's prose, rendered from its fields: "Tried here, did not work: 'a', 'b'. The
    game said: "..."" (never parsed back but from an older file)."""
    quoted = ", ".join(f"'{c}'" for c in ledger.commands)
    said = ledger.answer
    return f"Tried here, did not work: {quoted}." + (f' The game said: "{said}"' if said else "")


def ledger_commands(entry: MemoryEntry) -> list[str]:
    """The commands a failure ledger lists: its fields; a FAILURE memory without them (an
    older file's ledger, one written by hand) is read from its text; [] for any other."""
    if entry.ledger is not None:
        return list(entry.ledger.commands)
    if entry.category is not MemoryCategory.FAILURE:
        return []
    return failed_commands(entry.text)


def ledger_last_answer(entry: MemoryEntry) -> str:
    """The game's last answer a failure ledger keeps ("" when none)."""
    if entry.ledger is not None:
        return entry.ledger.answer
    return ledger_answer(entry.text)


def failed_commands(text: str) -> list[str]:
    """The commands a ledger text lists (the inverse of `failure_text`); [] for other texts:
    how an older file's ledger, written before its fields, is read."""
    found = _LEDGER.match(text.strip())
    if not found:
        return []
    return [m.group(1) for m in _QUOTED.finditer(found.group(1))]


def ledger_answer(text: str) -> str:
    """The game's last answer a ledger text quotes (`failure_text`), "" when none."""
    found = _LEDGER_ANSWER.search(text.strip())
    return found.group(1) if found else ""


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


def with_note(text: str, note: str) -> str:
    """`text` with `note` added as a sentence, before its steps (`with_steps` stay last)."""
    note = note.strip()
    if not note:
        return text
    found = _STEPS.search(text)
    if found is None:
        return f"{text.rstrip()} {note}"
    return f"{text[: found.start()].rstrip()} {note} {text[found.start() :]}"


def later_note(command: str, reason: str, answer: str, episode: int, turn: int) -> str:
    """What differed when `command` later did nothing here: "Later, take leaflet: already held
    (Ep2, T1: "You already have that!")."."""
    where = f"Ep{episode}, T{turn}" + (f': "{answer}"' if answer else "")
    return f"Later, {normalize_command(command)}: {reason} ({where})."


_LATER = re.compile(
    r"\bLater, ([a-z0-9][a-z0-9 \-]{0,60}): ([^(]+?) \(Ep\d+, T\d+(?:: \"([^\"]*)\")?\)"
)


def later_notes(text: str) -> list[tuple[str, str]]:
    """The (command, reason) pairs `later_note` wrote into a memory's text."""
    return [(m.group(1).strip(), m.group(2).strip()) for m in _LATER.finditer(text)]


def later_answers(text: str) -> list[tuple[str, str]]:
    """The (command, the game's answer) pairs `later_note` wrote into a memory's text."""
    return [(m.group(1).strip(), m.group(3) or "") for m in _LATER.finditer(text)]


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
