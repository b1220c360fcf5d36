"""LiveFile: a store's Memories.md on disk: settled reads, appends, whole-file swaps; and
UnitAppender, which appends a unit of work to its recent part."""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cairn.adapters.files import file_mode
from cairn.adapters.input_files import read_memory_file
from cairn.adapters.storage.file_swap import (
    Signature,
    exchange,
    fsync_dir,
    modified_time,
    path_signature,
    read_settled,
    signature_of,
)
from cairn.adapters.storage.kept_snapshot import KeptSnapshot
from cairn.adapters.storage.live_edit import SETTLE_SECONDS, SETTLE_TIMEOUT
from cairn.adapters.storage.markdown_append import AppendedPart
from cairn.adapters.storage.markdown_backups import SessionBackups
from cairn.adapters.storage.markdown_layout import RECENT_HEADER, RECENT_TITLE
from cairn.adapters.storage.markdown_parse import ParsedFile, parse
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.adapters.storage.torn_units import AppendedUnits
from cairn.adapters.storage.unit_remnants import landed
from cairn.adapters.storage.watched_files import WatchedFiles, looks_complete, read_open
from cairn.errors import MemoryFileEncodingError, StoreError

log = logging.getLogger(__name__)

_datasync = getattr(os, "fdatasync", os.fsync)
"""Flushes an append's data and the file's new size (not its times): cheaper than fsync."""

Displaced = tuple[bytes | None, Signature | None, str]
"""What someone else saved that a write found: the file's bytes and signature (None: the file
is gone) and where it was found (`check`: just before the swap; `swap`: in the file the swap
displaced)."""


