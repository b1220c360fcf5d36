"""Crash safety and concurrency of the durable stores, with real writer processes.

A writer (`python -m tests.contract.writer`) is killed with SIGKILL at random moments while it
writes; every memory it acknowledged must load afterwards, from a file with no problems. Four
writers at once must lose nothing. Interpreters are started ahead of time (`--wait`) so the
test time goes to writing and killing, not to Python start-up.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cairn.adapters.storage.markdown_check import check_memory_file
from cairn.interfaces.store import IMemoryStore
from tests.contract.conftest import StoreFactory, open_store
from tests.contract.writer import writer_entry

ROOT = Path(__file__).resolve().parents[2]
KILLS = 50
# PostgreSQL's own WAL makes a commit durable; its kills test only that cairn acknowledges a
# memory after the commit, and its writers start slower (psycopg, a connection pool)
KILLS_OF = {"postgres": 20}
WRITERS = 4
MEMORIES_PER_WRITER = 100
WARM_WRITERS = 3  # interpreters starting up while the current one is written and killed
START_TIMEOUT_S = 60.0


@dataclass
class Writer:
    """One writer process started with `--wait`; `ids` are the ids it acknowledged."""

    process: subprocess.Popen[str]
    prefix: str
    ids: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, kind: str, path: Path, count: int, prefix: str, *options: str) -> Writer:
        command = [sys.executable, "-m", "tests.contract.writer", kind, str(path), str(count)]
        process = subprocess.Popen(
            [*command, "--prefix", prefix, "--wait", *options],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        return cls(process, prefix)

    def wait_ready(self) -> None:
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        assert line == "ready\n", f"writer {self.prefix} did not start: {line!r}"

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def first_ack(self) -> None:
        """Wait until the writer acknowledged its first memory (it is writing now)."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.endswith("\n"), f"writer {self.prefix} ended early: {self.errors()}"
        self.ids.append(line.strip())

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        assert self.process.wait(timeout=START_TIMEOUT_S) == -signal.SIGKILL
        self.collect()

    def finish(self) -> None:
        self.collect()
        assert self.process.wait(timeout=START_TIMEOUT_S) == 0, self.errors()

    def collect(self) -> None:
        """Read the rest of stdout: complete lines are acknowledged ids (a cut line is not)."""
        assert self.process.stdout is not None
        rest = self.process.stdout.read()
        self.ids += [line for line in rest.split("\n")[:-1] if line]

    def errors(self) -> str:
        assert self.process.stderr is not None
        return self.process.stderr.read() if self.process.poll() is not None else ""

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@contextmanager
def writer_pool() -> Iterator[list[Writer]]:
    """Every writer started in the block is killed (if still running) and closed at the end."""
    writers: list[Writer] = []
    try:
        yield writers
    finally:
        for writer in writers:
            writer.close()


def stored_ids(kind: str, path: Path) -> tuple[set[str], IMemoryStore]:
    store = open_store(kind, path)
    return {m.id for m in store.entries()}, store


def assert_loads_cleanly(kind: str, path: Path, acknowledged: set[str], kills: int) -> set[str]:
    """Every acknowledged memory is there, intact; at most one unacknowledged one per kill."""
    ids, store = stored_ids(kind, path)
    try:
        assert store.problems() == []
        missing = acknowledged - ids
        assert not missing, f"acknowledged memories lost: {sorted(missing)[:5]}"
        assert len(ids - acknowledged) <= kills
        for memory_id in sorted(acknowledged)[-3:]:
            prefix, number = memory_id.rsplit("-", 1)
            assert store.get(memory_id) == writer_entry(prefix, int(number)).model_copy(
                update={"created_at": store.get(memory_id).created_at}  # type: ignore[union-attr]
            )
    finally:
        store.close()
    if kind == "markdown":
        assert check_memory_file(path) == []
    return ids


