"""Low-level file steps for a store that shares its file with people's editors.

- `exchange` swaps two names in one step (Linux `renameat2(RENAME_EXCHANGE)`), so the writer
  gets back exactly the file it replaced, whoever saved it last: nothing saved between a check
  and a rename is unlinked unseen.
- `Signature` identifies what a path (or an open file) holds: inode, size, modification time.
- `read_settled` reads a file an editor may be saving in place (truncate, then write): it waits
  until the file has not changed for `settle` seconds and looks complete (at most `timeout`).
"""

from __future__ import annotations

import errno
import functools
import os
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

Signature = tuple[int, int, int]
"""(inode, size, mtime_ns)."""

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV}


@functools.cache
def _load_renameat2() -> Callable[..., int] | None:
    """libc's renameat2, looked up at the first swap (ctypes is not imported by commands that
    only read)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    function: Callable[..., int] | None = getattr(libc, "renameat2", None)
    return function


def exchange(a: Path, b: Path) -> bool:
    """Swap the files at `a` and `b` atomically. False when this system or file system cannot
    (the caller falls back to a rename); OSError for other failures."""
    renameat2 = _load_renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), str(b))


def signature_of(st: os.stat_result) -> Signature:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def path_signature(path: Path) -> Signature | None:
    """The path's signature, None when nothing is there."""
    try:
        return signature_of(path.stat())
    except FileNotFoundError:
        return None


def modified_time(modified_ns: int) -> datetime:
    """A file's modification time (nanoseconds, as a `Signature` holds it) as a UTC time: what a
    memory without cairn's comment is dated."""
    return datetime.fromtimestamp(modified_ns / 1e9, tz=UTC)


def fsync_dir(directory: Path) -> None:
    """Make the names just created or renamed in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_fd(fd: int) -> bytes:
    """The whole content of an open file, from its start."""
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def read_settled(
    stat: Callable[[], Signature | None],
    read: Callable[[], bytes],
    *,
    settle: float,
    timeout: float,
    complete: Callable[[bytes], bool] = lambda data: True,
) -> tuple[bytes, Signature] | None:
    """Read once the file has not changed for `settle` seconds, is the same before and after
    the read, and looks `complete` (giving up waiting after `timeout`: then the last read is
    returned). None when the file is gone."""
    deadline = time.monotonic() + timeout
    while True:
        before = stat()
        if before is None:
            return None
        age = time.time() - before[2] / 1e9
        if age < settle and time.monotonic() < deadline:
            time.sleep(settle - max(age, 0.0))
            continue
        data = read()
        if time.monotonic() >= deadline:
            return data, before
        if stat() == before:
            if complete(data):
                return data, before
            time.sleep(max(settle, 0.005))
