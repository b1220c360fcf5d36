"""A snapshot of Memories.md's index, kept beside it so that opening the store does not parse
and validate every memory again.

When the markdown store writes the whole file (a fold) it also writes `.NAME.snapshot`: the
digest and size of the bytes it wrote, the cache's index (store order, the lists per room, NPC
and section, the ranking), the location records, and where each memory's block lies in the
file. On load, a snapshot whose digest matches the file's first `size` bytes *proves* those
bytes are the ones the index was made from: nobody edited them. The store then takes the index
as it is and reads each memory from its block only when it is first asked for (through the
same parser and validation as a full load); the file's recent part, appended after the fold,
is parsed as usual on top. Any other file (edited, older, written by another tool, CRLF or with
a byte-order mark) is parsed whole, and a snapshot that cannot be read is ignored.

Appends extend it (`Journal`): each unit of work the store appends to the file after the fold
adds one JSON line to the snapshot: the file's size before and after, the digest of the file up
to the new size (a running hash: no re-reading), each appended block's index row and span, and
the location records whose headers it wrote. A load takes the lines in order while each starts
where the last ended and its digest matches the file; when they cover the whole file, the
recent part is not parsed at all (its memories are read from their blocks when first asked
for, as the folded part's). Otherwise (a crash between an append and its line, another
writer's append, an edit) the recent part is parsed whole on top of the fold's index.

The snapshot is JSON (never pickle: a workdir may hold files from anyone) and holds no memory
text; it is not fsynced (a snapshot lost in a crash only costs the next load its speed).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import operator
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from cairn.adapters.storage.block_source import BlockSource
from cairn.adapters.storage.file_swap import read_fd
from cairn.adapters.storage.markdown_layout import (
    RawBlock,
)
from cairn.adapters.storage.markdown_render import Span
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.adapters.storage.memory_index import MemoryIndex, first, second, third
from cairn.compact_json import compact_json
from cairn.file_names import snapshot_name
from cairn.models.memory import LocationRecord, ParseProblem

log = logging.getLogger(__name__)

SNAPSHOT_VERSION = 3
"""2: the fold's document is the first line; journal lines may follow. 3: location records
as rows (`[id, name, visits, episodes]`)."""


def snapshot_path(path: Path) -> Path:
    """`.Memories.md.snapshot` beside `Memories.md`."""
    return path.with_name(snapshot_name(path.name))


Hasher = Any
"""A hashlib object (`_hasher`)."""


def _hasher(data: bytes | memoryview = b"") -> Hasher:
    """SHA-256: where the CPU has SHA extensions (most x86 and ARM today) about twice as fast
    as BLAKE2b in hashlib, and the file's digest is hashed at every load."""
    return hashlib.sha256(data)


JournalRow = list[Any]
"""One appended block: id, section rank, section key, seq, location id, NPC ids, -importance
and -created_at (None when not visible), start and end (characters), the section's name."""


class Journal:
    """Appends a line per appended unit of work to the snapshot the store's last fold wrote
    (see the module docstring). Kept by the store while the file is the one it wrote and
    appended to; a write that fails here only costs a later load its speed."""

    def __init__(self, fd: int, hasher: Hasher, size: int, chars: int) -> None:
        self._fd = fd
        self._hash = hasher
        """The digest of the file's first `size` bytes so far."""
        self.size = size
        """The file's size (bytes) the journal has reached."""
        self.chars = chars
        """The same, in characters of the decoded text (spans count characters)."""

    def append(
        self,
        text: str,
        data: bytes,
        rows: list[JournalRow],
        records: list[LocationRecord],
    ) -> bool:
        """Record that `data` (the encoding of `text`) was appended at the journal's size, with
        the index rows of its blocks (spans relative to `text`) and the location records it
        wrote. False when the line could not be written (the journal is then no longer kept)."""
        self._hash.update(data)
        line = {
            "from": self.size,
            "size": self.size + len(data),
            "digest": self._hash.hexdigest(),
            "rows": [[*row[:8], row[8] + self.chars, row[9] + self.chars, row[10]] for row in rows],
            "locations": [
                {"id": r.id, "name": r.name, "visits": r.visits, "episodes": r.episodes}
                for r in records
            ],
        }
        self.size += len(data)
        self.chars += len(text)
        encoded = compact_json(line) + b"\n"  # (a lone surrogate in a name: escaped)
        try:
            written = os.write(self._fd, encoded)
        except OSError as e:
            log.debug("snapshot journal not written: %s", e)
            return False
        return written == len(encoded)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


