"""The names of the files that go with a Memories.md: its archive and its snapshot."""

from __future__ import annotations


def archive_name(name: str) -> str:
    """`Memories.md` -> `Memories.archive.md` (`notes` -> `notes.archive`): SUPERSEDED
    memories moved out of play when an episode ended."""
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}.archive.{suffix}" if dot and stem else f"{name}.archive"


def snapshot_name(name: str) -> str:
    """`Memories.md` -> `.Memories.md.snapshot`: the index a load reads instead of parsing."""
    return f".{name}.snapshot"
