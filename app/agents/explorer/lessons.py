"""What the memories the prompt shows say the offline player should or should not do next: the
ways into rooms to keep out of, the ways that need a step first, the changes memory already
knows of. Pure functions of memory entries (see `agent.py` for how the player uses them)."""

from __future__ import annotations

from cairn.agents.explorer.words import asked_first, normalize
from cairn.lessons import reading
from cairn.models.memory import MemoryCategory, MemoryEntry
from cairn.services.map import DIRECTIONS as MAP_DIRECTIONS
from cairn.services.outcomes import later_answers, quoted_commands


def ways_into(
    memories: list[MemoryEntry], here: int | None, rooms: dict[int, list[tuple[str, int]]]
) -> set[str]:
    """The moves from `here` into one of `rooms` (the ways in a lesson lists from here, and
    moves memory says lead there); none when the player is in one of them."""
    if here is None or here in rooms:
        return set()
    moves = {c for ways in rooms.values() for c, src in ways if src == here}
    moves |= {
        normalize(m.via)
        for m in memories
        if m.via and m.leads_to is not None and m.leads_to in rooms
    }
    return moves


def unknown_ways_where_died(
    endings: list[MemoryEntry], memories: list[MemoryEntry], here: int | None, dangers: set[str]
) -> set[str]:
    """In a room where an ending memory says the player died and blames no command for it
    ("Died in Misty Room at turn 76 (an event)"), the moves `memories` do not know lead on,
    when they know one: the player leaves by a known way rather than finding out again which
    way killed it. Empty anywhere else."""
    died = any(
        m.category is MemoryCategory.DANGER
        and m.location_id == here
        and "ending" in m.tags
        and "by '" not in m.title
        for m in endings
    )
    if here is None or not died:
        return set()
    known = {
        normalize(m.via)
        for m in memories
        if m.via and m.leads_to is not None and m.leads_to != here
    } - dangers
    return set(MAP_DIRECTIONS) - known if known else set()


def steps_first(memories: list[MemoryEntry], tried: dict[str, bool]) -> dict[str, str]:
    """The ways memory knows here that once answered what had to be done first ("Later, east:
    refused (...: "You have to open the gate first.")"), each with that step, while the step is
    untried (`tried`: this episode's commands here)."""
    return {
        normalize(m.via): step
        for m in memories
        if m.via
        for command, answer in later_answers(m.text)
        if normalize(command) == normalize(m.via)
        and (step := asked_first(answer)) is not None
        and step not in tried
    }


def known_commands(memories: list[MemoryEntry]) -> set[str]:
    """Commands memories other than failures quote here (what was done, a procedure's steps):
    a change one of them makes is no news, the failures memory lists were likely met after it
    too."""
    return {
        normalize(c)
        for m in memories
        if m.category is not MemoryCategory.FAILURE
        for c in [*quoted_commands(m.text), *reading.steps_first(m)]
    }
