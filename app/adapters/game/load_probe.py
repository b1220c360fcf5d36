"""A story file's load tried first in a child process, with a time limit: a damaged story file can
make the interpreter run forever inside its load, in C code that neither a timeout nor Ctrl-C
reaches in this process; a child that overruns is killed and the file refused."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from cairn.errors import GameError

LOAD_TIMEOUT = 20.0
"""Seconds a story file's load may take (a real one takes well under one)."""

_PROBE = """\
import sys, warnings
sys.path.insert(0, sys.argv[3])
warnings.simplefilter("ignore")
from jericho import FrotzEnv
FrotzEnv(sys.argv[1], seed=int(sys.argv[2]) if sys.argv[2] else None)
"""

_loaded: set[str] = set()
"""The sha-256 of the story files that loaded in time in this process (probed with the first
seed asked for: a file that spins in its load does so whatever the seed)."""
_lock = threading.Lock()


def probe_load(path: Path, seed: int | None, timeout: float | None = None) -> None:
    """Raise GameError unless the story file at `path` loads in a child interpreter within
    `timeout` seconds (default LOAD_TIMEOUT; once per content in a process: later loads are
    not probed)."""
    timeout = LOAD_TIMEOUT if timeout is None else timeout
    from cairn.adapters.game.story_file import read_story_file

    key = hashlib.sha256(read_story_file(path)).hexdigest()
    with _lock:
        if key in _loaded:
            return
    if hasattr(os, "fork") and _forked_load(path, seed, timeout):
        with _lock:
            _loaded.add(key)
        return
    # no fork, or the forked load failed: a fresh interpreter says why (and is timed again)
    import jericho

    site = str(Path(jericho.__file__).resolve().parents[1])
    command = [sys.executable, "-c", _PROBE, os.fspath(path), "" if seed is None else str(seed)]
    try:
        done = subprocess.run(
            [*command, site],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:  # run() has killed the child
        raise GameError(
            f"{path}: the interpreter did not finish loading this story file within"
            f" {timeout:g} s (it runs on without asking for input: a damaged or fuzzed file?);"
            " not played (story_load_timeout)"
        ) from exc
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"the interpreter exited with status {done.returncode}"
        raise GameError(f"{path}: Jericho cannot load it: {why}")
    with _lock:
        _loaded.add(key)


def _forked_load(path: Path, seed: int | None, timeout: float) -> bool:
    """Whether the load succeeds in a forked child within `timeout` (the child has Jericho
    imported already: milliseconds, where a fresh interpreter takes about 0.4 s). A child that
    overruns is killed: GameError, as for the fresh interpreter."""
    from jericho import FrotzEnv

    pid = os.fork()
    if pid == 0:  # the child: load, and leave at once (no cleanup of the parent's state)
        status = 1
        try:
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            FrotzEnv(os.fspath(path), seed=seed)
            status = 0
        finally:
            os._exit(status)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise GameError(
                f"{path}: the interpreter did not finish loading this story file within"
                f" {timeout:g} s (it runs on without asking for input: a damaged or fuzzed"
                " file?); not played (story_load_timeout)"
            )
        time.sleep(0.002)
