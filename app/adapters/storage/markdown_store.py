"""MarkdownMemoryStore: Memories.md, written atomically once per unit of work under a file lock."""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import stat
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from cairn.adapters.files import ensure_folder
from cairn.adapters.storage.base import CachedStore
from cairn.adapters.storage.edit_merge import EditHistory
from cairn.adapters.storage.file_swap import (
    Signature,
    exchange,
    path_signature,
    read_fd,
    read_settled,
    signature_of,
)
from cairn.adapters.storage.markdown_format import (
    EntryRenderCache,
    ParsedFile,
    RawBlock,
    ordered,
    parse,
    render_file,
)
from cairn.adapters.storage.ops import (
    AddOp,
    DeleteOp,
    MemoryCache,
    StoreOp,
    SupersedeOp,
    UpdateOp,
)
from cairn.errors import StoreError, StoreLockedError

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

    - Every unit of work is one write: render to a temp file in the same folder, fsync, swap it
      with the live file in one step. Backups are per session: the file as it was before this
      store object's first write becomes `NAME.1` (older sessions' shift to `.2` ...
      `.backup_count`); later writes of the session keep no copy. A crash at any point leaves
      the old or the new file, whole; the temp file a crashed writer left is deleted by the
      next store object's first write.
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

    def __init__(self, path: Path, *, backup_count: int = 3, lock_timeout: float = 30.0) -> None:
        super().__init__()
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
        self._file_lock = FileLock(str(self._path) + ".lock", timeout=lock_timeout)
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
        text = data.decode("utf-8", errors="surrogateescape")
        self._bom = text.startswith("\ufeff")
        text = text.removeprefix("\ufeff")  # an editor's byte-order mark is no text
        self._crlf = "\r\n" in text
        if self._crlf:
            text = text.replace("\r\n", "\n")
        modified = datetime.fromtimestamp(modified_ns / 1e9, tz=UTC)
        parsed = parse(text, str(self._path), created_at=modified)
        for problem in parsed.problems:
            log.warning("%s", problem)
        return parsed

    def _read(self) -> tuple[ParsedFile, Signature] | None:
        """The file as it is now (waiting for a save in place to finish), None when missing."""
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
        if got is None:
            return None
        data, signature = got
        return self._parse(data, signature[2]), signature

    def _same_inode(self) -> bool:
        now = path_signature(self._path)
        return now is not None and self._signature is not None and now[0] == self._signature[0]

    def _load(self) -> None:
        """Take the file as the truth (when the store opens)."""
        got = self._read()
        if got is None:
            self._cache, self._raw, self._problems = MemoryCache(), [], []
            self._signature = None
        else:
            parsed, self._signature = got
            self._cache, self._raw, self._problems = parsed.cache, parsed.raw, parsed.problems
        self._history.observe(self._cache)

    def _merge(self, parsed: ParsedFile | None, source: str) -> None:
        """Merge a file someone else saved (None: the file was removed) into the cache."""
        self.merges[source] += 1
        theirs = parsed.cache if parsed is not None else MemoryCache()
        result = self._history.merge(theirs, self._cache)
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
        self._unwritten = self._unwritten or bool(result.restored) or parsed is None

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
            self._refresh()

    # -- writing -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            with self._file_lock:
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
            cache = self._working_copy()
            cache.apply_all(self._without_hand_deleted(ops))
            for _ in range(_MAX_ROUNDS):
                rendered = render_file(cache, self._raw, self._blocks)
                displaced = self._replace(rendered.text)
                self._cache = rendered.cache
                # Kept blocks moved: report their problems at their new lines (the ones that a
                # rewrite resolves, such as a location's sections written twice, are gone now).
                self._problems = rendered.problems(str(self._path))
                self._history.observe(self._cache, _touched(ops) if not self._unwritten else None)
                self._unwritten = False
                if displaced is None:
                    break
                # Someone saved between the read and the swap: merge that, and write again.
                self._merge(*displaced)
                cache = self._working_copy()
            else:
                raise StoreError(f"{self._path}: the file kept changing ({_MAX_ROUNDS} writes)")
        return self._cache

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

    def _working_copy(self) -> MemoryCache:
        """A copy of the cache that ops may change: the records are copied (ops change them in
        place), the entries are shared (ops replace entries, never change them)."""
        cache = MemoryCache()
        cache.memories = dict(self._cache.memories)
        cache.locations = {
            k: v.model_copy(update={"episodes": list(v.episodes)})
            for k, v in self._cache.locations.items()
        }
        return cache

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
            os.chmod(tmp, _mode_for(self._path))
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
            if self._unwritten:
                try:
                    self._cache = self._commit([])
                except StoreError as e:
                    log.warning(
                        "%s: memories kept from a merge were not written: %s", self._path, e
                    )
            for watched in list(self._watched):
                self._unwatch(watched)


def _read_open(fd: int) -> tuple[bytes, Signature] | None:
    """An open file's content once still (an editor may be saving into it)."""
    return read_settled(
        lambda: signature_of(os.fstat(fd)),
        lambda: read_fd(fd),
        settle=_SETTLE_SECONDS,
        timeout=_SETTLE_TIMEOUT,
        complete=_looks_complete,
    )


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


def _touched(ops: Sequence[StoreOp]) -> list[str]:
    """The ids of the memories `ops` add or change."""
    ids = [op.entry.id for op in ops if isinstance(op, AddOp)]
    ids += [t for t in map(_target, ops) if t is not None]
    return ids


def _mode_for(path: Path) -> int:
    """The permissions a rewrite keeps: the file's own, else what a new file would get."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
