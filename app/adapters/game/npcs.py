"""NPC matching: per-game NPC names against the room's objects and the game text.

Matching is case-insensitive and on word boundaries: "ogre" matches "A nasty-looking ogre"
and "Ogre", never "ogrets"; "bat" never matches "battery". A boundary is any character that
is not a letter, digit or underscore, so names that begin or end with punctuation ("Mr. Blue")
still match. Names keep the caller's spelling and order; duplicates and blank names are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _pattern(name: str) -> re.Pattern[str]:
    """A case-insensitive pattern for `name` as a whole word (or words)."""
    words = r"\s+".join(re.escape(word) for word in name.split())
    return re.compile(rf"(?<!\w){words}(?!\w)", re.IGNORECASE)


def _unique(names: Iterable[str]) -> list[str]:
    """The non-blank names, first spelling kept, case-insensitive duplicates dropped."""
    seen: set[str] = set()
    kept: list[str] = []
    for name in names:
        key = " ".join(name.lower().split())
        if key and key not in seen:
            seen.add(key)
            kept.append(name.strip())
    return kept


def npcs_in_text(names: Iterable[str], text: str) -> list[str]:
    """The names that occur in `text` as whole words."""
    return [name for name in _unique(names) if _pattern(name).search(text)]


def npcs_among_objects(names: Iterable[str], objects: Iterable[str]) -> list[str]:
    """The names that occur (as whole words) in at least one of the objects' names."""
    object_names = [o for o in objects if o.strip()]
    return [
        name for name in _unique(names) if any(_pattern(name).search(obj) for obj in object_names)
    ]


def match_npcs(
    names: Iterable[str], room_objects: Iterable[str], text: str
) -> tuple[list[str], list[str]]:
    """(present, mentioned): names found among the room's objects, and names found in the text."""
    wanted = _unique(names)
    return npcs_among_objects(wanted, room_objects), npcs_in_text(wanted, text)
