"""Exits a room text mentions ("Passages lead north and east")."""

from __future__ import annotations

import re
from functools import lru_cache

from cairn.models.directions import ALIASES, OPPOSITE, RANK

# -- finding exits in room text --------------------------------------------------------------

_DIR_WORD = (
    r"(?:north(?:[- ]?(?:east|west))?|south(?:[- ]?(?:east|west))?|east|west"
    r"|(?:north|south|east|west)wards?|upwards?|downwards?|up|down)"
)
_DIR_LIST = rf"{_DIR_WORD}(?:\s*(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)(?:the\s+)?{_DIR_WORD})*"
_VERBS = (
    r"(?:leads?|leading|goes|going|heads?|heading|runs?|running|winds?|winding|continues"
    r"|continuing|extends?|extending|climbs?|climbing|descends?|descending|ascends?|ascending"
    r"|stretch(?:es)?|stretching|bends?|bending|turns?|turning|curves?|curving|slopes?|sloping"
    r"|exits?)"
)
# "leads north", "winding north and east", "goes up": verb, an optional adverb, directions.
_VERB_PATTERN = re.compile(
    rf"\b{_VERBS}\s+(?:(?:off|away|steeply|gently|back|on)\s+)?(?P<dirs>{_DIR_LIST})\b"
)
# "to the south", "towards the east and west"; not "to the north side of the house".
_TO_THE_PATTERN = re.compile(
    rf"\b(?:to|towards?)\s+the\s+(?P<dirs>{_DIR_LIST})\b"
    r"(?!\s+(?:side|wall|edge|end|bank|shore|face|corner|part|half|of)\b)"
)
# "Exits: east and west", "Obvious exits are north, south", "you can go north or east".
_LIST_PATTERN = re.compile(
    rf"\b(?:exits?\s*(?:are|is|:)|(?:can|could|may)\s+go)\s*(?P<dirs>{_DIR_LIST})\b"
)
# "the north or west exits", "an east exit".
_EXITS_AFTER_PATTERN = re.compile(rf"\b(?P<dirs>{_DIR_LIST})\s+(?:exits?|doorways?)\b")
# "heads north-south", "an east-west passage": a hyphenated pair of opposite directions.
_PAIR_PATTERN = re.compile(
    r"\b(north|south|east|west|northeast|northwest|southeast|southwest)"
    r"-(north|south|east|west|northeast|northwest|southeast|southwest)\b"
)
_SINGLE_DIR = re.compile(_DIR_WORD)


def _canonical_word(word: str) -> str | None:
    """`north-east` -> northeast, `northwards` -> north, `upward` -> up."""
    word = re.sub(r"wards?$", "", word.lower())
    return ALIASES.get(word)


def exits_in_text(text: str) -> list[str]:
    """Compass directions a typical IF room description presents as ways out, canonical order.

    Conservative: a direction counts only in an exit phrase ("a path leads south", "to the
    east", "exits: north and west", "you can go up", "the north or west exits", "heads
    north-south"); a bare mention ("the north side of a white house", "west of a house") does
    not. in/out are never reported (too ambiguous in prose).
    """
    return list(_exits_in_text(text))


@lru_cache(maxsize=1024)
def _exits_in_text(text: str) -> tuple[str, ...]:
    """`exits_in_text`, kept by text (a room's description comes back on every visit)."""
    lowered = text.lower()
    found: set[str] = set()
    for pattern in (_VERB_PATTERN, _TO_THE_PATTERN, _LIST_PATTERN, _EXITS_AFTER_PATTERN):
        for match in pattern.finditer(lowered):
            for word in _SINGLE_DIR.findall(match.group("dirs")):
                direction = _canonical_word(word)
                if direction is not None:
                    found.add(direction)
    for match in _PAIR_PATTERN.finditer(lowered):
        first, second = match.group(1), match.group(2)
        if OPPOSITE.get(first) == second:
            found.update((first, second))
    return tuple(sorted(found, key=RANK.__getitem__))
