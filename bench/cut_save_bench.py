"""Issue 37, item 1's attack: a person's half-written save of Memories.md during play.

Each run writes memories one unit of work at a time through a markdown store (an episode's
fold every 40), and at a random moment an "editor" saves the file in place but stops partway:
the file is cut to a random share of its bytes (30-90%), mid-line, or (one run in three) at
the line end before that point. The store goes on writing; at the end the file (and its
archive) is read afresh and every memory the store acknowledged is looked for. Prints, per
run kind, the runs, the memories lost and the parse problems left in the file (a fragment of
a block kept verbatim), then the totals. A save that stops mid-line is read after the settle
timeout (`live_edit` rule 3: 2 s), so a run takes about 2 s.

    .venv/bin/python bench/cut_save_bench.py [--runs 100] [--seed 1] [--memories 120]
"""

from __future__ import annotations

import argparse
import logging
import random
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope


def entry(i: int) -> MemoryEntry:
    return MemoryEntry(
        id=f"m-{i:05d}",
        title=f"Memory {i}",
        text=f"what was learned, number {i}\nand its second line {i}",
        scope=MemoryScope.LOCATION,
        location_id=1 + i % 7,
        category=MemoryCategory.NOTE,
        created_at=datetime(2026, 11, 28, tzinfo=UTC),
    )


def cut_in_place(path: Path, rnd: random.Random) -> str:
    """The editor's save that stopped partway; returns where it stopped (the run's kind)."""
    data = path.read_bytes()
    at = int(len(data) * rnd.uniform(0.3, 0.9))
    kind = "mid-line"
    if rnd.random() < 1 / 3:
        at, kind = data.rfind(b"\n", 0, at) + 1, "line end"
    elif data[at - 1 : at] == b"\n":
        kind = "line end"
    with open(path, "r+b") as handle:
        handle.write(data[:at])
        handle.truncate(at)
    return kind


def run(seed: int, memories: int) -> tuple[str, int, int]:
    """One run: (where the save stopped, memories lost, parse problems left)."""
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "Memories.md"
        store = MarkdownMemoryStore(path)
        acknowledged: list[str] = []
        cut_after = rnd.randint(memories // 3, memories - 20)
        kind = ""
        for i in range(memories):
            with store.transaction() as tx:
                tx.add(entry(i))
            acknowledged.append(entry(i).id)  # the unit committed: acknowledged
            if i % 40 == 39:
                store.checkpoint()  # an episode's end: a fold
            if i == cut_after:
                kind = cut_in_place(path, rnd)
        store.close()
        parsed = parse(path.read_text(encoding="utf-8"))
        found = set(parsed.cache.memories)
        for archive in Path(tmp).glob("*rchive*"):
            found |= set(parse(archive.read_text(encoding="utf-8")).cache.memories)
        lost = sum(1 for i in acknowledged if i not in found)
        return kind, lost, len(parsed.problems)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--memories", type=int, default=120)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    started = time.perf_counter()
    runs: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    problems: Counter[str] = Counter()
    for n in range(args.runs):
        kind, run_lost, run_problems = run(args.seed * 100_003 + n, args.memories)
        runs[kind] += 1
        lost[kind] += run_lost
        problems[kind] += run_problems
    for kind in sorted(runs):
        print(
            f"{kind:>9}: {runs[kind]} runs, lost {lost[kind]},"
            f" parse problems left {problems[kind]}"
        )
    print(
        f"all: {sum(runs.values())} runs of {args.memories} memories, lost = {sum(lost.values())},"
        f" problems left {sum(problems.values())} ({time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
