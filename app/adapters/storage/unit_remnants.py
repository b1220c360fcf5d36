"""What a save in place leaves of a unit cairn was appending, and a later save read without it
(rule 6 of the live-edit protocol, `live_edit`)."""

from __future__ import annotations

import logging
import os
from collections import deque
from pathlib import Path

from cairn.adapters.storage.file_swap import Signature
from cairn.adapters.storage.live_edit import REMNANTS_KEPT

log = logging.getLogger(__name__)


class Remnants:
    """The bytes of units a store found left after a save's text and did not read (see
    `remnant`): a copy an editor took while they stood there carries them."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._kept: deque[bytes] = deque(maxlen=REMNANTS_KEPT)

    def __bool__(self) -> bool:
        return bool(self._kept)

    def append(self, remnant: bytes) -> None:
        """Remember a remnant (without its last line end), forgetting the oldest beyond
        `REMNANTS_KEPT`."""
        self._kept.append(remnant)

    def cut(self, data: bytes, written: tuple[int, bytes]) -> int | None:
        """Where what is left of the unit `written` (where it landed, its bytes) starts in
        `data`, the file as a save in place left it (`remnant`); None when nothing is. What is
        left is remembered when it can be told apart, and is not read."""
        cut = remnant(data, *written)
        if cut is not None:
            if b"<!-- cairn " in data[cut:]:  # (one too short to tell apart is not kept)
                self.append(data[cut:].rstrip(b"\r\n"))
            log.info(
                "%s: a save in place met a unit cairn was appending; the %d bytes of it"
                " left after the saved text are dropped (its memories are kept)",
                self._path,
                len(data) - cut,
            )
        return cut

    def without(self, data: bytes) -> tuple[bytes, bool]:
        """`data` without the remnants it holds (each whole, at a line's start), and whether
        it held any: an editor's copy of the file taken while one stood after the saved text,
        saved since, would keep it as text that does not parse (and a section header in it
        would take in every block below)."""
        found = False
        for remnant in self._kept:  # (each without its last line end: an editor may
            at = data.find(remnant)  # have taken it off, adding text after it)
            end = at + len(remnant)
            if at < 0 or (at and data[at - 1 : at] != b"\n") or data[end : end + 1] not in b"\r\n":
                continue
            data = data[:at] + data[end:]
            found = True
            log.info(
                "%s: a save carried %d bytes of a unit cairn had appended (left after a save in"
                " place, and copied by an editor then); not read, and written again without",
                self._path,
                len(remnant),
            )
        return data, found


def landed(fd: int, data: bytes, before: Signature) -> tuple[int, bytes] | None:
    """Where the unit just written (`data`) landed, when the file was shorter then than
    at the check (`before`): a save in place (truncate, then write) was under way, and its
    rest may have been written over the unit's start (see `remnant`). None otherwise."""
    try:
        at = os.lseek(fd, 0, os.SEEK_CUR) - len(data)  # (O_APPEND: it went to the end)
    except OSError:
        return None
    return (at, data) if 0 <= at < before[1] else None


def remnant(data: bytes, landed: int, unit: bytes) -> int | None:
    """Where what is left of a unit appended during a save in place starts in `data` (the
    file as it is now), or None when nothing is. The unit (`unit`) landed at byte `landed`,
    in a file the save had cut short; the file is as long as when the unit was written. The
    save may have finished before the unit landed (the unit stands whole after the saved
    text), or written its rest over the unit's start (the unit's end stands after it): the
    cut then falls at the end of a line (a saved Memories.md ends with one), at or before
    where the saved text ends (bytes the saved text shares with the unit at the same places
    are the unit's own)."""
    end = landed + len(unit)
    if len(data) != end:
        return None  # changed since
    if data[landed:] == unit:
        return landed
    start = end
    while start > landed and data[start - 1] == unit[start - 1 - landed]:
        start -= 1
    if start == end:
        return None  # the file does not end with the unit's end
    line_end = data.find(b"\n", start - 1)
    return line_end + 1 if 0 <= line_end < end - 1 else None
