"""Shared-store benchmark: 1, 4 and 8 writer processes on one PostgreSQL memory space and on one
SQLite file, side by side.

Run as `.venv/bin/python bench/shared_store_bench.py [--writes 200] [--writers 1,4,8]`.
PostgreSQL is a throwaway server this bench starts (initdb + pg_ctl, default settings: fsync
on), or the one of CAIRN_DATABASE_URL. Each writer process opens its store, waits for the
others, then repeats: one unit of work adding one memory (a write, timed to its durable end),
then one read of a location's memories (timed: it includes taking in what the other writers
committed). Throughput is all writes over the time from the start signal to the last writer's
end. Process start-up and opening the store are not timed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn.interfaces.store import IMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope


def open_store(kind: str, target: str, space: str) -> IMemoryStore:
    if kind == "sqlite":
        from cairn.adapters.storage.sqlite_store import SqliteMemoryStore

        return SqliteMemoryStore(Path(target))
    from cairn.adapters.storage.postgres_store import PostgresMemoryStore

    return PostgresMemoryStore(target, space=space)


def writer(
    kind: str, target: str, space: str, name: str, writes: int, start: Any, out: Any
) -> None:
    """One writer process: time `writes` writes and as many reads; send the timings."""
    store = open_store(kind, target, space)
    write_ms: list[float] = []
    read_ms: list[float] = []
    start.wait()
    for n in range(writes):
        entry = MemoryEntry(
            scope=MemoryScope.LOCATION,
            location_id=n % 20,
            location_name=f"Room {n % 20}",
            title=f"{name} memory {n}",
            text=f"Written by {name}, number {n}: the troll blocks the narrow passage.",
        )
        began = time.perf_counter()
        with store.transaction() as tx:
            tx.add(entry)
        middle = time.perf_counter()
        store.entries(location_id=(n + 7) % 20)
        read_ms.append((time.perf_counter() - middle) * 1000)
        write_ms.append((middle - began) * 1000)
    ended = time.perf_counter()
    store.close()
    out.put((write_ms, read_ms, ended))


@dataclass
class Row:
    kind: str
    writers: int
    write_p50: float
    write_p95: float
    read_p50: float
    read_p95: float
    throughput: float
    stored: int


def p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def run(kind: str, target: str, space: str, writers: int, writes: int) -> Row:
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    out = context.Queue()
    processes = [
        context.Process(
            target=writer, args=(kind, target, space, f"w{n}", writes, start, out), daemon=True
        )
        for n in range(writers)
    ]
    for process in processes:
        process.start()
    time.sleep(1.0 + 0.5 * writers)  # let every writer open its store before the start
    began = time.perf_counter()
    start.set()
    results = [out.get(timeout=600) for _ in processes]
    for process in processes:
        process.join()
    wall = max(r[2] for r in results) - began
    write_ms = [v for r in results for v in r[0]]
    read_ms = [v for r in results for v in r[1]]
    check = open_store(kind, target, space)
    stored = len(check.entries())
    check.close()
    return Row(
        kind, writers, p(write_ms, 50), p(write_ms, 95), p(read_ms, 50), p(read_ms, 95),
        writers * writes / wall, stored,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=200, help="writes per writer process")
    parser.add_argument("--writers", default="1,4,8", help="writer process counts")
    args = parser.parse_args()
    counts = [int(n) for n in args.writers.split(",")]
    server = None
    url = os.environ.get("CAIRN_DATABASE_URL")
    if not url:
        from cairn.testing.postgres_server import PostgresServer

        server = PostgresServer.create().start()
        url = server.url
    rows: list[Row] = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            for count in counts:
                for kind in ("postgres", "sqlite"):
                    target = url if kind == "postgres" else str(Path(folder) / f"{count}.sqlite3")
                    space = f"bench-{count}-{time.time_ns()}"
                    rows.append(run(kind, target, space, count, args.writes))
                    assert rows[-1].stored == count * args.writes, rows[-1]
    finally:
        if server is not None:
            server.stop()
    print(f"{args.writes} writes per writer process; each write one unit of work adding one memory")
    print("| writers | store | write p50 | write p95 | read p50 | read p95 | writes/s (all) |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row.writers} | {row.kind} | {row.write_p50:.2f} ms | {row.write_p95:.2f} ms"
            f" | {row.read_p50:.3f} ms | {row.read_p95:.3f} ms | {row.throughput:,.0f} |"
        )


if __name__ == "__main__":
    main()
