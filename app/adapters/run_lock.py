"""One play at a time in a workdir: `.cairn-play.lock`, held for the play's whole length.

Two plays in one folder would share its store, map, knowledge base and report.json (the last
writer's would stand) and could write one transcript. The second refuses at once with a clear
message rather than wait: a play lasts minutes to hours, and a start that hangs that long
without a word is worse than one that says why it stops.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from cairn.errors import StoreError, WorkdirError

RUN_LOCK = ".cairn-play.lock"
"""The lock file in the workdir (left in place when the play ends, as lock files are)."""


@contextlib.contextmanager
def run_lock(folder: Path) -> Iterator[None]:
    """Hold the workdir's run lock while the block runs; WorkdirError at once when another
    play (another process, or another thread of this one) holds it.

    Re-entrant within a thread: the command line takes it before it sets files aside and
    `run_play` takes it again. One FileLock per path (`is_singleton`), its count per thread
    (`thread_local`): another thread opens its own descriptor, which the kernel's `flock`
    refuses as it refuses another process."""
    path = folder.absolute() / RUN_LOCK
    lock = FileLock(path, is_singleton=True, thread_local=True)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        raise WorkdirError(
            f"{folder}: another cairn play is running in this folder (it holds {path}); wait"
            " for it to end, or choose another folder with --workdir NEW_FOLDER"
        ) from None
    except OSError as exc:
        raise StoreError(f"{path}: cannot take the run lock: {exc.strerror or exc}") from exc
    try:
        yield
    finally:
        lock.release()
