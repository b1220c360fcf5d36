"""A simulated person editing Memories.md while a writer process adds memories without pause.

Each save reads the file, "thinks" a few milliseconds, and saves it back with two edits:
- a hand-written note appended at the end (a memory block with no cairn comment, titled
  `Hand note N`);
- the first line of one writer memory changed (`Written by w as number K.` gets
  ` Edited by hand in save N.`).
Saves are made the way editors make them: in place (truncate, then write, in two parts) or
through a temp file renamed over the file. Neither takes cairn's lock.

Every save is made stale on purpose, whatever the machine's load: after reading the file the
editor waits until the writer has acknowledged `WRITES_PER_SAVE` more memories, then saves its copy
(without that memory). So each save races a write by construction, not by timing.

Used by tests/contract/test_store_hand_edits.py and bench/hand_edit_bench.py.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore

ROOT = Path(__file__).resolve().parents[2]
STYLES = ("in-place", "rename")
WRITES_PER_SAVE = 3
"""The writer's memories each save waits for after its read (so it is stale by that many)."""
_UNEDITED = re.compile(r"^Written by (\w+) as number (\d+)\.$", re.MULTILINE)


def hand_note(n: int) -> str:
    return f"**[NOTE] Hand note {n}** *(Ep1, T{n})*\nWritten by a person in save {n}."


@dataclass
class EditLog:
    """What the editor did: its saves, and which writer memory each save edited."""

    saves: int = 0
    edited: dict[str, int] = field(default_factory=dict)
    """memory id -> the save that edited it."""


def save(path: Path, data: bytes, style: str) -> None:
    """Save `data` as an editor of `style` would."""
    if style == "in-place":
        with open(path, "r+b") as handle:
            handle.truncate(0)
            half = len(data) // 2
            handle.write(data[:half])
            handle.flush()
            time.sleep(0.0005)
            handle.write(data[half:])
    elif style == "rename":
        tmp = path.with_name(f".{path.name}.editor~")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    else:
        raise ValueError(f"unknown save style {style!r}; expected one of {', '.join(STYLES)}")


class Acknowledged:
    """The ids the writer process printed (each stored durably), read as they come."""

    def __init__(self, writer: subprocess.Popen[str]) -> None:
        self.ids: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, args=(writer,), daemon=True)
        self._reader.start()

    def _read(self, writer: subprocess.Popen[str]) -> None:
        assert writer.stdout is not None
        for line in writer.stdout:
            with self._changed:
                self.ids.append(line.strip())
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def more_than(self, count: int, timeout: float = 60.0) -> int:
        """Wait until more than `count` ids were acknowledged; how many there are then."""
        with self._changed:
            done = self._changed.wait_for(
                lambda: len(self.ids) > count or not self._reader.is_alive(), timeout
            )
            assert done and len(self.ids) > count, "the writer stopped writing"
            return len(self.ids)

    def join(self) -> None:
        self._reader.join(timeout=120)


def edit_once(
    path: Path,
    n: int,
    style: str,
    rng: random.Random,
    log: EditLog,
    stale: Callable[[], None] = lambda: None,
) -> None:
    """One save: read, think (`stale()`: until the writer wrote again), edit, save."""
    text = path.read_bytes().decode("utf-8")
    time.sleep(rng.uniform(0.0, 0.02))
    stale()
    match = _UNEDITED.search(text)
    if match is not None:
        log.edited[f"{match.group(1)}-{int(match.group(2)):06d}"] = n
        text = text[: match.end()] + f" Edited by hand in save {n}." + text[match.end() :]
    text = text.rstrip("\n") + "\n\n" + hand_note(n) + "\n"
    save(path, text.encode("utf-8"), style)
    log.saves += 1


@dataclass
class Outcome:
    """The store after the run: what it lost."""

    acknowledged: int
    stored: int
    lost_memories: list[str]
    lost_notes: list[int]
    lost_edits: list[str]
    problems: int
    seconds: float
    log: EditLog
    merges: dict[str, int]
    """The writer's merges of others' saves, by where it found them (see MarkdownMemoryStore)."""


def run(
    path: Path, style: str, saves: int, seed: int = 7, recent_limit: int | None = None
) -> Outcome:
    """A writer process adds memories without pause while `saves` hand edits are made
    (`recent_limit`: the writer's markdown store folds after that many appended bytes)."""
    rng = random.Random(seed)
    stop = path.with_name("stop-writer")
    command = [sys.executable, "-m", "tests.contract.writer", "markdown", str(path), "1000000"]
    started = time.perf_counter()
    if recent_limit is not None:
        command += ["--recent-limit", str(recent_limit)]
    writer = subprocess.Popen(
        [*command, "--prefix", "w", "--until", str(stop)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = EditLog()
    try:
        acks = Acknowledged(writer)
        acks.more_than(0)  # the file exists now

        def stale() -> None:
            acks.more_than(len(acks.ids) + WRITES_PER_SAVE - 1)

        for n in range(saves):
            edit_once(path, n, style, rng, log, stale)
            time.sleep(rng.uniform(0.02, 0.06))
        acks.more_than(len(acks.ids))  # the writer took the last save in
        stop.touch()
        _, errors = writer.communicate(timeout=120)
        assert writer.returncode == 0, errors
        acks.join()
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    seconds = time.perf_counter() - started
    acknowledged = set(acks.ids)
    store = MarkdownMemoryStore(path)
    try:
        memories = {m.id: m for m in store.entries()}
        titles = {m.title for m in memories.values()}
        return Outcome(
            acknowledged=len(acknowledged),
            stored=len(memories),
            lost_memories=sorted(acknowledged - memories.keys()),
            lost_notes=[n for n in range(saves) if f"Hand note {n}" not in titles],
            lost_edits=[
                memory_id
                for memory_id, n in log.edited.items()
                if memory_id not in memories
                or f"Edited by hand in save {n}." not in memories[memory_id].text
            ],
            problems=len(store.problems()),
            seconds=seconds,
            log=log,
            merges=json.loads(errors.rsplit("merges ", 1)[1]),
        )
    finally:
        store.close()
