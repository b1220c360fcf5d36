"""The offline player's notes on rooms with no way out: written (`trap_note`, `way_out_note`)
with their fields (tags `trap:<room>` / `way-out:<room>`, the ways in), and read back
(`trap_rooms`: from the fields; an older note, from its text)."""

from __future__ import annotations

import re

from cairn.models.memory import MemoryEntry
from cairn.services.causes import WayIn, ways_in, with_ways_in

_TRAP = re.compile(r"^No way out of .*?\(L(-?\d+)\) was found\b")
_WAY_OUT = re.compile(r"^A way out of .*?\(L(-?\d+)\) was found\b")


def trap_note(name: str, room: int, ways: list[WayIn], episode: int, turn: int) -> str:
    """The player's note on a room it could not leave: every move and every way out of a
    position failed there ("No way out of <room> (L<id>) was found: ... Ways in: '<move>' from
    <room> (L<id>)."). Its ways in are kept out of (`trap_rooms`)."""
    text = (
        f"No way out of {name or 'this room'} (L{room}) was found: every move and every way"
        f" out of a position tried there failed (Ep{episode}, T{turn})."
    )
    return with_ways_in(text, ways)


def way_out_note(name: str, room: int, command: str, episode: int, turn: int) -> str:
    """The player's note when it did leave a room noted as a trap (`trap_note`)."""
    return (
        f"A way out of {name or 'this room'} (L{room}) was found: '{command}'"
        f" (Ep{episode}, T{turn})."
    )


TRAP_TAG = "trap:"
"""A trap note's tag (`trap:<room id>`): the room no way out of was found; its `ways_in`."""
WAY_OUT_TAG = "way-out:"
"""A way-out note's tag (`way-out:<room id>`): a way out of a trap room was found."""


def _tagged(memory: MemoryEntry, prefix: str) -> int | None:
    for tag in memory.tags:
        if tag.startswith(prefix) and tag[len(prefix) :].lstrip("-").isdigit():
            return int(tag[len(prefix) :])
    return None


def trap_rooms(memories: list[MemoryEntry]) -> dict[int, list[tuple[str, int]]]:
    """Rooms the player's notes say it could not leave (`trap_note`), each with the ways in
    they list, unless a later note says a way out was found. Read from the notes' fields (their
    tags and `ways_in`); an older note without them, from its text."""
    found: dict[int, list[tuple[str, int]]] = {}
    freed: set[int] = set()
    for memory in memories:
        if (room := _tagged(memory, WAY_OUT_TAG)) is not None:
            freed.add(room)
        elif (room := _tagged(memory, TRAP_TAG)) is not None:
            ways = found.setdefault(room, [])
            ways.extend(w for w in ((v.command, v.source) for v in memory.ways_in) if w not in ways)
        elif (out := _WAY_OUT.match(memory.text)) is not None:
            freed.add(int(out.group(1)))
        elif (trap := _TRAP.match(memory.text)) is not None:
            ways = found.setdefault(int(trap.group(1)), [])
            ways.extend(w for w in ways_in(memory.text) if w not in ways)
    return {room: ways for room, ways in found.items() if room not in freed}
