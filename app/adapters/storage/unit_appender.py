"""UnitAppender: a store's units of work appended to its Memories.md's recent part."""

from __future__ import annotations

import os
from dataclasses import dataclass

from cairn.adapters.storage.file_swap import path_signature, signature_of
from cairn.adapters.storage.kept_snapshot import KeptSnapshot
from cairn.adapters.storage.live_file import LiveFile
from cairn.adapters.storage.markdown_append import AppendedPart
from cairn.adapters.storage.markdown_layout import RECENT_TITLE
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.adapters.storage.torn_units import AppendedUnits
from cairn.adapters.storage.unit_remnants import landed
from cairn.errors import StoreError


@dataclass(frozen=True)
class SavedMeanwhile:
    """Someone saved the file while a unit was being appended: found before the write
    (`check`), or after it (`append`; `written`: where the unit landed and its bytes, when a
    save in place was under way then)."""

    source: str
    written: tuple[int, bytes] | None = None


class UnitAppender:
    """Appends units of work to the live file's recent part (`# Recent Memories`)."""

    def __init__(self, file: LiveFile, snapshots: KeptSnapshot, units: AppendedUnits) -> None:
        self._file = file
        self._snapshots = snapshots
        self._units = units
        """The units appended last, by their bytes (a copy torn inside one is read without
        it)."""
        self.part = AppendedPart(RECENT_TITLE)
        """The recent part as this store appends it (its header, the section it ends in)."""
        self.appended = False
        """This store appended to the file: closing it folds the recent part."""

    def restart(self) -> None:
        """The next unit starts a recent part of its own (the file was replaced, or is
        someone else's save, which may end anywhere)."""
        self.part = AppendedPart(RECENT_TITLE)

    def append(
        self, cache: MemoryCache, ids: list[str | int], *, durable: bool = True
    ) -> SavedMeanwhile | None:
        """Append the current versions of these memories (str ids) and location records (int
        ids) of `cache`, synced to disk when `durable` (which also syncs any appends before
        it). A `SavedMeanwhile` when someone saved the file meanwhile (the caller merges it)."""
        part, file = self.part, self._file
        for item in dict.fromkeys(ids):
            if isinstance(item, int):
                if item in cache.locations:
                    part.add_location(cache.locations[item])
            elif (entry := cache.get(item)) is not None:
                part.add_memory(cache, entry)
        section = part.section
        text = part.take()
        if file.crlf:
            text = text.replace("\n", "\r\n")
        data = text.encode("utf-8", errors="surrogateescape")
        try:
            fd, before = file.open_tail()
        except FileNotFoundError:
            return SavedMeanwhile("check")
        except OSError as e:
            raise StoreError(f"{file.path}: cannot write: {e}") from e
        try:
            if before != file.signature:  # saved since the check: merge first
                file.close_tail()
                return SavedMeanwhile("check")
            if file.ends_mid_line(fd, before):  # (a write cut short): end its line first
                data = b"\n" + data
                self._snapshots.drop()
            file.write_tail(fd, data, before, durable=durable)
            after = signature_of(os.fstat(fd))
        except OSError as e:
            file.close_tail()
            raise StoreError(f"{file.path}: cannot write: {e}") from e
        self.appended = True
        file.recent_bytes += len(data)
        if after[1] != before[1] + len(data) or path_signature(file.path) != after:
            # an editor saved while the blocks were appended: what the file holds now is merged
            return SavedMeanwhile("append", landed(fd, data, before))
        file.appended(after)  # (`take` ends the text with a line end)
        self._units.appended(data)
        part.section = section
        if not file.crlf:
            self._snapshots.extend(text, data, before[1], cache, part)
        else:
            self._snapshots.drop()
        return None
