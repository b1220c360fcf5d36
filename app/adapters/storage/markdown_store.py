"""MarkdownMemoryStore: Memories.md, written atomically once per unit of work under a file lock."""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import shutil
import tempfile
import time
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from filelock import Timeout

from cairn.adapters.files import ensure_folder, file_mode
from cairn.adapters.storage.archive_journal import read_journal, read_journal_tail, record_part
from cairn.adapters.storage.base import CachedStore, gc_paused
from cairn.adapters.storage.companions import archive_name
from cairn.adapters.storage.edit_merge import EditHistory
from cairn.adapters.storage.file_lock import WriterLock
from cairn.adapters.storage.file_swap import (
    Signature,
    exchange,
    path_signature,
    read_fd,
    read_settled,
    signature_of,
)
from cairn.adapters.storage.markdown_format import (
    ARCHIVE_HEADER,
    RECENT_HEADER,
    RECENT_TITLE,
    AppendedPart,
    EntryRenderCache,
    ParsedFile,
    RawBlock,
    RenderedFile,
    as_written,
    ordered,
    parse,
    render_file,
    section_of,
)
from cairn.adapters.storage.ops import (
    AddOp,
    DeleteOp,
    MemoryCache,
    StoreOp,
    SupersedeOp,
    UpdateOp,
    VisitOp,
    visits_only,
)
from cairn.adapters.storage.snapshot import (
    Journal,
    JournalRow,
    read_snapshot,
    remove_snapshot,
    write_snapshot,
)
from cairn.errors import StoreError, StoreLockedError
from cairn.interfaces.clock import IClock
from cairn.models.memory import MemoryEntry, MemoryStatus, utc_now

log = logging.getLogger(__name__)

_SETTLE_SECONDS = 0.02
"""A file changed in place is read once it has been still this long (an editor's save) and
ends with a line end, as every Memories.md does (an empty file or one cut mid-line is a save
in progress)."""
_SETTLE_TIMEOUT = 2.0
_WATCH_SECONDS = 5.0
"""How long a replaced file is watched for an editor's save that landed in it late."""
_WATCHED_FILES = 4
_MAX_ROUNDS = 20
_REMNANTS_KEPT = 8
"""Remnants of units this store cut from a save (see `_without_remnants`) it looks for."""
_FOLD_TRIES = 3
"""Folds found outdated by a save before the store appends what the save lacks instead."""
RECENT_LIMIT = 64 * 1024
"""Bytes of appended units of work after which the next write folds the file (at least: see
`RECENT_SHARE`)."""
RECENT_SHARE = 8
"""The recent part may also grow to the folded part's size over this: a fold rewrites the whole
file, so folds come at sizes growing by a constant factor and cost O(1) per write amortized
(a load does not parse a recent part its snapshot's journal covers)."""


_datasync = getattr(os, "fdatasync", os.fsync)
"""Flushes an append's data and the file's new size (not its times): cheaper than fsync."""


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class _Watched:
    """A file this store replaced, still open: an editor that had opened it may save into it."""

    fd: int
    signature: Signature
    since: float


