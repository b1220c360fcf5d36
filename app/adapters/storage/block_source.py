"""BlockSource: the memories of a file a snapshot proves, read from their blocks when asked."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from cairn.adapters.storage.markdown_escape import escape_inline
from cairn.adapters.storage.markdown_layout import LOCATIONS_HEADER, NPCS_HEADER, WORLD_HEADER
from cairn.adapters.storage.markdown_parse import parse
from cairn.errors import StoreError
from cairn.models.memory import MemoryEntry, MemoryStatus

_TOP_HEADERS = (LOCATIONS_HEADER, NPCS_HEADER, WORLD_HEADER)


class BlockSource:
    """Reads one memory from its block in the loaded file's text (parsed and validated as a
    full load would)."""

    def __init__(
        self,
        text: str,
        spans: dict[str, tuple[int, int, int, int | str, str | None]],
        names: dict[int, str],
        path: str,
        created_at: datetime,
    ) -> None:
        self._text = text
        self._spans = spans
        """id -> (start, end, section rank, section key, section name: None for the name of
        the location's record) as loaded."""
        self._names = names
        """The location names the folded part's headers show."""
        self._path = path
        self._created_at = created_at
        self.seen: Callable[[MemoryEntry, str | None, str], None] | None = None
        """Told of each memory read for the cache, with the name of the section it was read
        under and its block's text: a store's render cache then writes the block again as
        it is, unless the memory or its section changed (`EntryRenderCache.seed`)."""

    def _seed(self, entries: Iterable[MemoryEntry]) -> None:
        """Hand the blocks of `entries` (as read) to `seen`; a SUPERSEDED memory's block also
        shows its successor's title, which may have changed: it is rendered again."""
        if self.seen is None:
            return
        spans, text, names = self._spans, self._text, self._names
        for entry in entries:
            if entry.status is MemoryStatus.SUPERSEDED:
                continue
            start, end, rank, key, named_as = spans[entry.id]
            if rank == 0:
                name: str | None = names.get(int(key), "") if named_as is None else named_as
            else:
                name = str(key) if rank == 1 else None
            self.seen(entry, name, text[start:end])

    def _section(self, entry_id: str) -> tuple[int, str]:
        """The section a block is read in: its rank and header (with the name it shows)."""
        _, _, rank, key, named_as = self._spans[entry_id]
        if rank == 0:
            name = self._names.get(int(key), "") if named_as is None else named_as
            named = f" {escape_inline(name)}" if name else ""
            return rank, f"## Location {key}:{named}"
        if rank == 1:
            return rank, f"## NPC {escape_inline(str(key))}"
        return rank, ""

    def load(self, entry_id: str) -> MemoryEntry:
        entry = self._read(entry_id)
        self._seed([entry])
        return entry

    def _read(self, entry_id: str) -> MemoryEntry:
        start, end = self._spans[entry_id][:2]
        rank, header = self._section(entry_id)
        head = _TOP_HEADERS[rank] + (f"\n\n{header}" if header else "")
        parsed = parse(
            f"{head}\n\n{self._text[start:end]}\n", self._path, created_at=self._created_at
        )
        entry = parsed.cache.memories.get(entry_id)
        if entry is None or parsed.problems:
            raise StoreError(f"{self._path}: the snapshot's block for {entry_id!r} does not read")
        return entry

    def load_many(self, ids: list[str]) -> dict[str, MemoryEntry | None]:
        """These memories, read in few parses of their blocks under their sections' headers
        (ids in store order, as a query gives them; a section whose blocks show two names,
        renamed in the recent part, takes one parse per name); when a parse does not give
        exactly its memories, block by block (which names a block that does not read)."""
        found: dict[str, MemoryEntry | None] = {}
        group: list[str] = []
        headers: dict[tuple[int, int | str], str] = {}
        for entry_id in ids:
            rank, header = self._section(entry_id)
            section = (rank, self._spans[entry_id][3])
            if headers.setdefault(section, header) != header:
                found.update(self._parse_group(group))
                group, headers = [], {section: header}
            group.append(entry_id)
        found.update(self._parse_group(group))
        return found

    def _parse_group(self, ids: list[str]) -> dict[str, MemoryEntry | None]:
        chunks: list[str] = []
        rank_now, header_now = -1, ""
        for entry_id in ids:
            rank, header = self._section(entry_id)
            if rank < rank_now:
                return {i: self.load(i) for i in ids}  # not in store order: one by one
            if rank != rank_now:
                chunks.append(_TOP_HEADERS[rank])
                rank_now, header_now = rank, ""
            if header != header_now:
                chunks.append(header)
                header_now = header
            start, end = self._spans[entry_id][:2]
            chunks.append(self._text[start:end])
        if len(ids) < 2:
            return {i: self.load(i) for i in ids}
        parsed = parse("\n\n".join(chunks) + "\n", self._path, created_at=self._created_at)
        read = parsed.cache.memories
        if parsed.problems or list(read) != ids:
            return {i: self.load(i) for i in ids}
        self._seed(read.values())
        return dict(read)

    def load_all(self) -> dict[str, MemoryEntry]:
        parsed = parse(self._text, self._path, created_at=self._created_at)
        read = parsed.cache.memories
        self._seed(entry for entry in read.values() if entry.id in self._spans)
        return read

    def original(self, entry_id: str) -> MemoryEntry | None:
        """The version the file held when it was loaded."""
        return self._read(entry_id) if entry_id in self._spans else None
