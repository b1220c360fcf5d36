"""The adventurer's memory context with its slow-changing sections first, for the prompt cache.

The API caches a prompt's prefix: sections that repeat from one turn to the next are read
back cheaply only when nothing before them changed. The context service orders sections by
importance (what a tight budget keeps); the adventurer shows the same sections, the ones that
change seldom first: the most important memories (they change when a more important one is
written), then the room's and its neighbours' memories (they change when the room does), then
the turn-by-turn ones (recent actions and reasoning, a window that slides every turn). Only
the order changes: every section's text is kept as it is.
"""

from __future__ import annotations

import re

from cairn.services.context.adjacent_memory import AdjacentMemoryBuilder
from cairn.services.context.location_memory import LocationMemoryBuilder
from cairn.services.context.top_notes import TopNotesBuilder

STABLE_FIRST: tuple[str, ...] = (
    TopNotesBuilder.default_title,
    LocationMemoryBuilder.default_title,
    AdjacentMemoryBuilder.default_title,
)
"""Section titles, most lasting first; other sections follow in the order they came."""

_SECTION = re.compile(r"\n\n(?=## )")


def stable_first(context: str, order: tuple[str, ...] = STABLE_FIRST) -> str:
    """`context` (sections rendered `## title` and joined by blank lines) with the sections
    titled in `order` moved to the front in that order; unchanged when it is not made of such
    sections, or holds a title twice."""
    sections = _SECTION.split(context)
    titles = [s.split("\n", 1)[0].removeprefix("## ") for s in sections]
    if not all(s.startswith("## ") for s in sections) or len(set(titles)) != len(titles):
        return context
    rank = {title: place for place, title in enumerate(order)}
    ordered = sorted(range(len(sections)), key=lambda i: (rank.get(titles[i], len(order)), i))
    return "\n\n".join(sections[i] for i in ordered)
