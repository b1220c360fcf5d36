"""NPC matching: per-game names against the room's objects and the game text, on word boundaries."""

from __future__ import annotations

import re
from collections.abc import Iterable


def _mentions(name: str, text: str) -> bool:
    return re.search(rf"\b{re.escape(name.lower())}\b", text.lower()) is not None


def match_npcs(
    names: Iterable[str], room_objects: Iterable[str], text: str
) -> tuple[list[str], list[str]]:
    """(present, mentioned): names found among the room's objects, and names found in the text."""
    objects = " | ".join(room_objects)
    present, mentioned = [], []
    for name in names:
        if _mentions(name, objects):
            present.append(name)
        if _mentions(name, text):
            mentioned.append(name)
    return present, mentioned
