"""A story file checked before an interpreter sees it: Frotz calls exit() on a malformed one,
which would end the whole process."""

from __future__ import annotations

from pathlib import Path

from cairn.adapters.input_files import MAX_STORY_BYTES, read_named_file
from cairn.errors import GameError

_Z_HEADER = 64
_LENGTH_SCALE = {1: 2, 2: 2, 3: 2, 4: 4, 5: 4, 6: 8, 7: 8, 8: 8}


def read_story_file(path: Path) -> bytes:
    """The bytes of the story file at `path`: GameError naming it when it is missing, cannot be
    read, is not a regular file (a FIFO would wait forever) or is over MAX_STORY_BYTES."""
    try:
        return read_named_file(
            path,
            what="story file",
            limit=MAX_STORY_BYTES,
            error=lambda problem: GameError(f"{path}: {problem}"),
        )
    except FileNotFoundError as exc:
        raise GameError(f"{path}: no such story file") from exc
    except OSError as exc:
        raise GameError(f"{path}: cannot read the story file: {exc.strerror or exc}") from exc


def check_story_file(path: Path) -> None:
    """Raise GameError unless `path` is a readable Z-machine story file Frotz will load.

    Frotz calls exit() on a bad story file, which would end the whole process.
    """
    data = read_story_file(path)
    if len(data) < _Z_HEADER or data[0] not in _LENGTH_SCALE:
        raise GameError(f"{path}: not a Z-machine story file")
    declared = int.from_bytes(data[0x1A:0x1C], "big") * _LENGTH_SCALE[data[0]]
    if declared > len(data):
        raise GameError(f"{path}: truncated story file ({len(data)} of {declared} bytes)")
