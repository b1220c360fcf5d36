"""The files a person names (a story file, a scenario, an import file, Memories.md), read with
two bounds: only a regular file (a FIFO waits for a writer forever, a device such as /dev/zero
never ends) and at most a size cap; the error names the file and the limit."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from cairn.errors import CairnError, StoreError

Refusal = Callable[[str], CairnError]
"""The caller's error for a problem (given without the path: "the scenario is a FIFO ...")."""

MiB = 1024 * 1024
MAX_STORY_BYTES = 1 * MiB
"""A Z-machine story file is at most 512 KB (version 8); twice that leaves room for padding."""
MAX_IMPORT_BYTES = 256 * MiB
MAX_MEMORY_FILE_BYTES = 64 * MiB
"""Memories.md and its archive: a long play keeps them under a few MB."""
MAX_CASSETTE_BYTES = 256 * MiB
"""A recorded model conversation (`llm.cassette`): thousands of answers fit in a few MB."""
MAX_SMALL_FILE_BYTES = 1 * MiB
"""cairn's own small JSON files (the workdir marker)."""
MAX_REPORT_BYTES = 64 * MiB
"""report.json as read back (a long run's per-episode figures stay far under it)."""

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_memory_file(path: Path) -> bytes:
    """Memories.md (or its archive): StoreError naming it when it is not a regular file or is
    over MAX_MEMORY_FILE_BYTES; OSError as raised when it cannot be opened."""
    return read_named_file(
        path,
        what="memory file",
        limit=MAX_MEMORY_FILE_BYTES,
        error=lambda problem: StoreError(f"{path}: {problem}"),
    )


def read_named_file(path: Path, *, what: str, limit: int, error: Refusal) -> bytes:
    """The bytes of the regular file `path` (followed through symlinks), at most `limit`.

    `error(problem)` is raised (the problem names `what` the file should be, or the limit) for
    anything else: a FIFO, a device, a socket, a folder, or a file over `limit` bytes (even one
    growing as it is read). OSError as raised for a file that cannot be opened (missing, not
    permitted): the caller says what that means.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # opening a FIFO must not wait
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise error(f"the {what} is {kind}, not a regular file; cairn reads files only")
        data = handle.read(limit + 1)
    if len(data) > limit:
        article = "an" if what[:1] in "aeiou" else "a"
        raise error(f"larger than {limit:,} bytes (the most {article} {what} may hold)")
    return data