class MarkdownMemoryStore(CachedStore):
    """Memories in a human-editable Markdown file (see `markdown_format` for the layout).

    - Every unit of work is one write, usually an append: its blocks go to the `# Recent
      Memories` part at the end of the file, between unit markers, and are fdatasynced (a
      reader ignores a unit whose end it has not read). A fold writes the whole file instead
      (the recent part folded into the sections): render to a temp file in the same folder,
      fsync, swap it with the live file in one step; folds happen at the session's first write
      (when the store parsed the file), past the recent part's bound (`RECENT_LIMIT` bytes,
      or the folded part's size over `RECENT_SHARE` when more: amortized O(1) per write), at
      `checkpoint` (an episode's end: SUPERSEDED memories move to `NAME.archive.md` first), on
      close, and for deletions. Backups are per session: the file as it was before this store
      object's first write becomes `NAME.1` (older sessions' shift to `.2` ... `.backup_count`);
      later writes of the session keep no copy. A crash at any point leaves the old or the new
      file, whole; the temp file a crashed writer left is deleted by the next store object's
      first write.
    - Opening: when `.NAME.snapshot` proves the file's folded part unchanged (see `snapshot`),
      the index comes from it and memories are read from their blocks when first asked for;
      each append adds a line to the snapshot's journal, and when the journal proves the whole
      file the recent part is not parsed either.
    - Writes hold `NAME.lock` (filelock); people's editors take no lock. Whenever the file
      changed since this store last saw it (another process, or a person's save), it is read
      (once still, for saves made in place) and merged with what the store holds
      (`edit_merge`): edits and hand deletions are kept, and so is every memory the file's
      writer never saw. The file is checked again just before it is replaced, the replaced file
      is compared with what was read, and it is watched for a few seconds for a save that lands
      in it late: a save that lands at any moment is merged into the next write.
    - Reads come from the cache; it is refreshed (merged) when the file's inode, size or mtime
      changed. After a write it holds the memories as the file does (timestamps to the second,
      see `markdown_format`), so a reload gives what this store already returned.
    - Blocks that do not parse are reported by `problems()` and written back verbatim.
    """

    def __init__(
        self,
        path: Path,
        *,
        backup_count: int = 3,
        lock_timeout: float = 30.0,
        recent_limit: int | None = None,
        clock: IClock | None = None,
    ) -> None:
        super().__init__()
        self._now = utc_now if clock is None else clock.now
        """The time the archive's headers carry: the container's clock (a replay's is its own)."""
        self._recent_limit = RECENT_LIMIT if recent_limit is None else recent_limit
        self._recent_share = RECENT_SHARE if recent_limit is None else 0
        """An explicit `recent_limit` is a fixed bound; the default grows with the file."""
        # a symlinked Memories.md is written where it points, so the link keeps seeing writes
        self._path = Path(path).resolve() if Path(path).is_symlink() else Path(path)
        self._crlf = False
        """The file used CRLF line ends when read: it is written back with them."""
        self._bom = False
        """The file started with a UTF-8 byte-order mark: it is written back with one."""
        if backup_count < 0:
            raise StoreError(f"backup_count: must be >= 0, got {backup_count}")
        self._backup_count = backup_count
        self._backed_up = False
        """This session's backup is taken (the file as it was before the first write)."""
        self._lock_timeout = lock_timeout
        self._file_lock = WriterLock(str(self._path) + ".lock", timeout=lock_timeout)
        self._raw: list[RawBlock] = []
        self._signature: Signature | None = None
        self._blocks = EntryRenderCache()
        self._temps_checked = False
        self._history = EditHistory()
        self._hand_deleted: set[str] = set()
        """Memories a person deleted: cairn's later changes to them are dropped, not errors."""
        self._watched: list[_Watched] = []
        self._unwritten = False
        """The cache holds memories the file lacks (kept by a merge): the next write has them."""
        self._unpinned = False
        """The file holds memories a person wrote without cairn's comment: they take the file's
        modification time at each read, so the next write is a fold, which writes their
        comments (their ids and times stay put from then on). Reading alone writes nothing."""
        self._pending: dict[str | int, None] = {}
        """Memories (ids) and location records (ids) a merge kept that the live file lacks or
        holds in another version: the next append writes them."""
        self._recent = AppendedPart(RECENT_TITLE)
        self._recent_bytes = 0
        """The size of the file's recent part (appended units of work not folded yet)."""
        self._folded_bytes = 0
        """The size of the file's folded part (all of the file before its recent part)."""
        self._journal: Journal | None = None
        """Extends the snapshot of the file this store wrote (or loaded) with each append."""
        self._appended = False
        """This store appended to the file: closing it folds the recent part."""
        self._remnants: deque[bytes] = deque(maxlen=_REMNANTS_KEPT)
        """The bytes of units this store found left after a save's text and did not read (see
        `_saved_meanwhile`): a copy an editor took while they stood there carries them."""
        self._tail: int | None = None
        """The live file, open for appends: kept from one append to the next while it is the
        file this store last saw (one open per fold, not one per write)."""
        self._tail_clean: Signature | None = None
        """The file's signature when this store's last append left it ending with a line end
        (then the next append need not read its last byte)."""
        self._archive_path = self._path.with_name(archive_name(self._path.name))
        self._archived_ids: set[str] = set()
        """Memories this store moved to the archive: an editor's stale copy may still hold
        them, and the merge must not bring them back."""
        self.merges: Counter[str] = Counter()
        """Saves by others merged, by where they were found: `file` (changed since the store
        last looked), `check` (found by the check just before a swap), `swap` (landed between
        that check and the swap), `late` (saved into a file this store had already replaced)."""
        ensure_folder(self._path.parent)
        with self._lock:
            self._load()

    @property
    def path(self) -> Path:
        return self._path

    # -- reading -------------------------------------------------------------------------------

    def _parse(self, data: bytes, modified_ns: int) -> ParsedFile:
        if self._remnants:
            data = self._without_remnants(data)
        text = data.decode("utf-8", errors="surrogateescape")
        self._bom = text.startswith("\ufeff")
        text = text.removeprefix("\ufeff")  # an editor's byte-order mark is no text
        self._crlf = "\r\n" in text
        if self._crlf:
            text = text.replace("\r\n", "\n")
        at = text.find("\n" + RECENT_HEADER)
        self._recent_bytes = len(text) - at if at >= 0 else 0
        self._folded_bytes = len(text) - self._recent_bytes
        parsed = parse(text, str(self._path), created_at=_time_of(modified_ns))
        self._unpinned = self._unpinned or bool(parsed.unpinned)
        for problem in parsed.problems:
            log.warning("%s", problem)
        if parsed.cut_short:
            log.info(
                "%s: %d blocks of a unit of work that was being appended were not read (a"
                " copy taken while cairn wrote, or a write cut short)",
                self._path,
                parsed.cut_short,
            )
        return parsed

    def _without_remnants(self, data: bytes) -> bytes:
        """`data` without the remnants of units this store cut from a save that it holds
        (each whole, at a line's start): an editor's copy of the file taken while one stood
        after the saved text, saved since, would keep it as text that does not parse (and a
        section header in it would take in every block below). Their memories are in the
        store; the file is written again without them."""
        for remnant in self._remnants:  # (each without its last line end: an editor may
            at = data.find(remnant)  # have taken it off, adding text after it)
            end = at + len(remnant)
            if at < 0 or (at and data[at - 1 : at] != b"\n") or data[end : end + 1] not in b"\r\n":
                continue
            data = data[:at] + data[end:]
            self._unwritten = True
            log.info(
                "%s: a save carried %d bytes of a unit cairn had appended (left after a save in"
                " place, and copied by an editor then); not read, and written again without",
                self._path,
                len(remnant),
            )
        return data

    def _read(self) -> tuple[ParsedFile, Signature] | None:
        """The file as it is now (waiting for a save in place to finish), None when missing."""
        got = self._read_bytes()
        if got is None:
            return None
        data, signature = got
        return self._parse(data, signature[2]), signature

    def _read_bytes(self) -> tuple[bytes, Signature] | None:
        """The file's bytes as they are now (a save in place finished), None when missing."""
        in_place = self._signature is not None and self._same_inode()
        try:
            got = read_settled(
                lambda: path_signature(self._path),
                self._path.read_bytes,
                settle=_SETTLE_SECONDS if in_place else 0.0,
                timeout=_SETTLE_TIMEOUT,
                complete=_looks_complete if in_place else lambda data: True,
            )
        except FileNotFoundError:
            return None
        except OSError as e:
            raise StoreError(f"{self._path}: cannot read: {e}") from e
        return got

    def _same_inode(self) -> bool:
        now = path_signature(self._path)
        return now is not None and self._signature is not None and now[0] == self._signature[0]

    def _load(self) -> None:
        """Take the file as the truth (when the store opens): from its snapshot when one
        proves the folded part unchanged (memories are then read when first asked for), else
        parsed whole."""
        with gc_paused():
            self._load_file()

    def _load_file(self) -> None:
        self._unpinned = False  # (what the file holds now decides)
        got = self._read_bytes()
        if got is None:
            self._cache, self._raw, self._problems = MemoryCache(), [], []
            self._signature = None
            self._history.observe(self._cache)
            return
        data, self._signature = got
        if self._load_snapshot(data):
            return
        parsed = self._parse(data, self._signature[2])
        self._cache, self._raw, self._problems = parsed.cache, parsed.raw, parsed.problems
        self._history.observe(self._cache)

    def _load_snapshot(self, data: bytes) -> bool:
        """Load from the snapshot and parse the recent part on top; False when no snapshot
        proves the file's folded part (or the file is one the snapshot does not cover)."""
        assert self._signature is not None
        if data.startswith(b"\xef\xbb\xbf") or b"\r\n" in data:
            return False  # a byte-order mark or CRLF line ends: parsed whole
        modified = _time_of(self._signature[2])
        loaded = read_snapshot(self._path, data, modified)
        if loaded is None:
            return False
        tail = data[loaded.size :].decode("utf-8", errors="surrogateescape")
        if tail and not tail.startswith("\n" + RECENT_HEADER):
            return False  # something other than appended units follows: parsed whole
        self._bom = self._crlf = False
        self._recent_bytes = len(data) - loaded.folded
        self._folded_bytes = loaded.folded
        self._drop_journal()
        self._journal = loaded.journal
        cache = loaded.cache
        # the blocks read from the proven file are written again as they are by a fold
        self._blocks = EntryRenderCache()
        loaded.source.seen = self._blocks.seed
        self._history.observe_loaded(cache, loaded.source.original)
        problems = loaded.problems
        raw = loaded.raw
        if tail:
            recent = parse(tail, str(self._path), created_at=modified)
            self._unpinned = bool(recent.unpinned)  # (the proven part's are all pinned)
            cache.apply_all(
                UpdateOp(entry) if entry.id in cache else AddOp(entry)
                for entry in recent.cache.memories.values()
            )
            cache.locations.update(recent.cache.locations)
            raw = raw + recent.raw
            problems = problems + [
                p.model_copy(update={"line": p.line + loaded.lines}) for p in recent.problems
            ]
            self._history.observe(cache, list(recent.cache.memories))
        for problem in problems:
            log.warning("%s", problem)
        self._cache, self._raw, self._problems = cache, raw, problems
        return True

    def _merge(self, parsed: ParsedFile | None, source: str) -> None:
        """Merge a file someone else saved (None: the file was removed) into the cache."""
        self.merges[source] += 1
        self._drop_journal()
        theirs = parsed.cache if parsed is not None else MemoryCache()
        result = self._history.merge(theirs, self._cache, archived=self._archived_ids)
        if result.shrink:
            log.warning(
                "%s: a save (%s) lost %d of %d memories at once; kept them (delete in bulk"
                " with cairn stopped)",
                self._path,
                source,
                len(result.restored),
                len(self._cache.memories),
            )
        elif result.restored:
            log.info(
                "%s: kept %d memories that a save (%s) never saw",
                self._path,
                len(result.restored),
                source,
            )
        if result.deleted:
            log.info("%s: %d memories deleted by hand", self._path, len(result.deleted))
        self._hand_deleted.update(result.deleted)
        self._cache = ordered(result.cache)
        if parsed is not None:
            self._raw, self._problems = parsed.raw, parsed.problems
        if parsed is not None and source in _LIVE_IS_THEIRS:
            # The live file is theirs: what the merge kept of ours is appended to it, in a
            # recent part of its own (theirs may end anywhere).
            self._pending.update(dict.fromkeys(_differing(self._cache, theirs)))
            self._recent = AppendedPart(RECENT_TITLE)
        else:  # the file is gone, or the live file is ours and lacks their edits: a fold
            self._unwritten = True

    def _refresh(self) -> None:
        """Merge whatever was saved into the file since this store last looked (one stat per
        read; saves into the files it replaced are checked by writes and `close`)."""
        if path_signature(self._path) != self._signature:
            got = self._read()
            self._merge(got[0] if got else None, "file")
            self._signature = got[1] if got else None

    def _check_watched(self) -> None:
        now = time.monotonic()
        for watched in list(self._watched):
            try:
                changed = signature_of(os.fstat(watched.fd)) != watched.signature
                got = _read_open(watched.fd) if changed else None
            except OSError:
                self._unwatch(watched)
                continue
            if got is not None:
                data, watched.signature = got
                self._merge(self._parse(data, watched.signature[2]), "late")
            if now - watched.since > _WATCH_SECONDS:
                self._unwatch(watched)

    def _unwatch(self, watched: _Watched) -> None:
        with contextlib.suppress(OSError):
            os.close(watched.fd)
        self._watched.remove(watched)

    def reload(self) -> None:
        with self._lock:
            self._outside_unit("reload")
            self._refresh()

    # -- writing -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            with self._file_lock.held():
                yield
        except Timeout as e:
            raise StoreLockedError(
                f"{self._path}: another process holds {self._file_lock.lock_file}"
                f" (waited {self._lock_timeout} s)"
            ) from e

    def _commit(self, ops: Sequence[StoreOp]) -> MemoryCache:
        with self._locked():
            self._refresh()
            self._check_watched()
            ops = [_as_written(op) for op in self._without_hand_deleted(ops)]
            touched = _touched(ops)
            with self._cache.applying(ops):  # undone when the write fails
                if not self._append(ops, touched):
                    deletes = any(isinstance(op, DeleteOp) for op in ops)
                    self._fold(touched, appendable=not deletes)
        return self._cache

    def _can_append(self, ops: Sequence[StoreOp], *, bounded: bool = True) -> bool:
        """Whether a unit of work may be appended rather than written by a fold: the file is
        known, this session's backup is taken, nothing is deleted, the live file is not one
        that lacks someone's edits, and (`bounded`) the recent part is within its bound."""
        return (
            self._signature is not None
            and (self._backed_up or self._backup_count == 0)
            and not self._unwritten
            and not self._unpinned
            and (not bounded or self._recent_bytes < self._recent_bound())
            and not any(isinstance(op, DeleteOp) for op in ops)
        )

    def _recent_bound(self) -> int:
        """The recent part's size past which a write folds: `recent_limit`, or the folded
        part's size over `RECENT_SHARE` when that is more (no growth for a limit of 0)."""
        limit = self._recent_limit
        if limit <= 0 or self._recent_share <= 0:
            return limit
        return max(limit, self._folded_bytes // self._recent_share)

    def _drop_journal(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def _journal_append(self, text: str, data: bytes, start: int) -> None:
        """Extend the snapshot's journal with the unit just appended at `start` (bytes), when
        the journal has reached exactly there; else stop keeping it."""
        journal = self._journal
        if journal is None:
            return
        if journal.size != start:
            self._drop_journal()
            return
        index = self._cache.index
        rows: list[JournalRow] = []
        for entry_id, begin, end, name in self._recent.taken:
            order, meta = index.order.get(entry_id), index.meta.get(entry_id)
            if order is None or meta is None:
                self._drop_journal()  # not in the cache (should not happen): no journal
                return
            rank = meta[2][0] if meta[2] is not None else (None, None)
            rows.append(
                [entry_id, *order, meta[0], list(meta[1]), rank[0], rank[1], begin, end, name]
            )
        if not journal.append(text, data, rows, self._recent.taken_records):
            self._drop_journal()

    def _append(
        self, ops: Sequence[StoreOp], touched: list[str], *, bounded: bool = True
    ) -> bool:
        """Append the unit of work's blocks (and the records of visited locations), with what
        merges kept that the file lacks, to the recent part, durably (a unit that only counts
        visits: synced by the next durable one, see `visits_only`). When someone saves the
        file meanwhile, that save is merged and the difference appended to it. False when it
        must be folded instead (see `_can_append`)."""
        visited = [op.location_id for op in ops if isinstance(op, VisitOp)]
        if not self._backed_up and self._signature is not None and self._cache.unread:
            # a session that opened from the snapshot takes its backup as a copy and appends
            # (a fold would read every memory); one that parsed the file folds it first, which
            # also writes an older file in today's form
            self._copy_backup()
        for _ in range(_MAX_ROUNDS):
            if not self._can_append(ops, bounded=bounded):
                return False
            written = [*self._pending, *visited, *touched]
            durable = bool(self._pending) or not visits_only(ops)
            if self._append_once(written, durable=durable):
                self._pending.clear()
                memories = [i for i in written if isinstance(i, str)]
                records = {i for i in written if isinstance(i, int)}
                records.update(
                    e.location_id
                    for i in memories
                    if (e := self._cache.get(i)) is not None and e.location_id is not None
                )
                self._history.observe(self._cache, memories, records)
                return True
        return False

    def _append_once(self, ids: list[str | int], *, durable: bool = True) -> bool:
        """Append the current versions of these memories (str ids) and location records (int
        ids), synced to disk when `durable` (which also syncs any appends before it). False
        when someone saved the file meanwhile (merged: try again)."""
        part = self._recent
        for item in dict.fromkeys(ids):
            if isinstance(item, int):
                if item in self._cache.locations:
                    part.add_location(self._cache.locations[item])
            elif (entry := self._cache.get(item)) is not None:
                part.add_memory(self._cache, entry)
        section = part.section
        text = part.take()
        if self._crlf:
            text = text.replace("\n", "\r\n")
        data = text.encode("utf-8", errors="surrogateescape")
        try:
            fd, before = self._open_tail()
        except FileNotFoundError:
            return self._saved_meanwhile("check")
        except OSError as e:
            raise StoreError(f"{self._path}: cannot write: {e}") from e
        try:
            if before != self._signature:  # saved since the check: merge first
                self._close_tail()
                return self._saved_meanwhile("check")
            known_end = not before[1] or before == self._tail_clean
            if not known_end and os.pread(fd, 1, before[1] - 1) != b"\n":
                data = b"\n" + data  # the file ends mid-line (a write cut short): end it first
                self._drop_journal()
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if durable:
                    _datasync(fd)  # the data and the new size: what a reader needs
            except OSError:
                # no half block may stay behind to be read as a memory: cut it off again
                with contextlib.suppress(OSError):
                    if os.fstat(fd).st_size > before[1]:
                        os.ftruncate(fd, before[1])
                        os.fsync(fd)
                raise
            after = signature_of(os.fstat(fd))
        except OSError as e:
            self._close_tail()
            raise StoreError(f"{self._path}: cannot write: {e}") from e
        self._appended = True
        self._recent_bytes += len(data)
        if after[1] != before[1] + len(data) or path_signature(self._path) != after:
            # an editor saved while the blocks were appended: merge what the file holds now
            self._pending.update(dict.fromkeys(ids))
            landed = self._landed(fd, data, before)
            return self._saved_meanwhile("append", written=landed, unit=ids)
        self._signature = self._tail_clean = after  # (`take` ends the text with a line end)
        part.section = section
        if not self._crlf:
            self._journal_append(text, data, before[1])
        else:
            self._drop_journal()
        return True

    def _open_tail(self) -> tuple[int, Signature]:
        """The live file open for appends, and its signature now: the descriptor kept from the
        last append while its file is the one this store last saw (else opened again; a file
        that replaced it after `_refresh` is found by the check after the write)."""
        if self._tail is not None:
            signature = signature_of(os.fstat(self._tail))
            if signature == self._signature:
                return self._tail, signature
            self._close_tail()
        self._tail = os.open(self._path, os.O_RDWR | os.O_APPEND)
        return self._tail, signature_of(os.fstat(self._tail))

    def _close_tail(self) -> None:
        if self._tail is not None:
            with contextlib.suppress(OSError):
                os.close(self._tail)
            self._tail = self._tail_clean = None

    @staticmethod
    def _landed(fd: int, data: bytes, before: Signature) -> tuple[int, bytes] | None:
        """Where the unit just written (`data`) landed, when the file was shorter then than
        at the check (`before`): a save in place (truncate, then write) was under way, and its
        rest may have been written over the unit's start (see `_remnant`). None otherwise."""
        try:
            landed = os.lseek(fd, 0, os.SEEK_CUR) - len(data)  # (O_APPEND: it went to the end)
        except OSError:
            return None
        return (landed, data) if 0 <= landed < before[1] else None

    def _saved_meanwhile(
        self,
        source: str,
        written: tuple[int, bytes] | None = None,
        unit: list[str | int] | None = None,
    ) -> bool:
        """Someone saved the file while a unit of work was being appended: merge it (the
        memories it lacks become pending) and start a new recent part. When the unit just
        `written` (where it landed, its bytes) landed in a save in place, what is left of it
        after the saved text (all of it, or its end) is not read, and the file is written
        again without it (a fold). `unit`: the ids of the memories and location records the
        unit wrote, whose versions the saved file may hold from now on (see
        `EditHistory.held_too`)."""
        wrote = self._cache  # (the versions the unit wrote: the merge makes a new cache)
        got = self._read_bytes()
        parsed: ParsedFile | None = None
        cut: int | None = None
        if got is not None:
            data, signature = got
            cut = _remnant(data, *written) if written is not None else None
            if cut is not None:
                if b"<!-- cairn " in data[cut:]:  # (one too short to tell apart is not kept)
                    self._remnants.append(data[cut:].rstrip(b"\r\n"))
                log.info(
                    "%s: a save in place met a unit cairn was appending; the %d bytes of it"
                    " left after the saved text are dropped (its memories are kept)",
                    self._path,
                    len(data) - cut,
                )
            parsed = self._parse(data[:cut], signature[2])
        self._merge(parsed, source)
        if unit is not None:
            self._history.held_too(wrote, unit)
        self._signature = got[1] if got else None
        if cut is not None:
            self._unwritten = True  # the file still holds the remnant: a fold drops it
        return False

    def _fold(self, touched: list[str] | None, *, appendable: bool = True) -> None:
        """Write the whole file from the cache (the recent part folded into the sections), by
        a swap; merge what someone saved meanwhile and write again. When saves keep landing
        before the swap, and the fold deletes nothing (`appendable`), append to the saved file
        what it lacks instead."""
        rounds: Counter[str] = Counter()
        for _ in range(_MAX_ROUNDS):
            with gc_paused():  # (as a load: what it makes stays alive, or is freed at once)
                rendered = render_file(self._cache, self._raw, self._blocks)
            displaced = self._replace(rendered.text)
            self._close_tail()  # (the file it was open on is replaced)
            held = self._cache.memories  # (every memory is read: the fold rendered them)
            for entry in rendered.cache.memories.values():  # timestamps as the file has them
                if held.get(entry.id) is not entry:
                    self._cache.apply(UpdateOp(entry))
            # Kept blocks moved: report their problems at their new lines (the ones that a
            # rewrite resolves, such as a location's sections written twice, are gone now).
            self._problems = rendered.problems(str(self._path))
            self._history.observe(self._cache, touched if not self._unwritten else None)
            self._unwritten = self._unpinned = False
            self._pending.clear()
            self._recent = AppendedPart(RECENT_TITLE)
            self._recent_bytes = 0
            self._folded_bytes = len(rendered.text)
            if displaced is None:
                self._snapshot(rendered)
                return
            # Someone saved between the read and the swap: merge that, and write again.
            self._merge(*displaced)
            rounds[displaced[1]] += 1
            # saves keep coming faster than a fold: append to the last one what it lacks
            outpaced = appendable and rounds["check"] >= _FOLD_TRIES
            if outpaced and self._append([], [], bounded=False):
                return
        found = ", ".join(f"{k} {v}" for k, v in rounds.most_common())
        raise StoreError(f"{self._path}: the file kept changing ({_MAX_ROUNDS} writes; {found})")

    def _snapshot(self, rendered: RenderedFile) -> None:
        """Keep the snapshot of the file just written (see `snapshot`)."""
        self._drop_journal()
        if self._crlf or self._bom:
            remove_snapshot(self._path)
            return
        data = rendered.text.encode("utf-8", errors="surrogateescape")
        with gc_paused():  # (its rows, a million for a million rooms, are no garbage)
            self._journal = write_snapshot(
                self._path,
                data,
                self._cache,
                rendered.spans,
                self._raw,
                self._problems,
                len(rendered.text),
            )

    def fold(self) -> None:
        """Fold the recent part into the sections now (and write what a merge kept)."""
        self._outside_unit("fold")
        with self._lock, self._locked():
            self._refresh()
            self._check_watched()
            if self._recent_bytes or self._unwritten or self._pending:
                self._fold([])

    def checkpoint(self) -> None:
        """The end of an episode: move SUPERSEDED memories to the archive and fold."""
        self._outside_unit("checkpoint")
        with self._lock, self._locked():
            self._refresh()
            self._check_watched()
            superseded = self._cache.ids_with_status(MemoryStatus.SUPERSEDED)
            old = [e for i in superseded if (e := self._cache.get(i)) is not None]
            if old:
                self._archive(old)
                self._archived_ids.update(e.id for e in old)
                with self._cache.applying([DeleteOp(e.id) for e in old]):
                    self._fold([e.id for e in old], appendable=False)
            elif self._recent_bytes or self._unwritten or self._pending:
                self._fold([])

    def _archive(self, entries: list[MemoryEntry]) -> None:
        """Append `entries` to the archive file, durably (before the fold drops them: a crash
        between the two leaves them in both files, and readers take the live file's)."""
        part = AppendedPart(f"{ARCHIVE_HEADER} (moved here {self._now():%Y-%m-%d %H:%M:%S} UTC)")
        in_part = sorted(entries, key=lambda e: section_of(e)[0] != "location")
        for entry in in_part:
            part.add_memory(self._cache, entry)
        data = part.take().encode("utf-8", errors="surrogateescape")
        new = not self._archive_path.exists()
        try:
            with open(self._archive_path, "ab") as handle:
                before = os.fstat(handle.fileno()).st_size
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                after = os.fstat(handle.fileno()).st_size
            if new:
                _fsync_dir(self._archive_path.parent)
        except OSError as e:
            raise StoreError(f"{self._archive_path}: cannot write: {e}") from e
        if after == before + len(data):  # nobody else appended meanwhile
            # the cache's entries are as the file keeps them (`as_written`): what a read of
            # the part gives back, as a fold relies on too
            record_part(self._archive_path, before, data, in_part)

    @property
    def archive_path(self) -> Path:
        """The archive file (`NAME.archive.md`): SUPERSEDED memories, not loaded for play."""
        return self._archive_path

    def archived(self, *, newest: int | None = None) -> list[MemoryEntry]:
        """The archive's memories by section; `newest`: the last that many, read from the
        journal's last lines (an archive its journal does not prove to its end is read whole:
        then that many of its newest parts' and parsed memories)."""
        data = self._archive_bytes()
        tail = None if newest is None else read_journal_tail(self._archive_path, data, newest)
        # the last parts, proven by the journal; else the journal's parts in file order, then
        # the parsed rest (by section): N of the newest
        found = tail if tail is not None else self._archive_read(data)
        if newest is not None:
            found = found[-newest:] if newest else []
        whole = MemoryCache()
        whole.memories = {e.id: e for e in found}
        in_order = ordered(whole).memories.values()  # by section, as a parse of it all gives
        with self._lock:
            live = self._cache
            return [e for e in in_order if e.id not in live]

    def archived_count(self) -> int:
        """The archive's memory blocks, counted by their header lines (cairn escapes a text
        line that would start like one), none of them read."""
        data = self._archive_bytes()
        return data.count(b"\n**[") + data.startswith(b"**[")

    def _archive_bytes(self) -> bytes:
        try:
            return self._archive_path.read_bytes()
        except FileNotFoundError:
            return b""
        except OSError as e:
            raise StoreError(f"{self._archive_path}: cannot read: {e}") from e

    def _archive_modified(self) -> datetime | None:
        """The archive's modification time (None when it cannot be read: then "now")."""
        try:
            return _time_of(self._archive_path.stat().st_mtime_ns)
        except OSError:
            return None

    def _archive_read(self, data: bytes) -> list[MemoryEntry]:
        """Every memory of the archive, in file order: the parts its journal proves, then the
        rest parsed."""
        found, covered = read_journal(self._archive_path, data)  # the parts it proves
        if covered < len(data):  # the rest (or all of it) is parsed
            rest = data[covered:].decode("utf-8", errors="surrogateescape")
            # a memory a person wrote there without cairn's comment is dated as in the live
            # file: by the file's modification time (the same at every read, not "now")
            parsed = parse(rest, str(self._archive_path), created_at=self._archive_modified())
            above = data.count(b"\n", 0, covered)  # problems named at their lines in the file
            for problem in parsed.problems:
                log.warning("%s", problem.model_copy(update={"line": problem.line + above}))
            known = {e.id for e in found}
            found += [e for e in parsed.cache.memories.values() if e.id not in known]
        return found

    def _without_hand_deleted(self, ops: Sequence[StoreOp]) -> list[StoreOp]:
        """`ops` less those that change a memory a person deleted (the deletion wins)."""
        if not self._hand_deleted:
            return list(ops)
        kept = [op for op in ops if _target(op) not in self._hand_deleted]
        if len(kept) < len(ops):
            log.info(
                "%s: dropped %d changes to memories deleted by hand",
                self._path,
                len(ops) - len(kept),
            )
        return kept

    def _replace(self, text: str) -> tuple[ParsedFile | None, str] | None:
        """Write `text` as the file. Returns what someone else had saved in the file since it was
        read, and where it was found (the caller merges it and writes again), None when nobody
        had."""
        if self._crlf:
            text = text.replace("\n", "\r\n")
        if self._bom:
            text = "\ufeff" + text
        data = text.encode("utf-8", errors="surrogateescape")
        if not self._temps_checked:
            self._remove_stale_temps()
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{self._path.name}.", suffix=".tmp", dir=self._path.parent
        )
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, file_mode(self._path))
            if path_signature(self._path) != self._signature:  # saved since read: merge first
                tmp.unlink()
                got = self._read()
                self._signature = got[1] if got else None
                return (got[0] if got else None), "check"
            if self._signature is not None and exchange(tmp, self._path):
                return self._keep_displaced(tmp)
            self._rotate_backups()
            os.replace(tmp, self._path)
            _fsync_dir(self._path.parent)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"{self._path}: cannot write: {e}") from e
        self._signature = path_signature(self._path)
        self._backed_up = True  # a session that found no file has nothing to back up
        return None

    def _keep_displaced(self, displaced: Path) -> tuple[ParsedFile, str] | None:
        """After a swap, `displaced` holds the file that was live: keep it as `NAME.1`, watch
        it, and return its content when it is not what this store had read."""
        read_signature = self._signature
        fd = os.open(displaced, os.O_RDONLY)
        self._signature = path_signature(self._path)
        signature = signature_of(os.fstat(fd))
        self._watched.append(_Watched(fd, signature, time.monotonic()))
        while len(self._watched) > _WATCHED_FILES:
            self._unwatch(self._watched[0])
        if self._backup_count and not self._backed_up:
            self._shift_backups()
            os.replace(displaced, self._backup(1))
            self._backed_up = True
        else:
            displaced.unlink()
        _fsync_dir(self._path.parent)
        if signature == read_signature:
            return None
        got = read_settled(
            lambda: signature_of(os.fstat(fd)),
            lambda: read_fd(fd),
            settle=_SETTLE_SECONDS,
            timeout=_SETTLE_TIMEOUT,
        )
        if got is None:
            return None
        self._watched[-1].signature = got[1]
        return self._parse(got[0], got[1][2]), "swap"

    def _remove_stale_temps(self) -> None:
        """Delete the temp files of writers that crashed mid-write (called under the lock:
        only a lock holder creates them, so any there now is stale)."""
        pattern = f".{glob.escape(self._path.name)}.*.tmp"
        for stale in self._path.parent.glob(pattern):
            with contextlib.suppress(OSError):
                stale.unlink()
        self._temps_checked = True

    def _backup(self, n: int) -> Path:
        return self._path.with_name(f"{self._path.name}.{n}")

    def _shift_backups(self) -> None:
        """Shift NAME.1..NAME.(k-1) up by one."""
        for n in range(self._backup_count - 1, 0, -1):
            with contextlib.suppress(FileNotFoundError):
                os.replace(self._backup(n), self._backup(n + 1))

    def _copy_backup(self) -> None:
        """This session's backup, taken as a copy (appends change the file in place, so a
        hard link would change with it): the file as the session found it becomes NAME.1."""
        self._backed_up = True
        if self._backup_count == 0:
            return
        tmp = self._backup(1).with_name(self._backup(1).name + ".tmp")
        try:
            shutil.copyfile(self._path, tmp)
            self._shift_backups()
            os.replace(tmp, self._backup(1))
            _fsync_dir(self._path.parent)
        except FileNotFoundError:
            tmp.unlink(missing_ok=True)  # no file to keep after all (removed meanwhile)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"{self._path}: cannot keep a backup: {e}") from e

    def _rotate_backups(self) -> None:
        """Shift the backups and hard-link the current file as NAME.1 (no exchange here), once
        per session."""
        if self._backup_count == 0 or self._signature is None or self._backed_up:
            return  # no backups wanted, no file to keep (this store saw none), or taken
        self._backed_up = True
        self._shift_backups()
        link = self._backup(1).with_name(self._backup(1).name + ".tmp")
        try:
            self._link_or_copy(link)
        except FileExistsError:  # left by a writer that crashed here
            link.unlink()
            self._link_or_copy(link)
        except FileNotFoundError:  # no file to keep after all (removed meanwhile)
            return
        os.replace(link, self._backup(1))

    def _link_or_copy(self, link: Path) -> None:
        try:
            os.link(self._path, link)
        except (FileExistsError, FileNotFoundError):
            raise
        except OSError:  # no hard links on this file system: copy instead
            link.write_bytes(self._path.read_bytes())

    def close(self) -> None:
        """Write what a merge kept that the file lacks, then stop watching replaced files."""
        with self._lock:
            self._check_watched()
            if self._unwritten or self._pending or (self._appended and self._recent_bytes):
                try:
                    with self._locked():
                        self._refresh()
                        self._fold([])
                except StoreError as e:
                    log.warning("%s: not folded on close: %s", self._path, e)
            for watched in list(self._watched):
                self._unwatch(watched)
            self._close_tail()
            self._drop_journal()
            self._file_lock.close()


