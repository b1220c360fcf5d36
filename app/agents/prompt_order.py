"""The adventurer's turn message: its sections in the order a model reads well, each fenced.

The context service orders sections by importance (what a tight budget keeps); the model reads
them in the order of a turn: the room now, what happened last turn, the lessons learned here
and next door (then the other most important ones), the map near the player, the route earlier
games found. Only the order changes: every section's text is kept as it is. The stable part of
the request (the tools, the system prompt) comes before it, where the API's prompt cache can
serve it (`adapters/llm/prompt_cache.py`).

Every section's text is data, fenced so that nothing in it can pass for an instruction: the
game's own words (the room, the last turn) in `<game_text>`, the rest (memories, the map, the
route) in `<memories>`; a closing tag inside a text cannot end its fence early (`as_data`).
"""

from __future__ import annotations

import re

from cairn.agents.data_fence import as_data
from cairn.services.context.context_service import (
    LESSONS_HERE,
    LESSONS_NEXT_DOOR,
    OTHER_LESSONS,
    ROUTE,
)
from cairn.services.context.map_builders import NearbyMapBuilder
from cairn.services.context.room_builders import LastTurnBuilder, NearMapBuilder, RoomNowBuilder

GAME_SAID = "What the game just said"
"""The section the adventurer adds with the game's text when its context has neither the
room's nor the last turn's (a context of the library user's own)."""

READING_ORDER: tuple[str, ...] = (
    GAME_SAID,
    RoomNowBuilder.default_title,
    LastTurnBuilder.default_title,
    LESSONS_HERE,
    LESSONS_NEXT_DOOR,
    OTHER_LESSONS,
    NearMapBuilder.default_title,
    NearbyMapBuilder.default_title,
    ROUTE,
)
"""Section titles in the order the adventurer reads them; other sections follow in the order
they came."""

GAME_TEXT_SECTIONS = frozenset(
    {GAME_SAID, RoomNowBuilder.default_title, LastTurnBuilder.default_title}
)
"""The sections that hold the game's own words (fenced as `game_text`, the rest `memories`)."""

_SECTION = re.compile(r"\n\n(?=## )")


def sections_of(context: str) -> list[tuple[str, str]] | None:
    """(title, body) of each `## title` section of `context`, in order; None when `context`
    is not made of such sections or holds a title twice."""
    parts = _SECTION.split(context)
    if not all(p.startswith("## ") for p in parts):
        return None
    found = [(h.removeprefix("## "), body) for h, _, body in (p.partition("\n") for p in parts)]
    titles = [title for title, _ in found]
    return found if len(set(titles)) == len(titles) else None


def reading_order(context: str, order: tuple[str, ...] = READING_ORDER) -> str:
    """`context` with the sections titled in `order` first, in that order; unchanged when it
    is not made of `## title` sections, or holds a title twice."""
    found = sections_of(context)
    if found is None:
        return context
    rank = {title: place for place, title in enumerate(order)}
    ranked = sorted(range(len(found)), key=lambda i: (rank.get(found[i][0], len(order)), i))
    return "\n\n".join(f"## {found[i][0]}\n{found[i][1]}" for i in ranked)


def fenced(context: str) -> str:
    """`context` in reading order with each section's text fenced (see the module docstring);
    a context not made of sections is fenced whole as memories."""
    ordered = reading_order(context)
    found = sections_of(ordered)
    if found is None:
        return f"<memories>\n{as_data(ordered, 'memories')}\n</memories>"
    blocks = []
    for title, body in found:
        fence = "game_text" if title in GAME_TEXT_SECTIONS else "memories"
        blocks.append(f"## {title}\n<{fence}>\n{as_data(body, fence)}\n</{fence}>")
    return "\n\n".join(blocks)