def write_snapshot(
    path: Path,
    data: bytes,
    cache: MemoryCache,
    spans: dict[str, Span],
    raw: list[RawBlock],
    problems: list[ParseProblem],
    chars: int,
) -> Journal | None:
    """Write the snapshot of `data` (the file as just written; `chars` characters decoded) and
    the cache it holds: the index as columns, one row per memory in store order (each id
    written once). Returns the journal that extends it as the store appends, None when no
    snapshot was written."""
    index = cache.index
    ids = index.in_order()
    if len(spans) != len(ids) or not all(map(spans.__contains__, ids)):
        return None  # blocks the renderer did not place (should not happen): no snapshot
    position = dict(zip(ids, itertools.count()))
    orders = list(map(index.order.__getitem__, ids))
    metas = list(map(index.meta.__getitem__, ids))
    items = list(map(third, metas))
    placed = list(map(spans.__getitem__, ids))
    hasher = _hasher(data)  # the document's digest, then the journal's running one
    document = {
        "cairn_snapshot": SNAPSHOT_VERSION,
        "size": len(data),
        "digest": hasher.hexdigest(),
        "lines": data.count(b"\n"),
        "seq": index.seq,
        "ids": ids,
        "rank": list(map(first, orders)),
        "key": list(map(second, orders)),
        "order_seq": list(map(third, orders)),
        "location": list(map(first, metas)),
        "npcs": {str(n): m[1] for n, m in enumerate(metas) if m[1]},
        "importance": [item[0][0] if item else None for item in items],
        "time": [item[0][1] if item else None for item in items],
        "ranked": list(map(position.__getitem__, map(second, index.ranked))),
        "start": list(map(first, placed)),
        "end": list(map(second, placed)),
        "locations": list(map(_record_row, cache.locations.values())),  # (rows: tuples)
        "raw": [[list(b.section), b.lines, b.problems, b.after] for b in raw],
        "problems": [[p.line, p.message] for p in problems],
    }
    target = snapshot_path(path)
    tmp = target.with_name(target.name + ".tmp")
    encoded = compact_json(document) + b"\n"
    fd = -1
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        view = memoryview(encoded)
        while view:
            view = view[os.write(fd, view) :]
        os.replace(tmp, target)
    except OSError as e:  # a snapshot only saves time: not having one is no error
        log.debug("%s: no snapshot written: %s", target, e)
        with contextlib.suppress(OSError):
            tmp.unlink()
        if fd >= 0:
            os.close(fd)
        return None
    return Journal(fd, hasher, len(data), chars)


_record_row = operator.attrgetter("id", "name", "visits", "episodes")
"""A location record as the snapshot keeps it: a row (a tuple, which orjson writes as an
array), made in C: a file may hold a million records, and `model_dump` costs 2-3 us each."""


_validate_record = LocationRecord.__pydantic_validator__.validate_python


def _read_record(row: list[Any]) -> LocationRecord:
    """A location record from its snapshot row, validated."""
    record_id, name, visits, episodes = row
    record: LocationRecord = _validate_record(
        {"id": record_id, "name": name, "visits": visits, "episodes": episodes}
    )
    return record


def remove_snapshot(path: Path) -> None:
    """Drop a snapshot that no longer describes the file."""
    with contextlib.suppress(OSError):
        snapshot_path(path).unlink()


@dataclass
class Loaded:
    """A load from a snapshot: the lazy cache, the kept blocks and problems, and where the
    file's recent part starts (bytes)."""

    cache: MemoryCache
    raw: list[RawBlock]
    problems: list[ParseProblem]
    size: int
    lines: int
    source: BlockSource
    folded: int = 0
    """Where the fold's part ends (bytes): the journal covers the rest up to `size`."""
    journal: Journal | None = None
    """The journal to extend when it covers the whole file (else None: it is closed)."""


