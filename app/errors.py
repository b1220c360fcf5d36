"""The one error hierarchy of cairn; every error cairn raises on purpose is a CairnError."""

from __future__ import annotations

from pathlib import Path


class CairnError(Exception):
    """Base class of every error cairn raises on purpose."""


class ConfigError(CairnError):
    """Raised at start-up when a setting is missing or invalid; the message names the setting."""


class UnknownCommandError(CairnError):
    """Raised by the bus when a command has no registered handler."""


class InvalidLocationError(CairnError):
    """Raised when a location id is not an integer or names no known location."""


class StoreError(CairnError):
    """Raised when a memory store cannot be read or written."""


class StoreLockedError(StoreError):
    """Raised when the store's lock could not be taken within the configured timeout."""


class MemoryNotFoundError(StoreError):
    """Raised when an operation names a memory id the store does not hold."""


class MemoryFileError(StoreError):
    """Raised when a memory file has a problem that stops it from being used at all.

    Problems in single blocks do not raise: the block is kept verbatim and reported.
    """

    def __init__(self, path: Path, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")


class SummarizerError(CairnError):
    """Raised by a summarizer when it cannot produce a summary or synthesis."""
