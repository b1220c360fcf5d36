"""A journal beside the archive (`.Memories.archive.md.snapshot`) that lets the archive be read
back without parsing it: the report, `memories show --all` and export read it whole.

Each time the store appends a part to the archive it appends one JSON line here: the archive's
size before and after the part, the SHA-256 digest of the part's bytes, and the part's memories
as the store's cache holds them (as the file keeps them: a parse of the part gives them back,
which folds rely on too, and a property test holds). A read takes the lines in order while each
starts where the last ended and its digest matches those bytes of the archive (together they
prove the archive up to the last one's end): their memories are validated from JSON (no
Markdown parse). Whatever follows (a part written before a crash could add its line, a part a
person appended, anything after an edit) is parsed as usual. A journal that does not read is
ignored and the archive parsed whole. Lines are not fsynced: a lost line only costs the next
read its speed.

The digests prove the archive is the one the lines were made from; the journal is cairn's own
file, and like the snapshot it is not a defence against someone who rewrites it on purpose.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from cairn.compact_json import compact_json
from cairn.file_names import snapshot_name
from cairn.models.memory import MemoryEntry

log = logging.getLogger(__name__)

JOURNAL_VERSION = 1


def journal_path(archive: Path) -> Path:
    """`.Memories.archive.md.snapshot` beside `Memories.archive.md`."""
    return archive.with_name(snapshot_name(archive.name))


def record_part(archive: Path, before: int, part: bytes, entries: list[MemoryEntry]) -> None:
    """After `part` was appended to `archive` at `before` bytes, add its line; a new archive
    starts a new journal. Failing to write it is no error."""
    line = compact_json(
        {
            "cairn_archive": JOURNAL_VERSION,
            "from": before,
            "to": before + len(part),
            "digest": hashlib.sha256(part).hexdigest(),
            "memories": [entry.model_dump(mode="json") for entry in entries],
        }
    )
    try:
        with open(journal_path(archive), "ab" if before else "wb") as handle:
            handle.write(line + b"\n")
    except OSError as e:
        log.info("%s: cannot write the archive's journal (%s); reads will parse", archive, e)


def read_journal(archive: Path, data: bytes) -> tuple[list[MemoryEntry], int]:
    """The memories of the archive's first bytes that the journal proves, in file order, and
    how many bytes it proves (0: parse the whole archive)."""
    try:
        lines = journal_path(archive).read_bytes().splitlines()
    except OSError:
        return [], 0
    found: list[MemoryEntry] = []
    covered = 0
    for raw in lines:
        part = _fields(raw)
        if part is None or part[0] != covered or part[1] > len(data):
            break
        entries = _proven(data, part)
        if entries is None:
            break
        found.extend(entries)
        covered = part[1]
    return _latest_of_each(found), covered


def read_journal_tail(archive: Path, data: bytes, newest: int) -> list[MemoryEntry] | None:
    """The memories of the archive's last parts, at least `newest` of them when it holds that
    many, in file order, read from the journal's last lines back (each proving its part's
    bytes, the last one ending at the archive's end); None when the lines do not prove the
    archive's end (a part without its line, an edit): then read it whole."""
    try:
        lines = journal_path(archive).read_bytes().splitlines()
    except OSError:
        return None
    parts: list[list[MemoryEntry]] = []
    end, count = len(data), 0
    for raw in reversed(lines):
        if count >= newest or end == 0:
            break
        part = _fields(raw)
        wanted = newest - count  # (a part archived at once: its last ones are as new as any)
        entries = _proven(data, part, wanted) if part is not None and part[1] == end else None
        if part is None or entries is None:
            return None
        parts.append(entries)
        count += len(entries)
        end = part[0]
    if count < newest and end != 0:
        return None  # the lines ran out before the archive's start: it is read whole
    return _latest_of_each([e for part in reversed(parts) for e in part])


def _latest_of_each(entries: list[MemoryEntry]) -> list[MemoryEntry]:
    """`entries` with one version of each memory archived twice: the later, as a parse of the
    archive (an appended part) reads it. A crash between the archive and the fold leaves two
    copies of one version; a memory a person's edit brought back and cairn archived again
    leaves its older version, then the person's."""
    if len({e.id for e in entries}) == len(entries):
        return entries
    return list({e.id: e for e in entries}.values())


_Part = tuple[int, int, str, list[Any]]
"""A journal line's part: where it starts and ends in the archive (bytes), the digest of
those bytes, its memories (as JSON)."""


def _fields(raw: bytes) -> _Part | None:
    """A journal line's part, or None for anything that is not one."""
    try:
        line = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(line, dict) or line.get("cairn_archive") != JOURNAL_VERSION:
        return None
    start, end, digest, memories = (line.get(k) for k in ("from", "to", "digest", "memories"))
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
        return None
    if isinstance(end, bool) or not 0 <= start < end:
        return None
    if not isinstance(digest, str) or not isinstance(memories, list):
        return None
    return start, end, digest, memories


def _proven(data: bytes, part: _Part, last: int | None = None) -> list[MemoryEntry] | None:
    """The part's memories (`last`: only its last that many) when its digest matches those
    bytes of the archive and they validate; else None."""
    start, end, digest, memories = part
    if end > len(data) or hashlib.sha256(data[start:end]).hexdigest() != digest:
        return None
    try:
        kept = memories if last is None else memories[-last:]
        return [MemoryEntry.model_validate(m) for m in kept]
    except (ValidationError, TypeError, ValueError):
        return None
