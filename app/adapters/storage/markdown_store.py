"""MarkdownMemoryStore: Memories.md, written atomically once per unit of work under a file lock.

What it does when a person saves the file while it writes (the live-edit protocol) is stated
in one place, `live_edit`, as numbered rules with their constants.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from filelock import Timeout

from cairn.adapters.files import ensure_folder
from cairn.adapters.storage.cached_store import CachedStore
from cairn.adapters.storage.edit_merge import EditHistory, differing
from cairn.adapters.storage.file_lock import WriterLock
from cairn.adapters.storage.file_swap import Signature, modified_time
from cairn.adapters.storage.gc_pause import gc_paused
from cairn.adapters.storage.hand_deletions import HandDeletions
from cairn.adapters.storage.kept_snapshot import KeptSnapshot
from cairn.adapters.storage.live_edit import FOLD_TRIES, MAX_ROUNDS
from cairn.adapters.storage.live_file import LiveFile, UnitAppender
from cairn.adapters.storage.markdown_archive import ArchiveFile
from cairn.adapters.storage.markdown_backups import SessionBackups
from cairn.adapters.storage.markdown_blocks import as_written
from cairn.adapters.storage.markdown_layout import RawBlock
from cairn.adapters.storage.markdown_parse import ParsedFile
from cairn.adapters.storage.markdown_render import EntryRenderCache, ordered, render_file
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.adapters.storage.store_ops import (
    AddOp,
    DeleteOp,
    StoreOp,
    UpdateOp,
    VisitOp,
    touched_ids,
    visits_only,
)
from cairn.adapters.storage.torn_units import AppendedUnits
from cairn.adapters.storage.unit_remnants import Remnants
from cairn.errors import StoreError, StoreLockedError
from cairn.interfaces.clock import IClock
from cairn.models.memory import MemoryEntry, MemoryStatus, utc_now

log = logging.getLogger(__name__)

RECENT_LIMIT = 64 * 1024
"""Bytes of appended units of work after which the next write folds the file (at least: see
`RECENT_SHARE`)."""
RECENT_SHARE = 8
"""The recent part may also grow to the folded part's size over this: a fold rewrites the whole
file, so folds come at sizes growing by a constant factor and cost O(1) per write amortized
(a load does not parse a recent part its snapshot's journal covers)."""
_LIVE_IS_THEIRS = frozenset({"file", "check", "append"})
"""Merges after which the live file is the one merged (not one this store wrote since)."""


class MarkdownMemoryStore(CachedStore):
    """Memories in a human-editable Markdown file (see `markdown_layout` for the layout).

    - Every unit of work is one write, usually an append: its blocks go to the `# Recent
      Memories` part at the end of the file, between unit markers, and are fdatasynced (a
      reader ignores a unit whose end it has not read). A fold writes the whole file instead
      (the recent part folded into the sections) by a swap (`LiveFile.replace`); folds happen
      at the session's first write (when the store parsed the file), past the recent part's
      bound (`RECENT_LIMIT` bytes, or the folded part's size over `RECENT_SHARE` when more:
      amortized O(1) per write), at `checkpoint` (an episode's end: SUPERSEDED memories move
      to `NAME.archive.md` first), on close, and for deletions. Backups are per session
      (`SessionBackups`). A crash at any point leaves the old or the new file, whole; the temp
      file a crashed writer left is deleted by the next store object's first write.
    - Opening: when `.NAME.snapshot` proves the file's folded part unchanged (see `snapshot`),
      the index comes from it and memories are read from their blocks when first asked for;
      each append adds a line to the snapshot's journal (`KeptSnapshot`), and when the journal
      proves the whole file the recent part is not parsed either.
    - Writes hold `NAME.lock` (filelock); people's editors take no lock. Whenever the file
      changed since this store last saw it (another process, or a person's save), it is read
      (once still, for saves made in place) and merged with what the store holds
      (`edit_merge`): edits and hand deletions are kept, and so is every memory the file's
      writer never saw. The file is checked again just before it is replaced, the replaced file
      is compared with what was read, and it is watched for a few seconds for a save that lands
      in it late (`WatchedFiles`): a save that lands at any moment is merged into the next
      write. The rules, numbered, with their constants and reasons: `live_edit`.
    - Reads come from the cache; it is refreshed (merged) when the file's inode, size or mtime
      changed. After a write it holds the memories as the file does (timestamps to the second,
      see `markdown_layout`), so a reload gives what this store already returned.
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
        self._recent_limit = RECENT_LIMIT if recent_limit is None else recent_limit
        self._recent_share = RECENT_SHARE if recent_limit is None else 0
        """An explicit `recent_limit` is a fixed bound; the default grows with the file."""
        # a symlinked Memories.md is written where it points, so the link keeps seeing writes
        self._path = Path(path).resolve() if Path(path).is_symlink() else Path(path)
        self._file = LiveFile(self._path, SessionBackups(self._path, backup_count))
        self._lock_timeout = lock_timeout
        self._file_lock = WriterLock(str(self._path) + ".lock", timeout=lock_timeout)
        self._raw: list[RawBlock] = []
        self._blocks = EntryRenderCache()
        self._history = EditHistory()
        self._hand_deleted = HandDeletions(self._path)
        self._unwritten = False
        """The cache holds memories the file lacks (kept by a merge): the next write has them."""
        self._unpinned = False
        """The file holds memories a person wrote without cairn's comment: they take the file's
        modification time at each read, so the next write is a fold, which writes their
        comments (their ids and times stay put from then on). Reading alone writes nothing."""
        self._pending: dict[str | int, None] = {}
        """Memories (ids) and location records (ids) a merge kept that the live file lacks or
        holds in another version: the next append writes them."""
        self._snapshots = KeptSnapshot(self._path)
        self._units = AppendedUnits(self._path)
        """The units this store appended last, by their bytes (see `_parse`)."""
        self._appender = UnitAppender(self._file, self._snapshots, self._units)
        self._remnants = Remnants(self._path)
        """What is left of units this store cut from a save (see `_saved_meanwhile`)."""
        self._archive = ArchiveFile(self._path, utc_now if clock is None else clock.now)
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
        if self._units:
            data, torn = self._units.without_torn(data)
            self._unwritten = self._unwritten or torn  # (the file is written again without it)
        parsed = self._file.parse(data, modified_ns)
        self._unpinned = self._unpinned or bool(parsed.unpinned)
        return parsed

    def _without_remnants(self, data: bytes) -> bytes:
        """`data` without the remnants of units this store cut from a save that it holds
        (`Remnants.without`). Their memories are in the store; the file is written again
        without them."""
        data, found = self._remnants.without(data)
        if found:
            self._unwritten = True
        return data

    def _read(self) -> tuple[ParsedFile, Signature] | None:
        """The file as it is now (waiting for a save in place to finish), None when missing."""
        got = self._file.read()
        if got is None:
            return None
        data, signature = got
        parsed = self._parse(data, signature[2])
        parsed.start_of_known = self._file.took(data)  # (its bytes, before any remnant cut)
        return parsed, signature

    def _load(self) -> None:
        """Take the file as the truth (when the store opens): from its snapshot when one
        proves the folded part unchanged (memories are then read when first asked for), else
        parsed whole."""
        with gc_paused():
            self._load_file()

    def _load_file(self) -> None:
        self._unpinned = False  # (what the file holds now decides)
        got = self._file.read(utf8=True)
        if got is None:
            self._cache, self._raw, self._problems = MemoryCache(), [], []
            self._file.signature = None
            self._history.observe(self._cache)
            return
        data, self._file.signature = got
        self._file.known = [data]
        modified = modified_time(self._file.signature[2])
        proven = self._snapshots.load(data, modified, self._history)
        if proven is not None:
            self._file.bom = self._file.crlf = False
            self._file.recent_bytes = len(data) - proven.folded
            self._file.folded_bytes = proven.folded
            self._blocks, self._unpinned = proven.blocks, proven.unpinned
            for problem in proven.problems:
                log.warning("%s", problem)
            self._cache, self._raw, self._problems = proven.cache, proven.raw, proven.problems
            return
        parsed = self._parse(data, self._file.signature[2])
        self._cache, self._raw, self._problems = parsed.cache, parsed.raw, parsed.problems
        self._history.observe(self._cache)

    def _merge(self, parsed: ParsedFile | None, source: str) -> None:
        """Merge a file someone else saved (None: the file was removed) into the cache."""
        self.merges[source] += 1
        self._snapshots.drop()
        theirs = parsed.cache if parsed is not None else MemoryCache()
        cut = (
            parsed.last_block
            if parsed is not None
            and (parsed.ends_mid_line or parsed.cut_short or parsed.start_of_known)
            else None
        )
        if cut is not None and parsed is not None:
            parsed.drop_torn_tail(self._cache)
        result = self._history.merge(theirs, self._cache, archived=self._archived_ids, cut=cut)
        result.log(self._path, source, held=self._cache)
        self._hand_deleted.update(result.deleted)
        self._cache = ordered(result.cache)
        if parsed is not None:
            self._raw, self._problems = parsed.raw, parsed.problems
        if parsed is not None and source in _LIVE_IS_THEIRS:
            # The live file is theirs: what the merge kept of ours is appended to it, in a
            # recent part of its own (theirs may end anywhere).
            self._pending.update(dict.fromkeys(differing(self._cache, theirs)))
            self._appender.restart()
        else:  # the file is gone, or the live file is ours and lacks their edits: a fold
            self._unwritten = True

    def _refresh(self) -> None:
        """Merge whatever was saved into the file since this store last looked (one stat per
        read; saves into the files it replaced are checked by writes and `close`)."""
        if self._file.changed():
            got = self._read()
            self._merge(got[0] if got else None, "file")
            self._file.signature = got[1] if got else None

    def _check_watched(self) -> None:
        """Merge what was saved late into the files this store replaced."""
        self._file.watched.check(
            lambda data, signature: self._merge(self._parse(data, signature[2]), "late")
        )

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
            ops = [_as_written(op) for op in self._hand_deleted.without(ops)]
            touched = touched_ids(ops)
            with self._cache.applying(ops):  # undone when the write fails
                if not self._append(ops, touched):
                    deletes = any(isinstance(op, DeleteOp) for op in ops)
                    self._fold(touched, appendable=not deletes)
        return self._cache

    def _can_append(self, ops: Sequence[StoreOp], *, bounded: bool = True) -> bool:
        """Whether a unit of work may be appended rather than written by a fold: the file is
        known, this session's backup is taken, nothing is deleted, the live file is not one
        that lacks someone's edits, and (`bounded`) the recent part is within its bound."""
        backups = self._file.backups
        return (
            self._file.signature is not None
            and (backups.taken or backups.count == 0)
            and not self._unwritten
            and not self._unpinned
            and (not bounded or self._file.recent_bytes < self._recent_bound())
            and not any(isinstance(op, DeleteOp) for op in ops)
        )

    def _recent_bound(self) -> int:
        """The recent part's size past which a write folds: `recent_limit`, or the folded
        part's size over `RECENT_SHARE` when that is more (no growth for a limit of 0)."""
        limit = self._recent_limit
        if limit <= 0 or self._recent_share <= 0:
            return limit
        return max(limit, self._file.folded_bytes // self._recent_share)

    def _append(self, ops: Sequence[StoreOp], touched: list[str], *, bounded: bool = True) -> bool:
        """Append the unit of work's blocks (and the records of visited locations), with what
        merges kept that the file lacks, to the recent part, durably (a unit that only counts
        visits: synced by the next durable one, see `visits_only`). When someone saves the
        file meanwhile, that save is merged and the difference appended to it. False when it
        must be folded instead (see `_can_append`)."""
        visited = [op.location_id for op in ops if isinstance(op, VisitOp)]
        backups = self._file.backups
        if not backups.taken and self._file.signature is not None and self._cache.unread:
            # a session that opened from the snapshot takes its backup as a copy and appends
            # (a fold would read every memory); one that parsed the file folds it first, which
            # also writes an older file in today's form
            backups.copy()
        for _ in range(MAX_ROUNDS):
            if not self._can_append(ops, bounded=bounded):
                return False
            written = [*self._pending, *visited, *touched]
            durable = bool(self._pending) or not visits_only(ops)
            # the current versions of these memories (str ids) and location records (int ids),
            # synced when `durable`; someone may have saved the file meanwhile (merged: again)
            saved = self._appender.append(self._cache, written, durable=durable)
            if saved is not None and saved.source == "append":  # the save may lack the unit
                self._pending.update(dict.fromkeys(written))
            if saved is None or self._saved_meanwhile(
                saved.source,
                written=saved.written if saved.source == "append" else None,
                unit=written if saved.source == "append" else None,
            ):
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
        got = self._file.read()
        parsed: ParsedFile | None = None
        cut: int | None = None
        if got is not None:
            data, signature = got
            cut = self._remnants.cut(data, written) if written is not None else None
            parsed = self._parse(data[:cut], signature[2])
            parsed.start_of_known = self._file.took(data[:cut])
            self._file.known = [data]  # (the file still holds the remnant)
        self._merge(parsed, source)
        if unit is not None:
            self._history.held_too(wrote, unit)
        self._file.signature = got[1] if got else None
        if cut is not None:
            self._unwritten = True  # the file still holds the remnant: a fold drops it
        return False

    def _fold(self, touched: list[str] | None, *, appendable: bool = True) -> None:
        """Write the whole file from the cache (the recent part folded into the sections), by
        a swap; merge what someone saved meanwhile and write again. When saves keep landing
        before the swap, and the fold deletes nothing (`appendable`), append to the saved file
        what it lacks instead."""
        rounds: Counter[str] = Counter()
        for _ in range(MAX_ROUNDS):
            with gc_paused():  # (as a load: what it makes stays alive, or is freed at once)
                rendered = render_file(self._cache, self._raw, self._blocks)
            displaced = self._replace(rendered.text)
            self._file.close_tail()  # (the file it was open on is replaced)
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
            self._appender.restart()
            self._file.recent_bytes = 0
            self._file.folded_bytes = len(rendered.text)
            if displaced is None:
                plain = not (self._file.crlf or self._file.bom)
                self._snapshots.write(rendered, self._cache, self._raw, self._problems, plain=plain)
                return
            # Someone saved between the read and the swap: merge that, and write again.
            self._merge(*displaced)
            rounds[displaced[1]] += 1
            # saves keep coming faster than a fold: append to the last one what it lacks
            outpaced = appendable and rounds["check"] >= FOLD_TRIES
            if outpaced and self._append([], [], bounded=False):
                return
        found = ", ".join(f"{k} {v}" for k, v in rounds.most_common())
        raise StoreError(f"{self._path}: the file kept changing ({MAX_ROUNDS} writes; {found})")

    def _replace(self, text: str) -> tuple[ParsedFile | None, str] | None:
        """Write `text` as the file (`LiveFile.replace`). Returns what someone else had saved in
        the file since it was read, and where it was found (the caller merges it and writes
        again), None when nobody had."""
        displaced = self._file.replace(text)
        if displaced is None:
            return None
        data, signature, source = displaced
        if data is None or signature is None:
            return None, source
        return self._parse(data, signature[2]), source

    def fold(self) -> None:
        """Fold the recent part into the sections now (and write what a merge kept)."""
        self._outside_unit("fold")
        with self._lock, self._locked():
            self._refresh()
            self._check_watched()
            if self._file.recent_bytes or self._unwritten or self._pending:
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
                self._archive.append(old, self._cache)
                self._archived_ids.update(e.id for e in old)
                with self._cache.applying([DeleteOp(e.id) for e in old]):
                    self._fold([e.id for e in old], appendable=False)
            elif self._file.recent_bytes or self._unwritten or self._pending:
                self._fold([])

    @property
    def archive_path(self) -> Path:
        """The archive file (`NAME.archive.md`): SUPERSEDED memories, not loaded for play."""
        return self._archive.path

    def archived(self, *, newest: int | None = None) -> list[MemoryEntry]:
        """The archive's memories by section (`ArchiveFile.read`), less those live again."""
        in_order = self._archive.read(newest=newest)
        with self._lock:
            live = self._cache
            return [e for e in in_order if e.id not in live]

    def archived_count(self) -> int:
        """The archive's memory blocks, none of them read (`ArchiveFile.count`)."""
        return self._archive.count()

    def close(self) -> None:
        """Write what a merge kept that the file lacks, then stop watching replaced files."""
        with self._lock:
            self._check_watched()
            if (
                self._unwritten
                or self._pending
                or (self._appender.appended and self._file.recent_bytes)
            ):
                try:
                    with self._locked():
                        self._refresh()
                        self._fold([])
                except StoreError as e:
                    log.warning("%s: not folded on close: %s", self._path, e)
            self._file.close()
            self._snapshots.drop()
            self._file_lock.close()


def _as_written(op: StoreOp) -> StoreOp:
    """`op` with its entry as the file keeps it (timestamps to the second)."""
    if isinstance(op, AddOp):
        return AddOp(as_written(op.entry))
    if isinstance(op, UpdateOp):
        return UpdateOp(as_written(op.entry))
    return op