def _read_open(fd: int) -> tuple[bytes, Signature] | None:
    """An open file's content once still (an editor may be saving into it)."""
    return read_settled(
        lambda: signature_of(os.fstat(fd)),
        lambda: read_fd(fd),
        settle=_SETTLE_SECONDS,
        timeout=_SETTLE_TIMEOUT,
        complete=_looks_complete,
    )


def _time_of(modified_ns: int) -> datetime:
    """A file's modification time (nanoseconds) as the time a memory without cairn's comment
    is given."""
    return datetime.fromtimestamp(modified_ns / 1e9, tz=UTC)


def _remnant(data: bytes, landed: int, unit: bytes) -> int | None:
    """Where what is left of a unit appended during a save in place starts in `data` (the
    file as it is now), or None when nothing is. The unit (`unit`) landed at byte `landed`,
    in a file the save had cut short; the file is as long as when the unit was written. The
    save may have finished before the unit landed (the unit stands whole after the saved
    text), or written its rest over the unit's start (the unit's end stands after it): the
    cut then falls at the end of a line (a saved Memories.md ends with one), at or before
    where the saved text ends (bytes the saved text shares with the unit at the same places
    are the unit's own)."""
    end = landed + len(unit)
    if len(data) != end:
        return None  # changed since
    if data[landed:] == unit:
        return landed
    start = end
    while start > landed and data[start - 1] == unit[start - 1 - landed]:
        start -= 1
    if start == end:
        return None  # the file does not end with the unit's end
    line_end = data.find(b"\n", start - 1)
    return line_end + 1 if 0 <= line_end < end - 1 else None