def read_snapshot(path: Path, data: bytes, created_at: datetime) -> Loaded | None:
    """A lazy cache of `data`'s folded part from its snapshot, or None when there is none that
    proves it (see the module docstring)."""
    fd = -1
    try:
        fd = os.open(snapshot_path(path), os.O_RDWR | os.O_APPEND)
        first, _, journal = read_fd(fd).partition(b"\n")
        document = orjson.loads(first)
        if not isinstance(document, dict) or document.get("cairn_snapshot") != SNAPSHOT_VERSION:
            os.close(fd)
            return None
        folded = int(document["size"])
        hasher = _hasher(memoryview(data)[:folded])
        if len(data) < folded or hasher.hexdigest() != document["digest"]:
            os.close(fd)
            return None
        lines = _journal_lines(journal, data, folded, hasher)
        size = int(lines[-1]["size"]) if lines else folded
        text = data[:size].decode("utf-8")
        loaded = _loaded(document, lines, text, size, str(path), created_at)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
        if fd >= 0:
            os.close(fd)
        if not isinstance(e, FileNotFoundError):
            log.info("%s: snapshot not used: %s", snapshot_path(path), e)
        return None
    loaded.folded = folded
    if size == len(data):  # the journal goes on from here
        loaded.journal = Journal(fd, hasher, size, len(text))
    else:
        os.close(fd)
    return loaded


def _journal_lines(
    journal: bytes, data: bytes, size: int, hasher: Hasher
) -> list[dict[str, Any]]:
    """The journal's lines when they prove the whole file (each starts where the last ended,
    digests match, the last ends at the file's end); else none (the recent part is parsed)."""
    if size == len(data) or not journal.endswith(b"\n"):
        return []
    try:
        lines = orjson.loads(b"[" + journal.rstrip(b"\n").replace(b"\n", b",") + b"]")
    except ValueError:
        return []
    at = size
    for line in lines:
        if not isinstance(line, dict) or line.get("from") != at:
            return []
        end = line.get("size")
        if not isinstance(end, int) or not at < end <= len(data):
            return []
        hasher.update(data[at:end])
        if hasher.hexdigest() != line.get("digest"):
            return []
        at = end
    return lines if at == len(data) else []


def _npc_column(rows: dict[str, list[str]], count: int) -> list[tuple[str, ...]]:
    """The NPC ids of each row (the snapshot keeps the rows that have some, by position)."""
    column: list[tuple[str, ...]] = [()] * count
    for position, names in rows.items():
        at = int(position)
        if not 0 <= at < count:
            raise IndexError(f"NPC ids for row {position}")
        column[at] = tuple(names)
    return column


def _loaded(
    document: dict[str, Any],
    lines: list[dict[str, Any]],
    text: str,
    size: int,
    path: str,
    created_at: datetime,
) -> Loaded:
    ids: list[str] = document["ids"]
    orders = list(zip(document["rank"], document["key"], document["order_seq"], strict=True))
    index = MemoryIndex.from_columns(
        ids,
        orders,
        document["location"],
        _npc_column(document["npcs"], len(ids)),
        [
            (imp, ts) if imp is not None else None
            for imp, ts in zip(document["importance"], document["time"], strict=True)
        ],
        document["ranked"],
    )
    index.seq = int(document["seq"])
    spans: dict[str, tuple[int, int, int, int | str, str | None]] = dict(
        zip(
            ids,
            zip(
                document["start"],
                document["end"],
                document["rank"],
                document["key"],
                itertools.repeat(None),
            ),
            strict=True,
        )
    )
    locations = {r[0]: _read_record(r) for r in document["locations"]}
    names = {k: r.name for k, r in locations.items()}  # the folded part's headers show these
    for line in lines:
        for row in line["rows"]:
            entry_id, rank, key, seq, loc, npcs, importance, time, start, end, name = row
            if not isinstance(entry_id, str) or not isinstance(seq, int):
                raise TypeError(f"journal row {row!r}")
            if entry_id in index.order:
                index.remove(entry_id)
            visible = (importance, time) if importance is not None else None
            index.add_row(entry_id, (rank, key, seq), loc, tuple(npcs), visible)
            spans[entry_id] = (start, end, rank, key, name)
        for r in line["locations"]:
            locations[r["id"]] = LocationRecord.model_validate(r)
    source = BlockSource(text, spans, names, path, created_at)
    cache = MemoryCache.lazy(index, locations, source)
    raw = [
        RawBlock((b[0][0], b[0][1]), b[1], [(p[0], p[1]) for p in b[2]], b[3])
        for b in document["raw"]
    ]
    problems = [ParseProblem(path=path, line=p[0], message=p[1]) for p in document["problems"]]
    return Loaded(cache, raw, problems, size, int(document["lines"]), source)
