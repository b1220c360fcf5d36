"""Store benchmark: each store grown one unit of work at a time, as a long game grows it.

Run as `.venv/bin/python bench/store_bench.py [--sizes 100,1000,3000,10000]`. At each size it
prints the write p50/p95 (of the last `--window` writes), the total time of all writes so far,
the load time (open a new store object and read a location's memories, best of 5) and the size
of the store's files. A write is one unit of work adding one memory, durable (fsynced) before it
returns. Beside them, a full-rewrite writer (read and parse the whole Memories.md, add one
memory, write the whole file again, as the reference writer does) and the ratio. First, the
disk's own floor: a 200-byte append and fdatasync, alone, as often as the stores write (a
durable write cannot be cheaper; its tail moves with the machine's I/O, and so do the write
p95s).

Targets: at 10,000 memories write p95 <= 0.5 ms, all 10,000 writes <= 5 s, write p50 within
1.5x of the p50 at 100; loads <= 10 ms at 3,000 and <= 30 ms at 10,000; >= 20x faster than the
full-rewrite writer at 10,000.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cairn.adapters.storage.markdown_blocks import as_written
from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.markdown_render import render
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.adapters.storage.sqlite_store import SqliteMemoryStore
from cairn.interfaces.store import IMemoryStore
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
)

_WORDS = (
    "the", "troll", "blocks", "a", "narrow", "passage", "lamp", "brass", "lantern", "grating",
    "leads", "down", "into", "darkness", "mailbox", "stands", "here", "leaflet", "reads",
    "welcome", "to", "zork", "thief", "steals", "treasure", "egg", "jewelled", "west", "of",
    "house", "forest", "path", "clearing", "kitchen", "window", "opens", "with", "effort",
    "attic", "rope", "knife", "sword", "glows", "faintly", "blue", "cyclops", "flees", "when",
    "you", "say", "odysseus", "dam", "control", "panel", "bolt",
)  # fmt: skip
_NPCS = ("troll", "thief", "cyclops", "spirits", "bat", "vampire-bat", "gnome", "robot")
_ROOMS = 60


@dataclass(frozen=True)
class StoreKind:
    """A store under test: its name, file name and how to open it."""

    name: str
    file_name: str
    open: Callable[[Path], IMemoryStore]


KINDS = (
    StoreKind("markdown", "Memories.md", lambda p: MarkdownMemoryStore(p, backup_count=3)),
    StoreKind("sqlite", "memories.sqlite3", SqliteMemoryStore),
)


def _words(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    length = 0
    while length < chars:
        word = rng.choice(_WORDS)
        out.append(word)
        length += len(word) + 1
    text = " ".join(out)
    return text[0].upper() + text[1:]


def realistic_entry(rng: random.Random, n: int) -> MemoryEntry:
    """A memory like the agent writes: title ~40 chars, text ~150 chars, in some scope."""
    roll = rng.random()
    scope = (
        MemoryScope.LOCATION if roll < 0.6 else MemoryScope.NPC if roll < 0.8 else MemoryScope.WORLD
    )
    room = rng.randrange(1, _ROOMS + 1)
    turn = rng.randrange(1, 400)
    return MemoryEntry(
        id=f"m-{n:012x}",
        scope=scope,
        category=rng.choice(list(MemoryCategory)),
        status=MemoryStatus.TENTATIVE if rng.random() < 0.1 else MemoryStatus.ACTIVE,
        persistence="PERMANENT" if rng.random() < 0.2 else None,
        title=_words(rng, 36)[:44],
        text=_words(rng, 145),
        importance=rng.randrange(1, 1001),
        tags=[rng.choice(_WORDS)] if rng.random() < 0.3 else [],
        episode=rng.randrange(1, 4),
        turn_start=turn,
        turn_end=turn + rng.randrange(0, 3),
        score_delta=rng.choice((0, 0, 0, 5, 10, -10)),
        location_id=room if scope is MemoryScope.LOCATION else None,
        location_name=f"Room {room}" if scope is MemoryScope.LOCATION else None,
        npc_ids=[rng.choice(_NPCS)] if scope is MemoryScope.NPC else [],
    )


def fill(store: IMemoryStore, count: int, rng: random.Random) -> None:
    """Add `count` realistic memories and some visits in one unit of work."""
    with store.transaction() as tx:
        for room in range(1, _ROOMS + 1):
            tx.record_visit(room, f"Room {room}", 1)
        for n in range(count):
            tx.add(realistic_entry(rng, n))


def _ms(seconds: float) -> float:
    return seconds * 1000.0


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100.0 * len(ordered) + 0.5) - 1))
    return ordered[index]


@contextmanager
def _workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as name:
        yield Path(name)


def _load_ms(kind: StoreKind, path: Path, repeats: int) -> float:
    """Open the store and read its memories; the best of `repeats`, in ms."""
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        store = kind.open(path)
        store.entries(location_id=1)
        times.append(_ms(time.perf_counter() - start))
        store.close()
    return min(times)


@dataclass
class SizeFigures:
    """One store at one size: the writes that grew it there, its load time and file size."""

    size: int
    p50: float
    p95: float
    total_s: float
    load_ms: float
    file_kb: float


def add_one(store: IMemoryStore, entry: MemoryEntry) -> float:
    """Add `entry` in its own unit of work; the seconds it took to return (durable)."""
    start = time.perf_counter()
    with store.transaction() as tx:
        tx.add(entry)
    return time.perf_counter() - start


def grow(kind: StoreKind, sizes: list[int], seed: int, window: int) -> list[SizeFigures]:
    """Grow one store a unit of work (one memory) at a time, as a long game does; at each size
    take the p50/p95 of the last `window` writes, the total so far and a fresh load."""
    rng = random.Random(seed)
    figures: list[SizeFigures] = []
    with _workdir() as folder:
        path = folder / kind.file_name
        store = kind.open(path)
        with store.transaction() as tx:
            for room in range(1, _ROOMS + 1):
                tx.record_visit(room, f"Room {room}", 1)
        times: list[float] = []
        total = 0.0
        for size in sizes:
            while len(times) < size:
                took = add_one(store, realistic_entry(rng, len(times)))
                total += took
                times.append(_ms(took))
            recent = times[-min(window, size) :]
            files = [p for p in folder.iterdir() if p.name.startswith(kind.file_name)]
            file_kb = sum(p.stat().st_size for p in files if not p.name.endswith(".lock")) / 1000
            figures.append(
                SizeFigures(
                    size,
                    statistics.median(recent),
                    _percentile(recent, 95),
                    total,
                    _load_ms(kind, path, repeats=5),
                    file_kb,
                )
            )
            print(f"  {kind.name:<8} reached {size:>6}: {total:6.2f} s so far", flush=True)
        store.close()
    return figures


def full_rewrite_ms(size: int, seed: int, writes: int) -> float:
    """The p50 of a writer that reads and parses the whole Memories.md, adds one memory and
    writes the whole file again (no lock, no fsync), at `size` memories."""
    rng = random.Random(seed)
    with _workdir() as folder:
        path = folder / "Memories.md"
        store = MarkdownMemoryStore(path, backup_count=0)
        fill(store, size, rng)
        store.close()
        times: list[float] = []
        for n in range(writes):
            entry = as_written(realistic_entry(rng, size + n))
            start = time.perf_counter()
            parsed = parse(path.read_text(encoding="utf-8"), str(path))
            parsed.cache.memories[entry.id] = entry
            tmp = path.with_suffix(".tmp")
            tmp.write_text(render(parsed.cache, parsed.raw), encoding="utf-8")
            os.replace(tmp, path)
            times.append(_ms(time.perf_counter() - start))
    return statistics.median(times)


def _mark(ok: bool) -> str:
    return "OK" if ok else "MISSED"


def report(name: str, figures: list[SizeFigures]) -> None:
    print(f"\n{name}")
    print("   size   write p50   write p95   total (s)   load (ms)   files (KB)")
    for f in figures:
        print(
            f"{f.size:>7} {f.p50:9.3f} ms {f.p95:8.3f} ms {f.total_s:10.2f} {f.load_ms:11.2f}"
            f" {f.file_kb:12.1f}"
        )
    first, last = figures[0], figures[-1]
    if last.size >= 10_000:
        print(
            f"targets at {last.size}: p95 {last.p95:.3f} ms <= 0.5 ({_mark(last.p95 <= 0.5)});"
            f" total {last.total_s:.2f} s <= 5 ({_mark(last.total_s <= 5)});"
            f" p50 {last.p50 / first.p50:.2f}x of the p50 at {first.size} <= 1.5"
            f" ({_mark(last.p50 <= 1.5 * first.p50)})"
        )
    loads = {f.size: f.load_ms for f in figures}
    for size, target in ((3000, 10.0), (10_000, 30.0)):
        if size in loads:
            verdict = _mark(loads[size] <= target)
            print(f"load at {size}: {loads[size]:.2f} ms <= {target:.0f} ({verdict})")


def disk_floor(writes: int) -> tuple[float, float]:
    """The p50/p95 (ms) of a 200-byte append made durable with fdatasync, in a temp folder."""
    times: list[float] = []
    with _workdir() as folder:
        fd = os.open(folder / "floor", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for _ in range(writes):
                start = time.perf_counter()
                os.write(fd, b"x" * 200)
                getattr(os, "fdatasync", os.fsync)(fd)  # (as the markdown store)
                times.append(_ms(time.perf_counter() - start))
        finally:
            os.close(fd)
    return statistics.median(times), _percentile(times, 95)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,1000,3000,10000", help="comma-separated sizes")
    parser.add_argument("--window", type=int, default=500, help="writes per p50/p95")
    parser.add_argument("--rewrites", type=int, default=5, help="timed full-rewrite writes")
    parser.add_argument("--seed", type=int, default=1, help="random seed for the memories")
    parser.add_argument("--stores", default="markdown,sqlite", help="which stores to grow")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    wanted = args.stores.split(",")
    print(f"cairn store bench: grown one unit of work at a time to {sizes}", flush=True)
    p50, p95 = disk_floor(args.window)
    print(f"the disk alone (append 200 bytes + fdatasync): p50 {p50:.3f} ms, p95 {p95:.3f} ms")
    results = {k.name: grow(k, sizes, args.seed, args.window) for k in KINDS if k.name in wanted}
    for name, figures in results.items():
        report(name, figures)
    print("\nfull-rewrite writer (read, parse, add one, rewrite the file; no fsync, no lock)")
    for size in sizes:
        rewrite = full_rewrite_ms(size, args.seed, args.rewrites)
        ratios = "  ".join(
            f"{name} {rewrite / figures[sizes.index(size)].p50:7.1f}x faster"
            for name, figures in results.items()
        )
        print(f"{size:>7}: p50 {rewrite:9.2f} ms   {ratios}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