def _looks_complete(data: bytes) -> bool:
    """Not a save in progress: not empty, and ends with a line end."""
    return data.endswith(b"\n")


def _target(op: StoreOp) -> str | None:
    """The id of the existing memory an op changes (None for adds and visits)."""
    if isinstance(op, UpdateOp):
        return op.entry.id
    if isinstance(op, SupersedeOp):
        return op.old_id
    if isinstance(op, DeleteOp):
        return op.entry_id
    return None


_LIVE_IS_THEIRS = frozenset({"file", "check", "append"})
"""Merges after which the live file is the one merged (not one this store wrote since)."""


def _differing(ours: MemoryCache, theirs: MemoryCache) -> list[str | int]:
    """The memories and location records `ours` holds that `theirs` lacks or holds otherwise."""
    found: list[str | int] = [
        i for i, e in ours.memories.items() if theirs.memories.get(i) not in (e,)
    ]
    for loc_id, record in ours.locations.items():
        other = theirs.locations.get(loc_id)
        if other is None or other != record:
            found.append(loc_id)
    return found


def _as_written(op: StoreOp) -> StoreOp:
    """`op` with its entry as the file keeps it (timestamps to the second)."""
    if isinstance(op, AddOp):
        return AddOp(as_written(op.entry))
    if isinstance(op, UpdateOp):
        return UpdateOp(as_written(op.entry))
    return op


def _touched(ops: Sequence[StoreOp]) -> list[str]:
    """The ids of the memories `ops` add or change."""
    ids = [op.entry.id for op in ops if isinstance(op, AddOp)]
    ids += [t for t in map(_target, ops) if t is not None]
    return ids


