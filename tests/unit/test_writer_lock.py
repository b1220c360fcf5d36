"""WriterLock: the markdown store's lock file, taken by one flock when nobody else holds it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from cairn.adapters.storage.file_lock import WriterLock

HOLD = """
import sys, time
from filelock import FileLock
with FileLock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def holder(path: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process holding the lock through filelock's FileLock (an older cairn)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_excludes_a_filelock_holder_and_times_out(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md.lock"
    proc = holder(path, 5)
    lock = WriterLock(str(path), timeout=0.3)
    try:
        start = time.monotonic()
        with pytest.raises(Timeout), lock.held():
            pass
        assert time.monotonic() - start >= 0.25
    finally:
        proc.kill()
        proc.wait()


def test_waits_for_the_holder_then_takes_it(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md.lock"
    proc = holder(path, 0.4)
    lock = WriterLock(str(path), timeout=10)
    start = time.monotonic()
    with lock.held():
        waited = time.monotonic() - start
        with pytest.raises(Timeout), FileLock(str(path), timeout=0.05):
            pass  # held: nobody else gets it
    proc.wait()
    assert waited >= 0.2
    with FileLock(str(path), timeout=0.5):
        pass  # released


def test_held_excludes_others_and_is_reentrant(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md.lock"
    lock = WriterLock(str(path), timeout=1)
    with lock.held():
        with lock.held():
            pass
        with pytest.raises(Timeout), FileLock(str(path), timeout=0.05):
            pass  # the inner release left it held
    with FileLock(str(path), timeout=0.5):
        pass


def test_a_replaced_lock_file_is_opened_again(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md.lock"
    lock = WriterLock(str(path), timeout=1)
    with lock.held():
        pass
    path.unlink()  # someone cleaned the folder: others now lock a new file
    path.touch()
    with lock.held(), pytest.raises(Timeout), FileLock(str(path), timeout=0.05):
        pass


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this system")
def test_a_forked_child_does_not_share_the_parents_lock(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md.lock"
    lock = WriterLock(str(path), timeout=0.2)
    with lock.held():
        pass  # the descriptor is open now
    with lock.held():
        pid = os.fork()
        if pid == 0:  # the child: its take must wait for the parent, and time out
            try:
                with lock.held():
                    os._exit(1)
            except Timeout:
                os._exit(0)
            os._exit(2)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
