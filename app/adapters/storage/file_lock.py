"""WriterLock: the lock file a markdown store's writers take, cheap when nobody else holds it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from filelock import FileLock, lock_descriptor, unlock_descriptor


class WriterLock:
    """An exclusive lock on `path` (`Memories.md.lock`), re-entrant within one holder.

    The uncontended take is filelock's `lock_descriptor` on a descriptor kept open: one
    non-blocking `flock` (about 2 µs, where a `FileLock` take costs about 100 µs of Python).
    When another process holds the lock, the wait goes through filelock's `FileLock` on the
    same file (the two contend with each other: the same `flock`), with its timeout (raises
    `filelock.Timeout`). The descriptor is opened again after a fork (a child must not share
    its parent's lock) and when the lock file was replaced or deleted (a lock on a file
    nobody else opens excludes nobody).
    """

    def __init__(self, path: str, timeout: float) -> None:
        self.lock_file = path
        self._timeout = timeout
        self._waiting = FileLock(path, timeout=timeout)
        self._fd: int | None = None
        self._pid = 0
        self._depth = 0
        self._by_wait = False

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        if self._fd is not None and self._pid != os.getpid():
            # a forked child holds nothing of its parent's: its own descriptor and FileLock
            self._fd, self._depth = None, 0
            self._waiting = FileLock(self.lock_file, timeout=self._timeout)
        if self._depth == 0:
            self._acquire()
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._release()

    def close(self) -> None:
        """Close the kept descriptor (the lock must not be held)."""
        if self._fd is not None and self._pid == os.getpid():
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = None

    def _acquire(self) -> None:
        for _ in range(3):
            fd = self._descriptor()
            if not lock_descriptor(fd, blocking=False):
                break
            if self._current(fd):
                self._by_wait = False
                return
            unlock_descriptor(fd)  # the file was replaced: open the one others lock
            self.close()
        self._waiting.acquire()
        self._by_wait = True

    def _release(self) -> None:
        if self._by_wait:
            self._waiting.release()
        elif self._fd is not None:
            unlock_descriptor(self._fd)

    def _descriptor(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
            self._pid = os.getpid()
        return self._fd

    def _current(self, fd: int) -> bool:
        """The descriptor's file is still the one at the lock file's path."""
        try:
            here, there = os.fstat(fd), os.stat(self.lock_file)
        except OSError:
            return False
        return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
