"""An editor's copy torn inside an append, read without the torn unit (rule 9 of the live-edit
protocol, `live_edit`).

A read may see any prefix of a write: an editor that opens Memories.md while cairn appends a
unit of work copies the unit cut short, and the person's text goes below it. Parsed as it is,
what the cut left of cairn's lines is a block or a section header that does not parse: kept
verbatim and reported (and a person's note under a cut section header is kept inside that
verbatim section, not read as a note). cairn knows the bytes it appended: a unit in a save that
never ended, whose bytes are the start of a unit this store appended, is taken out before the
save is parsed. Its memories are in the store (the unit was acknowledged), and the person's
text below it is read as it would be under the unit before.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from pathlib import Path

from cairn.adapters.storage.live_edit import UNIT_BYTES_KEPT
from cairn.adapters.storage.markdown_layout import COMMENT_START, UNIT_END, UNIT_START

log = logging.getLogger(__name__)

_START = UNIT_START.encode()
_END = UNIT_END.encode()
_COMMENT = COMMENT_START.encode()


class AppendedUnits:
    """The bytes of the units of work a store appended last (at most `UNIT_BYTES_KEPT`)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._units: deque[bytes] = deque()
        self._bytes = 0

    def __bool__(self) -> bool:
        return bool(self._units)

    def appended(self, data: bytes) -> None:
        """Remember a unit this store appended (`data`: the bytes written; the unit starts at
        its start marker), forgetting the oldest beyond `UNIT_BYTES_KEPT`."""
        at = data.find(_START)
        if at < 0:
            return
        unit = data[at:]
        self._units.append(unit)
        self._bytes += len(unit)
        while self._bytes > UNIT_BYTES_KEPT and len(self._units) > 1:
            self._bytes -= len(self._units.popleft())

    def without_torn(self, data: bytes) -> tuple[bytes, bool]:
        """`data` without the torn units it holds (see the module docstring), and whether it
        held any. A torn unit: from a start marker, bytes that begin one of the remembered
        units but stop before its end, with no end marker before the next start marker (or
        the end), and nothing of cairn's after them there (no cairn comment); or a line that
        is the start marker cut short (`_without_torn_marker`)."""
        if not self._units:
            return data, False
        data, found = _without_torn_marker(data, self._path)
        at = data.find(_START)
        while at >= 0:
            following = data.find(_START, at + len(_START))
            limit = len(data) if following < 0 else following
            cut = -1 if data.find(_END, at, limit) >= 0 else self._torn_length(data, at, limit)
            if cut > 0:
                data = data[:at] + data[at + cut :]
                found = True
                log.info(
                    "%s: a save carried %d bytes of a unit cairn was appending when the editor"
                    " read the file; not read (its memories are in the store)",
                    self._path,
                    cut,
                )
                following = data.find(_START, at)
            at = following
        return data, found

    def _torn_length(self, data: bytes, at: int, limit: int) -> int:
        """How many bytes from `at` are a torn copy of a remembered unit (ending at a line
        end, or where the person's line starts), 0 when none are."""
        best = 0
        for unit in self._units:
            shared = _shared_prefix(data, at, limit, unit)
            if shared < len(unit) and shared > best:
                best = shared
        if best < len(_START):
            return 0
        end = at + best
        if data[end : end + 1] not in (b"\n", b"\r", b"") and data[end - 1 : end] not in (
            b"\n",
            b"\r",
        ):
            # the person's line began on one that matched the unit's (`**[NOTE] `): keep it
            end = data.rfind(b"\n", at, end) + 1
        if _COMMENT in data[end:limit]:
            return 0  # more of cairn's below it: not a copy torn with a person's text after
        return end - at


def _shared_prefix(data: bytes, at: int, limit: int, unit: bytes) -> int:
    """The length of the longest prefix of `unit` that `data` holds from `at` (before
    `limit`)."""
    low, high = 0, min(len(unit), limit - at)
    while low < high:  # the longest n with data[at:at + n] == unit[:n]
        middle = (low + high + 1) // 2
        if data.startswith(unit[:middle], at):
            low = middle
        else:
            high = middle - 1
    return low


_MARKER_LINE = re.compile(rb"^(<![- a-z]{0,17})\r?$", re.MULTILINE)
"""A line that can be the start marker cut short, at least `<!` of it (a line holding only `<`
may be a person's arrow): checked against the marker itself in `_without_torn_marker`."""


def _without_torn_marker(data: bytes, path: Path) -> tuple[bytes, bool]:
    """`data` without a line that is the start marker cut short (a copy torn inside it), when
    what follows it, up to the next start marker, holds nothing of cairn's and closes no HTML
    comment (a person's `<!--` opening a comment of their own is kept)."""
    found = False
    for match in reversed(list(_MARKER_LINE.finditer(data))):
        line = match.group(1)
        if not _START.startswith(line) or line == _START:
            continue
        rest_end = data.find(_START, match.end())
        rest = data[match.end() : len(data) if rest_end < 0 else rest_end]
        if _COMMENT in rest or b"-->" in rest:
            continue
        end = match.end() + (1 if data[match.end() : match.end() + 1] == b"\n" else 0)
        data = data[: match.start()] + data[end:]
        found = True
        log.info("%s: a save carried the start of a unit cairn was appending; not read", path)
    return data, found
