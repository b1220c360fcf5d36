"""`--fresh`: start a run from no memories without destroying the previous ones.

The files cairn made in the workdir (by exact name: the store and its session backups, SQLite's
-wal/-shm, the map, the knowledge base, the report, and the `.cairn` marker naming their game)
move into `backups/YYYYMMDD-HHMMSS/` in the workdir. Nothing else is touched: never a user's
`Memories.md.bak`, never a pattern that an empty name would turn into "everything". The lock
file stays (another process may hold it). The command line refuses a folder cairn did not make
before anything moves, and marks the folder as the new run's game after (`cairn.workdir`).
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from cairn.errors import StoreError
from cairn.file_names import archive_name, snapshot_name
from cairn.settings import CairnSettings
from cairn.workdir import MARKER

BACKUPS_FOLDER = "backups"


def run_file_names(settings: CairnSettings) -> list[str]:
    """The names of the files a run leaves in the workdir (the lock file aside)."""
    names = [
        settings.memory_file,
        *(f"{settings.memory_file}.{n}" for n in range(1, settings.backup_count + 1)),
        archive_name(settings.memory_file),
        snapshot_name(settings.memory_file),
        snapshot_name(archive_name(settings.memory_file)),
        settings.sqlite_file,
        f"{settings.sqlite_file}-wal",
        f"{settings.sqlite_file}-shm",
        settings.map_file,
        "map.mmd",
        settings.knowledge_file,
        settings.report_file,
        "report.html",
        MARKER,  # which game the files set aside are of
    ]
    return list(dict.fromkeys(names))


def set_aside_run_files(settings: CairnSettings, now: datetime | None = None) -> Path | None:
    """Move the previous run's files into a dated folder under `backups/`; return it (None
    when there was nothing to move)."""
    workdir = settings.workdir
    found = [
        workdir / name
        for name in run_file_names(settings)
        if (workdir / name).is_file() and not (workdir / name).is_symlink()
    ]
    if not found:
        return None
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    target = workdir / BACKUPS_FOLDER / stamp
    n = 1
    while target.exists():
        n += 1
        target = workdir / BACKUPS_FOLDER / f"{stamp}-{n}"
    try:
        target.mkdir(parents=True)
        for path in found:
            os.replace(path, target / path.name)
    except OSError as exc:
        raise StoreError(f"{target}: cannot set the previous run's files aside: {exc}") from exc
    return target
