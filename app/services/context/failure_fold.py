"""Folding a room's failure ledgers into one block that lists every command that failed."""

from __future__ import annotations

from functools import lru_cache

from cairn.models.memory import MemoryCategory, MemoryEntry
from cairn.services.map import normalize_direction
from cairn.services.outcomes import Command, ledger_commands

_FOLD_TITLE = "[FAILURE] Did not work here"
_FOLD_LEAD = "Tried here, did not work:"


def _ledger(entry: MemoryEntry) -> list[str]:
    """The commands of a failure ledger (`outcomes.failure_text`), [] for any other memory."""
    if entry.category is not MemoryCategory.FAILURE:
        return []
    return ledger_commands(entry)


def _piece(entry: MemoryEntry) -> str:
    """A ledger's commands as the folded block lists them, the verbs on one thing together:
    `take/push/pull drawer`, `north/up`, `unlock door with key`."""
    return _commands_piece(tuple(_ledger(entry)))


@lru_cache(maxsize=4096)
def _commands_piece(commands: tuple[str, ...]) -> str:
    if all(normalize_direction(c) is not None for c in commands):
        return "/".join(commands)
    parsed = [Command.parse(c) for c in commands]
    thing = parsed[0].object if parsed else ""
    if thing and all(p.object == thing and f"{p.verb} {thing}" == c for p, c in zip(
        parsed, commands, strict=True
    )):
        return f"{'/'.join(p.verb for p in parsed)} {thing}"
    return "; ".join(commands)


def _episodes(entries: list[MemoryEntry]) -> str:
    """`(Ep1-3)` for the episodes of `entries`, "" when none is known."""
    found = sorted({e.episode for e in entries if e.episode is not None})
    if not found:
        return ""
    span = f"{found[0]}" if found[0] == found[-1] else f"{found[0]}-{found[-1]}"
    return f" (Ep{span})"


def _fold_head(entries: list[MemoryEntry]) -> str:
    return f"{_FOLD_TITLE}{_episodes(entries)}\n{_FOLD_LEAD} ."


def _folded(ledgers: list[MemoryEntry]) -> str:
    """Every failure ledger of a room as one block: one heading, then every command."""
    commands = "; ".join(_piece(e) for e in ledgers)
    return f"{_FOLD_TITLE}{_episodes(ledgers)}\n{_FOLD_LEAD} {commands}."