def kill_writers_mid_write(kind: str, path: Path, *options: str) -> int:
    """Start writers, kill each at a random moment while it writes, and check after each kill
    that every acknowledged memory loads; return how many kills left a fold's temp file."""
    kills = KILLS_OF.get(kind, KILLS)
    rng = random.Random(20240607)
    acknowledged: set[str] = set()
    mid_write = 0
    with writer_pool() as started:
        queue: deque[Writer] = deque()

        def top_up(next_round: int) -> None:
            while len(queue) < WARM_WRITERS and next_round + len(queue) < kills:
                prefix = f"k{next_round + len(queue):02d}"
                writer = Writer.start(kind, path, 100_000, prefix, *options)
                started.append(writer)
                queue.append(writer)

        for round_number in range(kills):
            top_up(round_number)
            writer = queue.popleft()
            writer.wait_ready()
            writer.go()
            writer.first_ack()
            time.sleep(rng.uniform(0.0, 0.02))
            writer.kill()
            acknowledged |= set(writer.ids)
            mid_write += bool(list(path.parent.glob(f".{path.name}.*.tmp")))
            assert_loads_cleanly(kind, path, acknowledged, kills=round_number + 1)
    assert len(acknowledged) >= kills
    return mid_write


def test_writer_killed_mid_write_never_loses_acknowledged_memories(
    durable_factory: StoreFactory,
) -> None:
    """Killed at random moments (markdown: while appending units of work)."""
    kill_writers_mid_write(durable_factory.kind, durable_factory.path)


def test_markdown_writer_killed_mid_fold_never_loses_acknowledged_memories(
    markdown_factory: StoreFactory,
) -> None:
    """The recent part is folded every other write (append, fold, append, ...), so kills land
    inside folds too."""
    mid_write = kill_writers_mid_write("markdown", markdown_factory.path, "--recent-limit", "1")
    print(f"kills that left a half-written temp file: {mid_write} of {KILLS}")
    assert mid_write > 0  # the kills did land inside folds, not only between them


def test_concurrent_writer_processes_lose_nothing(durable_factory: StoreFactory) -> None:
    kind, path = durable_factory.kind, durable_factory.path
    with writer_pool() as writers:
        for n in range(WRITERS):
            writers.append(Writer.start(kind, path, MEMORIES_PER_WRITER, f"p{n}"))
        for writer in writers:
            writer.wait_ready()
        for writer in writers:
            writer.go()
        for writer in writers:
            writer.finish()
    expected = {writer_entry(f"p{n}", i).id for n in range(WRITERS) for i in range(100)}
    assert {i for w in writers for i in w.ids} == expected
    ids, store = stored_ids(kind, path)
    try:
        assert ids == expected
        assert len(store.entries()) == WRITERS * MEMORIES_PER_WRITER
        assert store.problems() == []
    finally:
        store.close()


def test_concurrent_threads_with_their_own_store_objects_lose_nothing(
    durable_factory: StoreFactory,
) -> None:
    errors: list[BaseException] = []

    def write(prefix: str) -> None:
        store = durable_factory.open()
        try:
            for n in range(40):
                with store.transaction() as tx:
                    tx.add(writer_entry(prefix, n))
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=write, args=(f"t{n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    loaded = durable_factory.open()
    assert len(loaded.entries()) == 120
    assert loaded.problems() == []


@pytest.mark.parametrize("kind", ["markdown", "sqlite"])
def test_writer_module_prints_each_id_after_storing_it(kind: str, tmp_path: Path) -> None:
    path = tmp_path / ("Memories.md" if kind == "markdown" else "memories.sqlite3")
    result = subprocess.run(
        [sys.executable, "-m", "tests.contract.writer", kind, str(path), "3", "--prefix", "x"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        check=True,
    )
    assert result.stdout.split() == ["x-000000", "x-000001", "x-000002"]
    ids, store = stored_ids(kind, path)
    store.close()
    assert ids == set(result.stdout.split())
