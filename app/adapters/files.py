"""Atomic text files: temp file in the same folder, fsync, rename (a crash leaves old or new)."""

from __future__ import annotations

import os
import stat
import tempfile
import time
from pathlib import Path

from cairn.errors import StoreError


def ensure_folder(folder: Path) -> Path:
    """Create `folder` (and its parents) if needed; StoreError naming it when that is not
    possible (a path under a file, /proc, a read-only file system)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"{folder}: cannot create the folder: {exc.strerror or exc}") from exc
    return folder


def atomic_write_text(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) so that readers never see a partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            # mkstemp makes the file 0600: the file written follows the umask (as a file the
            # shell writes does), or keeps the permissions of the file it replaces
            os.fchmod(handle.fileno(), file_mode(path))
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def file_mode(path: Path) -> int:
    """The permissions a rewrite of `path` keeps: the file's own, else what a new file gets
    under the process's umask (0666 & ~umask)."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


STALE_TEMP_SECONDS = 60.0
"""A temp file of `atomic_write_text` older than this is a killed writer's (a write takes
milliseconds): removed by `remove_stale_temps`."""


def remove_stale_temps(folder: Path, *, older_than: float = STALE_TEMP_SECONDS) -> list[Path]:
    """Remove the temp files (`.NAME.*.tmp`) a killed `atomic_write_text` left in `folder`,
    those older than `older_than` seconds (a live writer's is younger); return them."""
    removed: list[Path] = []
    now = time.time()
    for temp in folder.glob(".*.tmp"):
        try:
            if temp.is_file() and now - temp.stat().st_mtime > older_than:
                temp.unlink()
                removed.append(temp)
        except OSError:
            continue  # (gone meanwhile, or not ours to remove)
    return removed
