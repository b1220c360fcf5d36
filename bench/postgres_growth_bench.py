"""PostgreSQL store growth: one memory space grown one unit of work at a time, as a long game
grows it, each write followed by a read as the next turn's prompt makes it (the written
memory's location, or the top ten notes).

Run as `.venv/bin/python bench/postgres_growth_bench.py [--sizes 100,1000,3000,10000]`. The
server is a throwaway one this bench starts (initdb + pg_ctl, default settings: fsync on), or
the one of CAIRN_DATABASE_URL (a new memory space each run). At each size it prints the p50/p95
of the last `--window` writes and of the reads after them, the total time of all writes so
far, and the time a new store object takes to open the space and read one location (it reads
the space's index columns, then that location's memories: the lazy open). A write is one unit
of work adding one memory, committed (WAL flushed) before it returns.

What it shows: a write and the read after it cost the same at 10,000 memories as at 100 (the
cache is changed in place; a copy per unit made them grow with the space). Prints, asserts
nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from store_bench import _percentile, add_one, realistic_entry

from cairn.adapters.storage.postgres_store import PostgresMemoryStore
from cairn.testing.postgres_server import PostgresServer


def grow(url: str, sizes: list[int], window: int, seed: int) -> None:
    space = f"growth-{secrets.token_hex(4)}"
    store = PostgresMemoryStore(url, space=space)
    rng = random.Random(seed)
    writes: list[float] = []
    reads: list[float] = []
    total = 0.0
    print("   size   write p50   write p95   read p50   read p95   total (s)   open (ms)")
    try:
        for size in sizes:
            while len(writes) < size:
                entry = realistic_entry(rng, len(writes))
                took = add_one(store, entry)
                wrote = time.perf_counter()
                if entry.location_id is not None:
                    store.entries(location_id=entry.location_id)
                else:
                    store.ranked(10)  # the prompt's top notes
                total += took
                writes.append(took * 1000)
                reads.append((time.perf_counter() - wrote) * 1000)
            w, r = writes[-min(window, size) :], reads[-min(window, size) :]
            print(
                f"{size:>7} {statistics.median(w):8.3f} ms {_percentile(w, 95):8.3f} ms"
                f" {statistics.median(r):7.3f} ms {_percentile(r, 95):7.3f} ms"
                f" {total:10.2f} {_open_ms(url, space):11.1f}",
                flush=True,
            )
    finally:
        store.close()


def _open_ms(url: str, space: str) -> float:
    """A new store object on the space and a read of one location: the best of 3, in ms."""
    times = []
    for _ in range(3):
        began = time.perf_counter()
        other = PostgresMemoryStore(url, space=space)
        other.entries(location_id=1)
        times.append((time.perf_counter() - began) * 1000)
        other.close()
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,3000,10000", help="comma-separated sizes")
    parser.add_argument("--window", type=int, default=500, help="writes per p50/p95")
    parser.add_argument("--seed", type=int, default=1, help="random seed for the memories")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    url = os.environ.get("CAIRN_DATABASE_URL")
    server = None if url else PostgresServer.create().start()
    try:
        print(f"postgres growth bench: one space grown one unit of work at a time to {sizes}")
        grow(url or server.url, sizes, args.window, args.seed)  # type: ignore[union-attr]
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
