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

from cairn.adapters.storage.companions import snapshot_name
from cairn.compact_json import compact_json
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
        part = _part(raw, covered, len(data))
        if part is None or hashlib.sha256(data[covered : part[0]]).hexdigest() != part[1]:
            break
        try:
            entries = [MemoryEntry.model_validate(m) for m in part[2]]
        except (ValidationError, TypeError, ValueError):
            break
        found.extend(entries)
        covered = part[0]
    if len({e.id for e in found}) < len(found):  # archived twice (a crash before a fold)
        first: dict[str, MemoryEntry] = {}
        for entry in found:
            first.setdefault(entry.id, entry)  # the first, as a parse keeps it
        found = list(first.values())
    return found, covered


def _part(raw: bytes, start: int, size: int) -> tuple[int, str, list[Any]] | None:
    """A line's (end, digest, memories) when it is a journal line that starts at `start`
    and ends within `size` bytes; None for anything else."""
    try:
        line = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(line, dict) or line.get("cairn_archive") != JOURNAL_VERSION:
        return None
    end, digest, memories = line.get("to"), line.get("digest"), line.get("memories")
    if line.get("from") != start or not isinstance(end, int) or isinstance(end, bool):
        return None
    if not start < end <= size or not isinstance(digest, str) or not isinstance(memories, list):
        return None
    return end, digest, memories
