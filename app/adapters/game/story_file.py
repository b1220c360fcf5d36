"""A story file checked before an interpreter sees it: Frotz calls exit() on a malformed one,
which would end the whole process."""

from __future__ import annotations

from pathlib import Path

from cairn.errors import GameError

_Z_HEADER = 64
_LENGTH_SCALE = {1: 2, 2: 2, 3: 2, 4: 4, 5: 4, 6: 8, 7: 8, 8: 8}


def check_story_file(path: Path) -> None:
    """Raise GameError unless `path` is a readable Z-machine story file Frotz will load.

    Frotz calls exit() on a bad story file, which would end the whole process.
    """
    if not path.is_file():
        raise GameError(f"{path}: no such story file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GameError(f"{path}: cannot read the story file: {exc}") from exc
    if len(data) < _Z_HEADER or data[0] not in _LENGTH_SCALE:
        raise GameError(f"{path}: not a Z-machine story file")
    declared = int.from_bytes(data[0x1A:0x1C], "big") * _LENGTH_SCALE[data[0]]
    if declared > len(data):
        raise GameError(f"{path}: truncated story file ({len(data)} of {declared} bytes)")
