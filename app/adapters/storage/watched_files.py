"""WatchedFiles: files a store replaced, kept open a while for an editor's late save (rules 3
and 8 of the live-edit protocol, `live_edit`)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from cairn.adapters.storage.file_swap import Signature, read_fd, read_settled, signature_of
from cairn.adapters.storage.live_edit import (
    SETTLE_SECONDS,
    SETTLE_TIMEOUT,
    WATCH_SECONDS,
    WATCHED_FILES,
)


def looks_complete(data: bytes) -> bool:
    """Not a save in progress: not empty, and ends with a line end, as every Memories.md does
    (`live_edit` rule 3)."""
    return data.endswith(b"\n")


def read_open(
    fd: int, complete: Callable[[bytes], bool] = looks_complete
) -> tuple[bytes, Signature] | None:
    """An open file's content once still (an editor may be saving into it)."""
    return read_settled(
        lambda: signature_of(os.fstat(fd)),
        lambda: read_fd(fd),
        settle=SETTLE_SECONDS,
        timeout=SETTLE_TIMEOUT,
        complete=complete,
    )


@dataclass
class Watched:
    """A file this store replaced, still open: an editor that had opened it may save into it."""

    fd: int
    signature: Signature
    since: float


class WatchedFiles:
    """The files a store replaced, newest last (at most `WATCHED_FILES`)."""

    def __init__(self) -> None:
        self._files: list[Watched] = []

    def add(self, fd: int, signature: Signature) -> Watched:
        """Watch the file open on `fd` (as `signature` says it is), from now."""
        watched = Watched(fd, signature, time.monotonic())
        self._files.append(watched)
        while len(self._files) > WATCHED_FILES:
            self._drop(self._files[0])
        return watched

    def check(self, saved: Callable[[bytes, Signature], None]) -> None:
        """Give `saved` what was saved into a watched file since it was last read; stop
        watching the files watched longer than `WATCH_SECONDS` (or that cannot be read)."""
        now = time.monotonic()
        for watched in list(self._files):
            try:
                changed = signature_of(os.fstat(watched.fd)) != watched.signature
                got = read_open(watched.fd) if changed else None
            except OSError:
                self._drop(watched)
                continue
            if got is not None:
                data, watched.signature = got
                saved(data, watched.signature)
            if now - watched.since > WATCH_SECONDS:
                self._drop(watched)

    def close(self) -> None:
        """Stop watching every file."""
        for watched in list(self._files):
            self._drop(watched)

    def _drop(self, watched: Watched) -> None:
        with contextlib.suppress(OSError):
            os.close(watched.fd)
        self._files.remove(watched)
