"""ArchiveFile: `NAME.archive.md`, the SUPERSEDED memories moved out when an episode ends."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from cairn.adapters.input_files import read_memory_file
from cairn.adapters.storage.archive_journal import read_journal, read_journal_tail, record_part
from cairn.adapters.storage.file_swap import fsync_dir, modified_time
from cairn.adapters.storage.markdown_append import AppendedPart
from cairn.adapters.storage.markdown_layout import ARCHIVE_HEADER, section_of
from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.markdown_render import ordered
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.errors import StoreError
from cairn.file_names import archive_name
from cairn.models.memory import MemoryEntry

log = logging.getLogger(__name__)


class ArchiveFile:
    """The archive beside a Memories.md: SUPERSEDED memories, not loaded for play."""

    def __init__(self, live: Path, now: Callable[[], datetime]) -> None:
        self.path = live.with_name(archive_name(live.name))
        self._now = now
        """The time the archive's headers carry: the container's clock (a replay's is its own)."""

    def append(self, entries: list[MemoryEntry], cache: MemoryCache) -> None:
        """Append `entries` (of `cache`) to the archive file, durably (before the fold drops
        them: a crash between the two leaves them in both files, and readers take the live
        file's)."""
        part = AppendedPart(f"{ARCHIVE_HEADER} (moved here {self._now():%Y-%m-%d %H:%M:%S} UTC)")
        in_part = sorted(entries, key=lambda e: section_of(e)[0] != "location")
        for entry in in_part:
            part.add_memory(cache, entry)
        data = part.take().encode("utf-8", errors="surrogateescape")
        new = not self.path.exists()
        try:
            with open(self.path, "ab") as handle:
                before = os.fstat(handle.fileno()).st_size
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                after = os.fstat(handle.fileno()).st_size
            if new:
                fsync_dir(self.path.parent)
        except OSError as e:
            raise StoreError(f"{self.path}: cannot write: {e}") from e
        if after == before + len(data):  # nobody else appended meanwhile
            # the cache's entries are as the file keeps them (`as_written`): what a read of
            # the part gives back, as a fold relies on too
            record_part(self.path, before, data, in_part)

    def read(self, *, newest: int | None = None) -> list[MemoryEntry]:
        """The archive's memories by section; `newest`: the last that many, read from the
        journal's last lines (an archive its journal does not prove to its end is read whole:
        then that many of its newest parts' and parsed memories)."""
        data = self._bytes()
        tail = None if newest is None else read_journal_tail(self.path, data, newest)
        # the last parts, proven by the journal; else the journal's parts in file order, then
        # the parsed rest (by section): N of the newest
        found = tail if tail is not None else self._read(data)
        if newest is not None:
            found = found[-newest:] if newest else []
        whole = MemoryCache()
        whole.memories = {e.id: e for e in found}
        return list(ordered(whole).memories.values())  # by section, as a parse of it all gives

    def count(self) -> int:
        """The archive's memory blocks, counted by their header lines (cairn escapes a text
        line that would start like one), none of them read."""
        data = self._bytes()
        return data.count(b"\n**[") + data.startswith(b"**[")

    def _bytes(self) -> bytes:
        try:
            return read_memory_file(self.path)
        except FileNotFoundError:
            return b""
        except OSError as e:
            raise StoreError(f"{self.path}: cannot read: {e}") from e

    def _modified(self) -> datetime | None:
        """The archive's modification time (None when it cannot be read: then "now")."""
        try:
            return modified_time(self.path.stat().st_mtime_ns)
        except OSError:
            return None

    def _read(self, data: bytes) -> list[MemoryEntry]:
        """Every memory of the archive, in file order: the parts its journal proves, then the
        rest parsed."""
        found, covered = read_journal(self.path, data)  # the parts it proves
        if covered < len(data):  # the rest (or all of it) is parsed
            rest = data[covered:].decode("utf-8", errors="surrogateescape")
            # a memory a person wrote there without cairn's comment is dated as in the live
            # file: by the file's modification time (the same at every read, not "now")
            parsed = parse(rest, str(self.path), created_at=self._modified())
            above = data.count(b"\n", 0, covered)  # problems named at their lines in the file
            for problem in parsed.problems:
                log.warning("%s", problem.model_copy(update={"line": problem.line + above}))
            # a memory archived again (a person's edit brought it back, then it was forgotten
            # again) has a later block: the later is its version
            at = {e.id: i for i, e in enumerate(found)}
            for entry in parsed.cache.memories.values():
                if entry.id in at:
                    found[at[entry.id]] = entry
                else:
                    found.append(entry)
        return found
