"""Compass directions: the canonical list and how a command names one (`n`, `go ne`).

The vocabulary every layer shares: the map graph learns and routes in it, the map file is
checked against it, the offline summarizer and the players read commands with it.
"""

from __future__ import annotations

import re

# Canonical directions in the order they are listed everywhere (deterministic output).
DIRECTIONS: tuple[str, ...] = (
    "north",
    "south",
    "east",
    "west",
    "northeast",
    "northwest",
    "southeast",
    "southwest",
    "up",
    "down",
    "in",
    "out",
)
RANK = {d: i for i, d in enumerate(DIRECTIONS)}
"""A direction's place in `DIRECTIONS`."""

ALIASES: dict[str, str] = {
    "n": "north",
    "s": "south",
    "e": "east",
    "w": "west",
    "ne": "northeast",
    "nw": "northwest",
    "se": "southeast",
    "sw": "southwest",
    "north-east": "northeast",
    "north east": "northeast",
    "north-west": "northwest",
    "north west": "northwest",
    "south-east": "southeast",
    "south east": "southeast",
    "south-west": "southwest",
    "south west": "southwest",
    "u": "up",
    "d": "down",
    "upward": "up",
    "upwards": "up",
    "downward": "down",
    "downwards": "down",
    "inside": "in",
    "outside": "out",
    **{d: d for d in DIRECTIONS},
}
"""Every way a command names a direction, to the canonical direction."""

# Reverses assumed for inferred edges (in/out deliberately left out: often one-way, or leading
# elsewhere; see `cairn.services.map`).
OPPOSITE: dict[str, str] = {
    "north": "south",
    "south": "north",
    "east": "west",
    "west": "east",
    "northeast": "southwest",
    "southwest": "northeast",
    "northwest": "southeast",
    "southeast": "northwest",
    "up": "down",
    "down": "up",
}

_GO_PREFIX = re.compile(r"^(?:go|walk|run|head|move)\s+(?:to\s+(?:the\s+)?)?")


def normalize_action(action: str) -> str:
    """An action as a map label: lower case, whitespace collapsed, directions canonical."""
    cleaned = " ".join(action.lower().split())
    return normalize_direction(cleaned) or cleaned


def normalize_direction(action: str) -> str | None:
    """The canonical direction an action moves in (`n`, `go north` -> `north`), else None."""
    cleaned = " ".join(action.lower().split()).rstrip(".!")
    if cleaned in ALIASES:
        return ALIASES[cleaned]
    stripped = _GO_PREFIX.sub("", cleaned)
    return ALIASES.get(stripped) if stripped != cleaned else None


def direction_key(action: str) -> tuple[int, str]:
    """Sort key: directions in canonical order first, then other actions alphabetically."""
    return (RANK.get(action, len(DIRECTIONS)), action)
