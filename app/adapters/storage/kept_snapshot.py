"""KeptSnapshot: the snapshot of the file a store wrote or loaded, its journal extended."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cairn.adapters.storage.edit_merge import EditHistory
from cairn.adapters.storage.gc_pause import gc_paused
from cairn.adapters.storage.markdown_append import AppendedPart
from cairn.adapters.storage.markdown_layout import RECENT_HEADER, RawBlock
from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.markdown_render import EntryRenderCache, RenderedFile
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.adapters.storage.snapshot import (
    Journal,
    JournalRow,
    read_snapshot,
    remove_snapshot,
    write_snapshot,
)
from cairn.adapters.storage.store_ops import AddOp, UpdateOp
from cairn.models.memory import ParseProblem


@dataclass
class ProvenFile:
    """A file loaded from the snapshot that proves its folded part, its recent part parsed on
    top (memories are read from their blocks when first asked for)."""

    cache: MemoryCache
    raw: list[RawBlock]
    problems: list[ParseProblem]
    blocks: EntryRenderCache
    """The blocks read from the proven file, which a fold writes again as they are."""
    folded: int
    """The size of the folded part."""
    unpinned: bool
    """The recent part holds memories a person wrote without cairn's comment."""


class KeptSnapshot:
    """The snapshot beside a store's file, while it proves what the store holds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.journal: Journal | None = None
        """Extends the snapshot of the file this store wrote (or loaded) with each append."""

    def drop(self) -> None:
        """Stop keeping the journal (the file changed in a way it does not follow)."""
        if self.journal is not None:
            self.journal.close()
            self.journal = None

    def take(self, journal: Journal | None) -> None:
        """Keep extending `journal` (a snapshot's, just loaded) from now on."""
        self.drop()
        self.journal = journal

    def load(self, data: bytes, modified: datetime, history: EditHistory) -> ProvenFile | None:
        """The file (`data`, modified then) from its snapshot, its recent part parsed on top,
        the snapshot's journal kept from now on (`history` observes what was loaded); None
        when no snapshot proves the file's folded part (or the file is one the snapshot does
        not cover)."""
        if data.startswith(b"\xef\xbb\xbf") or b"\r\n" in data:
            return None  # a byte-order mark or CRLF line ends: parsed whole
        loaded = read_snapshot(self.path, data, modified)
        if loaded is None:
            return None
        tail = data[loaded.size :].decode("utf-8", errors="surrogateescape")
        if tail and not tail.startswith("\n" + RECENT_HEADER):
            return None  # something other than appended units follows: parsed whole
        self.take(loaded.journal)
        cache = loaded.cache
        # the blocks read from the proven file are written again as they are by a fold
        blocks = EntryRenderCache()
        loaded.source.seen = blocks.seed
        history.observe_loaded(cache, loaded.source.original)
        problems, raw, unpinned = loaded.problems, loaded.raw, False
        if tail:
            recent = parse(tail, str(self.path), created_at=modified)
            unpinned = bool(recent.unpinned)  # (the proven part's are all pinned)
            cache.apply_all(
                UpdateOp(entry) if entry.id in cache else AddOp(entry)
                for entry in recent.cache.memories.values()
            )
            cache.locations.update(recent.cache.locations)
            raw = raw + recent.raw
            problems = problems + [
                p.model_copy(update={"line": p.line + loaded.lines}) for p in recent.problems
            ]
            history.observe(cache, list(recent.cache.memories))
        return ProvenFile(cache, raw, problems, blocks, loaded.folded, unpinned)

    def extend(
        self, text: str, data: bytes, start: int, cache: MemoryCache, part: AppendedPart
    ) -> None:
        """Extend the journal with the unit just appended at `start` (bytes; `part`: what it
        wrote), when the journal has reached exactly there; else stop keeping it."""
        journal = self.journal
        if journal is None:
            return
        if journal.size != start:
            self.drop()
            return
        index = cache.index
        rows: list[JournalRow] = []
        for entry_id, begin, end, name in part.taken:
            order, meta = index.order.get(entry_id), index.meta.get(entry_id)
            if order is None or meta is None:
                self.drop()  # not in the cache (should not happen): no journal
                return
            rank = meta[2][0] if meta[2] is not None else (None, None)
            rows.append(
                [entry_id, *order, meta[0], list(meta[1]), rank[0], rank[1], begin, end, name]
            )
        if not journal.append(text, data, rows, part.taken_records):
            self.drop()

    def write(
        self,
        rendered: RenderedFile,
        cache: MemoryCache,
        raw: list[RawBlock],
        problems: list[ParseProblem],
        *,
        plain: bool,
    ) -> None:
        """Keep the snapshot of the file just written (see `snapshot`); `plain`: written with
        no byte-order mark and no CRLF line ends (else no snapshot proves it)."""
        self.drop()
        if not plain:
            remove_snapshot(self.path)
            return
        data = rendered.text.encode("utf-8", errors="surrogateescape")
        with gc_paused():  # (its rows, a million for a million rooms, are no garbage)
            self.journal = write_snapshot(
                self.path, data, cache, rendered.spans, raw, problems, len(rendered.text)
            )
