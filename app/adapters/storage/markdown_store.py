"""MarkdownMemoryStore: Memories.md, written atomically once per unit of work under a file lock."""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from app.adapters.files import ensure_folder
from app.adapters.storage.base import CachedStore
from app.adapters.storage.markdown_format import (
    EntryRenderCache,
    RawBlock,
    parse,
    read_text,
    render_file,
)
from app.adapters.storage.ops import MemoryCache, StoreOp
from app.errors import StoreError, StoreLockedError

log = logging.getLogger(__name__)

_Signature = tuple[int, int, int] | None
"""(inode, size, mtime_ns) of the file as last read or written; None when it does not exist."""


def _signature(path: Path) -> _Signature:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class MarkdownMemoryStore(CachedStore):
    """Memories in a human-editable Markdown file (see `markdown_format` for the layout).

    - Every unit of work is one write: render to a temp file in the same folder, fsync, keep the
      previous file as `NAME.1` (older ones shift to `.2` ... `.backup_count`), rename over.
      A crash at any point leaves the old or the new file, whole; the temp file a crashed writer
      left is deleted by the next store object's first write.
    - Writes hold `NAME.lock` (filelock). Under the lock the file is re-read when another process
      (or a person) changed it since this store last saw it, so no one's memories are lost.
    - Reads come from the cache; it is refreshed when the file's inode, size or mtime changed.
      After a write it holds the memories as the file does (timestamps to the second, see
      `markdown_format`), so a reload gives what this store already returned.
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
        self._lock_timeout = lock_timeout
        self._file_lock = FileLock(str(self._path) + ".lock", timeout=lock_timeout)
        self._raw: list[RawBlock] = []
        self._signature: _Signature = None
        self._blocks = EntryRenderCache()
        self._temps_checked = False
        ensure_folder(self._path.parent)
        with self._lock:
            self._load()

    @property
    def path(self) -> Path:
        return self._path

    # -- reading -------------------------------------------------------------------------------

    def _load(self) -> None:
        signature = _signature(self._path)
        if signature is None:
            self._cache, self._raw, self._problems = MemoryCache(), [], []
        else:
            try:
                text = read_text(self._path)
            except OSError as e:
                raise StoreError(f"{self._path}: cannot read: {e}") from e
            modified = datetime.fromtimestamp(signature[2] / 1e9, tz=UTC)
            self._bom = text.startswith("\ufeff")
            text = text.removeprefix("\ufeff")  # an editor's byte-order mark is no text
            self._crlf = "\r\n" in text
            if self._crlf:
                text = text.replace("\r\n", "\n")
            parsed = parse(text, str(self._path), created_at=modified)
            self._cache, self._raw, self._problems = parsed.cache, parsed.raw, parsed.problems
            for problem in parsed.problems:
                log.warning("%s", problem)
        self._signature = signature

    def _refresh(self) -> None:
        if _signature(self._path) != self._signature:
            self._load()

    def reload(self) -> None:
        with self._lock:
            self._load()

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
            cache = self._working_copy()
            cache.apply_all(ops)
            rendered = render_file(cache, self._raw, self._blocks)
            self._write(rendered.text)
            # Kept blocks moved: report their problems at their new lines (the ones that a
            # rewrite resolves, such as a location's sections written twice, are gone now).
            self._problems = rendered.problems(str(self._path))
        return rendered.cache

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

    def _write(self, text: str) -> None:
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
            self._rotate_backups()
            os.replace(tmp, self._path)
            _fsync_dir(self._path.parent)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"{self._path}: cannot write: {e}") from e
        self._signature = _signature(self._path)

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

    def _rotate_backups(self) -> None:
        """Shift NAME.1..NAME.(k-1) up by one and hard-link the current file as NAME.1."""
        if self._backup_count == 0 or self._signature is None:
            return  # no backups wanted, or no file to keep (this store saw none)
        for n in range(self._backup_count - 1, 0, -1):
            with contextlib.suppress(FileNotFoundError):
                os.replace(self._backup(n), self._backup(n + 1))
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
        """Nothing stays open between units of work."""


def _mode_for(path: Path) -> int:
    """The permissions a rewrite keeps: the file's own, else what a new file would get."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
