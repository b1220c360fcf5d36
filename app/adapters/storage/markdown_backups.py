"""SessionBackups: a Memories.md as a session found it, kept as `NAME.1` (older as `.2` ...)."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from cairn.adapters.storage.file_swap import fsync_dir
from cairn.errors import StoreError


class SessionBackups:
    """Backups per session: the file as it was before a store object's first write becomes
    `NAME.1` (older sessions' shift to `.2` ... `.count`); later writes of the session keep no
    copy. A fold keeps the file its swap displaced (or hard-links the file before its rename);
    a session that appends first takes a copy."""

    def __init__(self, path: Path, count: int) -> None:
        if count < 0:
            raise StoreError(f"backup_count: must be >= 0, got {count}")
        self.path = path
        self.count = count
        self.taken = False
        """This session's backup is taken (the file as it was before the first write)."""

    def backup(self, n: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{n}")

    def shift(self) -> None:
        """Shift NAME.1..NAME.(k-1) up by one."""
        for n in range(self.count - 1, 0, -1):
            with contextlib.suppress(FileNotFoundError):
                os.replace(self.backup(n), self.backup(n + 1))

    def copy(self) -> None:
        """This session's backup, taken as a copy (appends change the file in place, so a
        hard link would change with it): the file as the session found it becomes NAME.1."""
        self.taken = True
        if self.count == 0:
            return
        tmp = self.backup(1).with_name(self.backup(1).name + ".tmp")
        try:
            shutil.copyfile(self.path, tmp)
            self.shift()
            os.replace(tmp, self.backup(1))
            fsync_dir(self.path.parent)
        except FileNotFoundError:
            tmp.unlink(missing_ok=True)  # no file to keep after all (removed meanwhile)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"{self.path}: cannot keep a backup: {e}") from e

    def rotate(self, file_known: bool) -> None:
        """Shift the backups and hard-link the current file as NAME.1 (no exchange here), once
        per session (`file_known`: the store saw a file there)."""
        if self.count == 0 or not file_known or self.taken:
            return  # no backups wanted, no file to keep (this store saw none), or taken
        self.taken = True
        self.shift()
        link = self.backup(1).with_name(self.backup(1).name + ".tmp")
        try:
            self._link_or_copy(link)
        except FileExistsError:  # left by a writer that crashed here
            link.unlink()
            self._link_or_copy(link)
        except FileNotFoundError:  # no file to keep after all (removed meanwhile)
            return
        os.replace(link, self.backup(1))

    def keep_displaced(self, displaced: Path) -> None:
        """After a swap, `displaced` holds the file that was live: it becomes NAME.1 when this
        session's backup is not taken yet, else it is deleted."""
        if self.count and not self.taken:
            self.shift()
            os.replace(displaced, self.backup(1))
            self.taken = True
        else:
            displaced.unlink()

    def _link_or_copy(self, link: Path) -> None:
        try:
            os.link(self.path, link)
        except (FileExistsError, FileNotFoundError):
            raise
        except OSError:  # no hard links on this file system: copy instead
            link.write_bytes(self.path.read_bytes())
