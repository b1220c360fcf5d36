"""Store benchmark: load time, durable write time (p50/p95) and file size per store and size.

Run as `.venv/bin/python bench/store_bench.py [--sizes 100,1000,10000] [--writes 50]`.
Targets (from the issue): a 200 KB Memories.md loads in at most 10 ms; one durable write (a unit
of work adding one memory) takes at most 10 ms p95 at 1,000 memories. Loads are timed from opening
the store to reading its memories (best of several); writes from opening the unit of work to its
durable end (file and folder fsynced).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.adapters.storage.sqlite_store import SqliteMemoryStore
from cairn.interfaces.store import IMemoryStore
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
)

LOAD_200KB_TARGET_MS = 10.0
WRITE_P95_TARGET_MS = 10.0
WRITE_TARGET_SIZE = 1000
LOAD_FILE_BYTES = 200_000

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


def _verdict(value: float, target: float) -> str:
    return f"target <= {target:.0f} ms: {'OK' if value <= target else 'MISSED'}"


@contextmanager
def _workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as name:
        yield Path(name)


def _load_times_ms(kind: StoreKind, path: Path, repeats: int) -> list[float]:
    """Open the store and read its memories `repeats` times; each time in ms."""
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        store = kind.open(path)
        store.entries()
        times.append(_ms(time.perf_counter() - start))
        store.close()
    return times


def bench_size(kind: StoreKind, size: int, writes: int, seed: int) -> None:
    """Print load time, write p50/p95 and file size for one store at one size."""
    rng = random.Random(seed)
    with _workdir() as folder:
        path = folder / kind.file_name
        store = kind.open(path)
        fill(store, size, rng)
        store.close()
        load_ms = min(_load_times_ms(kind, path, repeats=5 if size <= 1000 else 2))
        store = kind.open(path)
        times: list[float] = []
        for n in range(writes):
            entry = realistic_entry(rng, size + n)
            start = time.perf_counter()
            with store.transaction() as tx:
                tx.add(entry)
            times.append(_ms(time.perf_counter() - start))
        store.close()
        size_kb = path.stat().st_size / 1000
    p50, p95 = statistics.median(times), _percentile(times, 95)
    line = (
        f"{kind.name:<8} {size:>6} memories: load {load_ms:8.2f} ms | write p50 {p50:6.2f} ms"
        f" p95 {p95:6.2f} ms | file {size_kb:9.1f} KB"
    )
    if size == WRITE_TARGET_SIZE:
        line += f" | write p95 {_verdict(p95, WRITE_P95_TARGET_MS)}"
    print(line, flush=True)


def bench_load_200kb(seed: int) -> None:
    """Print the parse+load time of a Memories.md of about 200 KB (best of several runs)."""
    rng = random.Random(seed)
    kind = KINDS[0]
    with _workdir() as folder:
        path = folder / kind.file_name
        store = kind.open(path)
        with store.transaction() as tx:
            for room in range(1, _ROOMS + 1):
                tx.record_visit(room, f"Room {room}", 1)
        n = 0
        while path.stat().st_size < LOAD_FILE_BYTES:
            with store.transaction() as tx:
                for _ in range(50):
                    tx.add(realistic_entry(rng, n))
                    n += 1
        store.close()
        size_kb = path.stat().st_size / 1000
        times = _load_times_ms(kind, path, repeats=30)
    best, median = min(times), statistics.median(times)
    print(
        f"load of a 200 KB Memories.md ({size_kb:.0f} KB, {n} memories): {best:.2f} ms"
        f" (best of {len(times)}; median {median:.2f} ms) | {_verdict(best, LOAD_200KB_TARGET_MS)}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--sizes",
        default="100,1000,10000",
        help="comma-separated store sizes (number of memories)",
    )
    parser.add_argument("--writes", type=int, default=50, help="timed writes per store and size")
    parser.add_argument("--seed", type=int, default=1, help="random seed for the memories")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    print(f"cairn store bench: sizes {sizes}, {args.writes} timed writes each", flush=True)
    for size in sizes:
        for kind in KINDS:
            bench_size(kind, size, args.writes, args.seed)
    bench_load_200kb(args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
