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

The snapshot is JSON (never pickle: a workdir may hold files from anyone) and holds no memory
text; it is not fsynced (a snapshot lost in a crash only costs the next load its speed).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from cairn.adapters.storage.companions import snapshot_name
from cairn.adapters.storage.markdown_format import (
    LOCATIONS_HEADER,
    NPCS_HEADER,
    WORLD_HEADER,
    RawBlock,
    Span,
    escape_inline,
    parse,
)
from cairn.adapters.storage.ops import MemoryCache, MemoryIndex
from cairn.errors import StoreError
from cairn.models.memory import LocationRecord, MemoryEntry, ParseProblem

log = logging.getLogger(__name__)

SNAPSHOT_VERSION = 1


def snapshot_path(path: Path) -> Path:
    """`.Memories.md.snapshot` beside `Memories.md`."""
    return path.with_name(snapshot_name(path.name))


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def write_snapshot(
    path: Path,
    data: bytes,
    cache: MemoryCache,
    spans: dict[str, Span],
    raw: list[RawBlock],
    problems: list[ParseProblem],
) -> None:
    """Write the snapshot of `data` (the file as just written) and the cache it holds: the
    index as columns, one row per memory in store order (each id written once)."""
    index = cache.index
    ids = index.in_order()
    if set(spans) != set(ids):
        return  # blocks the renderer did not place (should not happen): no snapshot
    position = {entry_id: n for n, entry_id in enumerate(ids)}
    orders = [index.order[i] for i in ids]
    metas = [index.meta[i] for i in ids]
    document = {
        "cairn_snapshot": SNAPSHOT_VERSION,
        "size": len(data),
        "digest": _digest(data),
        "lines": data.count(b"\n"),
        "seq": index.seq,
        "ids": ids,
        "rank": [o[0] for o in orders],
        "key": [o[1] for o in orders],
        "order_seq": [o[2] for o in orders],
        "location": [m[0] for m in metas],
        "npcs": [m[1] for m in metas],
        "importance": [m[2][0][0] if m[2] else None for m in metas],
        "time": [m[2][0][1] if m[2] else None for m in metas],
        "ranked": [position[i] for _, i in index.ranked],
        "start": [spans[i][0] for i in ids],
        "end": [spans[i][1] for i in ids],
        "locations": [r.model_dump(mode="json") for r in cache.locations.values()],
        "raw": [[list(b.section), b.lines, b.problems, b.after] for b in raw],
        "problems": [[p.line, p.message] for p in problems],
    }
    target = snapshot_path(path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, target)
    except OSError as e:  # a snapshot only saves time: not having one is no error
        log.debug("%s: no snapshot written: %s", target, e)
        with contextlib.suppress(OSError):
            tmp.unlink()


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


class BlockSource:
    """Reads one memory from its block in the loaded file's text (parsed and validated as a
    full load would)."""

    def __init__(
        self,
        text: str,
        spans: dict[str, tuple[int, int, int, int | str]],
        locations: dict[int, LocationRecord],
        path: str,
        created_at: datetime,
    ) -> None:
        self._text = text
        self._spans = spans
        """id -> (start, end, section rank, section key) as loaded."""
        self._names = {k: r.name for k, r in locations.items()}
        self._path = path
        self._created_at = created_at

    def load(self, entry_id: str) -> MemoryEntry:
        start, end, rank, key = self._spans[entry_id]
        block = self._text[start:end]
        if rank == 0:
            name = self._names.get(int(key), "")
            named = f" {escape_inline(name)}" if name else ""
            head = f"{LOCATIONS_HEADER}\n\n## Location {key}:{named}"
        elif rank == 1:
            head = f"{NPCS_HEADER}\n\n## NPC {escape_inline(str(key))}"
        else:
            head = WORLD_HEADER
        parsed = parse(f"{head}\n\n{block}\n", self._path, created_at=self._created_at)
        entry = parsed.cache.memories.get(entry_id)
        if entry is None or parsed.problems:
            raise StoreError(f"{self._path}: the snapshot's block for {entry_id!r} does not read")
        return entry

    def load_all(self) -> dict[str, MemoryEntry]:
        parsed = parse(self._text, self._path, created_at=self._created_at)
        return parsed.cache.memories

    def original(self, entry_id: str) -> MemoryEntry | None:
        """The version the file held when it was loaded."""
        return self.load(entry_id) if entry_id in self._spans else None


def read_snapshot(path: Path, data: bytes, created_at: datetime) -> Loaded | None:
    """A lazy cache of `data`'s folded part from its snapshot, or None when there is none that
    proves it (see the module docstring)."""
    try:
        document = json.loads(snapshot_path(path).read_bytes())
        if not isinstance(document, dict) or document.get("cairn_snapshot") != SNAPSHOT_VERSION:
            return None
        size = int(document["size"])
        if len(data) < size or _digest(data[:size]) != document["digest"]:
            return None
        return _loaded(document, data[:size].decode("utf-8"), str(path), created_at)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
        if not isinstance(e, FileNotFoundError):
            log.info("%s: snapshot not used: %s", snapshot_path(path), e)
        return None


def _loaded(document: dict[str, Any], text: str, path: str, created_at: datetime) -> Loaded:
    ids: list[str] = document["ids"]
    orders = list(zip(document["rank"], document["key"], document["order_seq"], strict=True))
    index = MemoryIndex.from_columns(
        ids,
        orders,
        document["location"],
        [tuple(n) for n in document["npcs"]],
        [
            (imp, ts) if imp is not None else None
            for imp, ts in zip(document["importance"], document["time"], strict=True)
        ],
        document["ranked"],
    )
    index.seq = int(document["seq"])
    spans = dict(
        zip(
            ids,
            zip(document["start"], document["end"], document["rank"], document["key"], strict=True),
            strict=True,
        )
    )
    locations = {r["id"]: LocationRecord.model_validate(r) for r in document["locations"]}
    source = BlockSource(text, spans, locations, path, created_at)
    cache = MemoryCache.lazy(index, locations, source)
    raw = [
        RawBlock((b[0][0], b[0][1]), b[1], [(p[0], p[1]) for p in b[2]], b[3])
        for b in document["raw"]
    ]
    problems = [ParseProblem(path=path, line=p[0], message=p[1]) for p in document["problems"]]
    return Loaded(cache, raw, problems, int(document["size"]), int(document["lines"]), source)
