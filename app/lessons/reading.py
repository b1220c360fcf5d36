"""What a memory's lesson asks of whoever would replay it, read from its fields (the prose is
never parsed back): its steps, the items it needs held, those not held now."""

from __future__ import annotations

import re
from collections.abc import Sequence

from cairn.models.memory import MemoryEntry

_WORD = re.compile(r"[a-z][a-z\-']*")
_LEAD = frozenset(["a", "an", "the", "some", "your", "my", "pair", "of"])


def steps_first(memory: MemoryEntry) -> list[str]:
    """The steps the memory's lesson says come first ([] without a lesson)."""
    return list(memory.lesson.steps_first) if memory.lesson is not None else []


def needs_held(memory: MemoryEntry) -> list[str]:
    """The items the memory's lesson says must be held ([] without a lesson)."""
    return list(memory.lesson.needs_held) if memory.lesson is not None else []


def holds(item: str, inventory: Sequence[str]) -> bool:
    """Whether `inventory` holds `item`: the same name, or a name sharing its last word (its
    noun: "lantern" is held as "brass lantern", "brass lantern" as "lantern")."""
    wanted = item.lower().strip()
    noun = noun_of(wanted)
    for name in inventory:
        held = name.lower().strip()
        if held == wanted or (noun is not None and noun == noun_of(held)):
            return True
    return False


def missing(memory: MemoryEntry, inventory: Sequence[str]) -> list[str]:
    """The items the memory's lesson needs held that `inventory` does not hold."""
    return [item for item in needs_held(memory) if not holds(item, inventory)]


def noun_of(name: str) -> str | None:
    """The noun of an item's name, lower case: its last word but articles ("a pair of
    boots" -> boots; "key with a tag" -> key)."""
    words = [w for w in _WORD.findall(name.split(" with ")[0]) if w not in _LEAD]
    return words[-1] if words else None