def require_utf8(path: Path, data: bytes) -> None:
    """Refuse a file that is not UTF-8, naming the line and byte offset of its first bad byte:
    read anyway, its memories holding such bytes would be lost from every listing and a
    UTF-16 file would read as no memories at all (the file is left as it is)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        bad = data[e.start : e.start + 4].hex(" ")
        raise MemoryFileEncodingError(
            f"{path}:{line}: byte offset {e.start}: bytes that are not UTF-8 ({bad}); cairn"
            " reads and writes this file as UTF-8 only: save it as UTF-8 (`cairn memories"
            " check` lists each such line); the file was left as it is"
        ) from e


class LiveFile:
    """The file a markdown store keeps its memories in, as the store last saw it."""

    def __init__(self, path: Path, backups: SessionBackups) -> None:
        self.path = path
        self.backups = backups
        self.signature: Signature | None = None
        """The file as this store last saw it (None: there was none)."""
        self.crlf = False
        """The file used CRLF line ends when read: it is written back with them."""
        self.bom = False
        """The file started with a UTF-8 byte-order mark: it is written back with one."""
        self.recent_bytes = 0
        """The size of the file's recent part (appended units of work not folded yet)."""
        self.folded_bytes = 0
        """The size of the file's folded part (all of the file before its recent part)."""
        self.watched = WatchedFiles()
        """The files this store replaced, watched for an editor's save that lands in one late."""
        self._temps_checked = False
        self._tail: int | None = None
        """The live file, open for appends: kept from one append to the next while it is the
        file this store last saw (one open per fold, not one per write)."""
        self._tail_clean: Signature | None = None
        """The file's signature when this store's last append left it ending with a line end
        (then the next append need not read its last byte)."""
        self.known: list[bytes] = []
        """The live file's bytes as this store last read or wrote them (a read, a fold, then
        each append): a save that is their start, cut at a line end, is a save cut short."""

    def took(self, data: bytes) -> bool:
        """`data` (someone's save, read) is the live file from now on; returns whether that
        save was cut short: its bytes end mid-line, or are the start of the file this store
        last saw, cut at a line end (`cut_of_known`)."""
        cut = (bool(data) and not data.endswith(b"\n")) or self.cut_of_known(data)
        self.known = [data]
        return cut

    def cut_of_known(self, data: bytes) -> bool:
        """Whether `data` is the start of the file this store last saw, cut at a line end
        (a save that stopped partway: `live_edit` rule 4), not the whole of it."""
        if not data or not data.endswith(b"\n") or len(data) >= sum(map(len, self.known)):
            return False
        at = 0
        for chunk in self.known:
            part = data[at : at + len(chunk)]
            if not chunk.startswith(part):
                return False
            at += len(part)
            if at == len(data):
                return True
        return False

    # -- reading -------------------------------------------------------------------------------

    def decode(self, data: bytes) -> str:
        """The file's text from its bytes, noting its form (a byte-order mark, CRLF line ends)
        and the sizes of its parts."""
        text = data.decode("utf-8", errors="surrogateescape")
        self.bom = text.startswith("\ufeff")
        text = text.removeprefix("\ufeff")  # an editor's byte-order mark is no text
        self.crlf = "\r\n" in text
        if self.crlf:
            text = text.replace("\r\n", "\n")
        at = text.find("\n" + RECENT_HEADER)
        self.recent_bytes = len(text) - at if at >= 0 else 0
        self.folded_bytes = len(text) - self.recent_bytes
        return text

    def parse(self, data: bytes, modified_ns: int) -> ParsedFile:
        """The file's bytes parsed (`modified_ns`: its modification time, the time of the
        memories a person wrote without cairn's comment); its problems logged."""
        text = self.decode(data)
        parsed = parse(text, str(self.path), created_at=modified_time(modified_ns))
        for problem in parsed.problems:
            log.warning("%s", problem)
        if parsed.cut_short:
            log.info(
                "%s: %d blocks of a unit of work that was being appended were not read (a"
                " copy taken while cairn wrote, or a write cut short)",
                self.path,
                parsed.cut_short,
            )
        return parsed

    def changed(self) -> bool:
        """Whether the path holds another file than the one this store last saw (one stat)."""
        return path_signature(self.path) != self.signature

    def read(self, *, utf8: bool = False) -> tuple[bytes, Signature] | None:
        """The file's bytes as they are now (a save in place finished: `live_edit` rule 3),
        None when missing. `utf8`: refuse a file that is not UTF-8 (`require_utf8`), as a
        store does when it opens; a save someone makes meanwhile is merged whatever its bytes
        (the store holds what it acknowledged, and a broken save takes no deletion)."""
        in_place = self.signature is not None and self._same_inode()
        try:
            got = read_settled(
                lambda: path_signature(self.path),
                lambda: read_memory_file(self.path),
                settle=SETTLE_SECONDS if in_place else 0.0,
                timeout=SETTLE_TIMEOUT,
                complete=looks_complete if in_place else lambda data: True,
            )
        except FileNotFoundError:
            return None
        except OSError as e:
            raise StoreError(f"{self.path}: cannot read: {e}") from e
        if got is not None and utf8:
            require_utf8(self.path, got[0])
        return got

    def _same_inode(self) -> bool:
        now = path_signature(self.path)
        return now is not None and self.signature is not None and now[0] == self.signature[0]

    # -- appending -----------------------------------------------------------------------------

    def open_tail(self) -> tuple[int, Signature]:
        """The live file open for appends, and its signature now: the descriptor kept from the
        last append while its file is the one this store last saw (else opened again; a file
        that replaced it after the store's refresh is found by the check after the write)."""
        if self._tail is not None:
            signature = signature_of(os.fstat(self._tail))
            if signature == self.signature:
                return self._tail, signature
            self.close_tail()
        self._tail = os.open(self.path, os.O_RDWR | os.O_APPEND)
        return self._tail, signature_of(os.fstat(self._tail))

    def close_tail(self) -> None:
        if self._tail is not None:
            with contextlib.suppress(OSError):
                os.close(self._tail)
            self._tail = self._tail_clean = None

    def ends_mid_line(self, fd: int, before: Signature) -> bool:
        """Whether the file (`before`: as it is now) ends mid-line (a write cut short): it is
        not known to end with a line end, and its last byte is not one."""
        known_end = not before[1] or before == self._tail_clean
        return not known_end and os.pread(fd, 1, before[1] - 1) != b"\n"

    def write_tail(self, fd: int, data: bytes, before: Signature, *, durable: bool) -> None:
        """Append `data`, synced to disk when `durable` (which also syncs any appends before
        it); on an error, cut the file back to its size `before` and raise."""
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                _datasync(fd)  # the data and the new size: what a reader needs
            self.known.append(data)
        except OSError:
            # no half block may stay behind to be read as a memory: cut it off again
            with contextlib.suppress(OSError):
                if os.fstat(fd).st_size > before[1]:
                    os.ftruncate(fd, before[1])
                    os.fsync(fd)
            raise

    def appended(self, after: Signature) -> None:
        """This store's append left the file as `after` says, ending with a line end."""
        self.signature = self._tail_clean = after

    # -- replacing -----------------------------------------------------------------------------

    def replace(self, text: str) -> Displaced | None:
        """Write `text` as the file (in the file's form), by a swap: render to a temp file in
        the same folder, fsync, swap it with the live file in one step (else rename it over
        the file, its backup linked first). Returns what someone else had saved in the file
        since it was read, and where it was found (the caller merges it and writes again),
        None when nobody had."""
        if self.crlf:
            text = text.replace("\n", "\r\n")
        if self.bom:
            text = "\ufeff" + text
        data = text.encode("utf-8", errors="surrogateescape")
        if not self._temps_checked:
            self._remove_stale_temps()
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
        )
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                # What this store wrote, known by the file itself: read from the path after
                # the swap, it could be an editor's save renamed over it in between, which
                # would then pass for this store's own and be overwritten unread.
                written = signature_of(os.fstat(handle.fileno()))
            os.chmod(tmp, file_mode(self.path))
            if path_signature(self.path) != self.signature:  # saved since read: merge first
                tmp.unlink()
                got = self.read()
                self.signature = got[1] if got else None
                return (got[0], got[1], "check") if got else (None, None, "check")
            if self.signature is not None and exchange(tmp, self.path):
                self.known = [data]
                return self._keep_displaced(tmp, written)
            self.backups.rotate(file_known=self.signature is not None)
            os.replace(tmp, self.path)
            self.known = [data]
            fsync_dir(self.path.parent)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"{self.path}: cannot write: {e}") from e
        self.signature = written
        self.backups.taken = True  # a session that found no file has nothing to back up
        return None

    def _keep_displaced(self, displaced: Path, written: Signature) -> Displaced | None:
        """After a swap, `displaced` holds the file that was live: keep it as the session's
        backup (or delete it), watch it, and return its content when it is not what this store
        had read. `written`: the signature of the file the swap made live."""
        read_signature = self.signature
        fd = os.open(displaced, os.O_RDONLY)
        self.signature = written
        signature = signature_of(os.fstat(fd))
        watched = self.watched.add(fd, signature)
        self.backups.keep_displaced(displaced)
        fsync_dir(self.path.parent)
        if signature == read_signature:
            return None
        got = read_open(fd, complete=lambda data: True)
        if got is None:
            return None
        watched.signature = got[1]
        return got[0], got[1], "swap"

    def _remove_stale_temps(self) -> None:
        """Delete the temp files of writers that crashed mid-write (called under the lock:
        only a lock holder creates them, so any there now is stale)."""
        pattern = f".{glob.escape(self.path.name)}.*.tmp"
        for stale in self.path.parent.glob(pattern):
            with contextlib.suppress(OSError):
                stale.unlink()
        self._temps_checked = True

    def close(self) -> None:
        """Stop watching the replaced files and close the descriptor kept for appends."""
        self.watched.close()
        self.close_tail()


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
