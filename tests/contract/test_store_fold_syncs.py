"""The fold of the markdown store is crash safe only in this order: the new file's data is on
disk before its name becomes Memories.md, and the folder (the rename) after. A crash test
cannot see a missing sync (the page cache survives SIGKILL; only a power loss shows it), so
these tests record the system calls of a fold and check their order."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.storage import live_file
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope

Call = tuple[str, int]
"""A recorded call: what it did ("create", "sync", "into place", "sync folder") and the inode."""


class Recorder:
    """Wraps the calls a fold makes to write Memories.md; each wrapper calls the real one."""

    def __init__(self, live: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.live = live
        self.calls: list[Call] = []
        self.recording = False
        real_mkstemp, real_fsync = tempfile.mkstemp, os.fsync
        real_datasync, real_exchange, real_replace = (
            live_file._datasync,
            live_file.exchange,
            os.replace,
        )

        def mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
            fd, name = real_mkstemp(*args, **kwargs)
            self._note("create", os.fstat(fd))
            return fd, name

        def synced(real: Callable[[int], None]) -> Callable[[int], None]:
            def sync(fd: int) -> None:
                st = os.fstat(fd)
                self._note("sync folder" if stat.S_ISDIR(st.st_mode) else "sync", st)
                real(fd)

            return sync

        def exchange(a: Path, b: Path) -> bool:
            source = os.stat(a)
            swapped = real_exchange(a, b)
            if swapped and Path(b) == self.live:
                self._note("into place", source)
            return swapped

        def replace(src: Any, dst: Any, **kwargs: Any) -> None:
            source = os.stat(src)
            real_replace(src, dst, **kwargs)
            if Path(dst) == self.live:
                self._note("into place", source)

        monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
        monkeypatch.setattr(os, "fsync", synced(real_fsync))
        monkeypatch.setattr(live_file, "_datasync", synced(real_datasync))
        monkeypatch.setattr(live_file, "exchange", exchange)
        monkeypatch.setattr(os, "replace", replace)

    def _note(self, what: str, st: os.stat_result) -> None:
        if self.recording:
            self.calls.append((what, st.st_ino))


def fold_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, swap: bool) -> list[Call]:
    """The calls of one fold of a store that appended three memories to its file."""
    path = tmp_path / "Memories.md"
    recorder = Recorder(path, monkeypatch)
    if not swap:  # a system or file system without renameat2: the fold renames over the file
        monkeypatch.setattr(live_file, "exchange", lambda a, b: False)
    store = MarkdownMemoryStore(path)
    try:
        for n in range(3):
            with store.transaction() as tx:
                tx.add(MemoryEntry(scope=MemoryScope.WORLD, title=f"Lesson {n}", text="kept"))
        recorder.recording = True
        store.fold()
        recorder.recording = False
    finally:
        store.close()
    return recorder.calls


@pytest.mark.parametrize("swap", [True, False], ids=["swap", "rename"])
def test_a_fold_syncs_the_new_file_before_it_becomes_memories_md_and_the_folder_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: bool
) -> None:
    calls = fold_calls(tmp_path, monkeypatch, swap=swap)
    placed = [n for n, (what, _) in enumerate(calls) if what == "into place"]
    assert placed, f"the fold put no new file in place: {calls}"
    folder = os.stat(tmp_path).st_ino
    for at in placed:
        inode = calls[at][1]
        made = [n for n, call in enumerate(calls[:at]) if call == ("create", inode)]
        assert made, f"the file put in place was not the fold's new temp file: {calls}"
        created = made[-1]
        assert ("sync", inode) in calls[created:at], (
            f"the new file became Memories.md before its data was synced: {calls}"
        )
        assert ("sync folder", folder) in calls[at:], (
            f"the folder was not synced after the new file took its name: {calls}"
        )
