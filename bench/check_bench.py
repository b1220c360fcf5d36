"""Big Memories.md files: `cairn memories check` on each, and `cairn play` on the biggest.

Builds, in a temp folder: files of ordinary memories (cairn's own layout, realistic memories
as bench/store_bench.py makes them) of about 10 MB and 50 MB, and a file of 1,000,000 empty
location sections (`## Location N:` with nothing under it, ~21 MB). For each it prints the
seconds `check` takes in this process and its speed (MB/s), then one `cairn memories check`
run in a subprocess (interpreter start included) on the 50 MB file. Last, `cairn play
--max-turns 2` (the demo world, offline: the `--game` default) on a copy of the sections file:
its seconds and the file's size before and after (play adds a few KB; it used to write every
empty section back with a visits line, a `### Memories` line and a rule: 22 MB -> 74 MB).

Targets: check time linear in size, 50 MB in at most 5 s; play grows the file by what it adds.
Prints, asserts nothing.

    .venv/bin/python bench/check_bench.py [--sizes 10,50] [--sections 1000000] [--no-play]
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.store_bench import realistic_entry  # noqa: E402
from cairn.adapters.storage.markdown_check import check_file  # noqa: E402
from cairn.adapters.storage.markdown_render import render  # noqa: E402
from cairn.adapters.storage.memory_cache import MemoryCache  # noqa: E402
from cairn.models.memory import LocationRecord  # noqa: E402

MB = 1_000_000
_ROOMS = 60


def memories_file(path: Path, megabytes: int, seed: int = 1) -> int:
    """Write a file of about `megabytes` MB of realistic memories; return how many."""
    rng = random.Random(seed)
    cache = MemoryCache()
    for room in range(1, _ROOMS + 1):
        cache.locations[room] = LocationRecord(
            id=room, name=f"Room {room}", visits=3, episodes=[1, 2]
        )
    sample = {e.id: e for e in (realistic_entry(rng, n) for n in range(1000))}
    probe = MemoryCache()
    probe.memories = sample
    per_memory = len(render(probe, []).encode()) / len(sample)
    entries = dict(sample)
    text = ""
    while len(text) < 0.98 * megabytes * MB:  # (once more when the sample's guess fell short)
        count = int(len(entries) * megabytes * MB / len(text)) if text else 0
        count = max(count, int(megabytes * MB / per_memory))
        more = (realistic_entry(rng, n) for n in range(len(entries), count))
        entries.update((e.id, e) for e in more)
        cache.memories = entries
        text = render(cache, [])
    path.write_text(text, encoding="utf-8")
    return len(entries)


def sections_file(path: Path, count: int) -> None:
    """Write a file of `count` empty location sections."""
    with path.open("w", encoding="utf-8") as handle:
        handle.write("# Location Memories\n\n")
        for start in range(1, count + 1, 100_000):
            stop = min(start + 100_000, count + 1)
            handle.write("".join(f"## Location {n}:\n\n" for n in range(start, stop)))
        handle.write("# NPC Memories\n\n# World Memories\n")


def time_check(path: Path) -> tuple[float, int, int, int]:
    """`check` in this process: seconds, problems, notes, memories."""
    start = time.perf_counter()
    found = check_file(path)
    seconds = time.perf_counter() - start
    return seconds, len(found.problems), len(found.notes), found.memories


def cairn(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "cairn", *args], cwd=ROOT, capture_output=True, text=True
    )
    return time.perf_counter() - start, done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,50", help="MB of memories, comma-separated")
    parser.add_argument("--sections", type=int, default=1_000_000)
    parser.add_argument("--no-play", action="store_true", help="skip the play run")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cairn-check-bench-") as name:
        folder = Path(name)
        files: list[tuple[str, Path]] = []
        for megabytes in (int(s) for s in args.sizes.split(",") if s):
            path = folder / f"memories-{megabytes}mb.md"
            count = memories_file(path, megabytes)
            files.append((f"{count:,} memories", path))
        sections = folder / "sections.md"
        sections_file(sections, args.sections)
        files.append((f"{args.sections:,} empty sections", sections))

        print(f"{'file':28} {'MB':>6} {'check s':>8} {'MB/s':>6} {'problems':>8} {'notes':>6}")
        for label, path in files:
            size = path.stat().st_size / MB
            seconds, problems, notes, _ = time_check(path)
            print(
                f"{label:28} {size:6.1f} {seconds:8.2f} {size / seconds:6.1f}"
                f" {problems:8} {notes:6}"
            )
        label, path = max(files[:-1] or files, key=lambda item: item[1].stat().st_size)
        seconds, done = cairn("memories", "check", str(path))
        print(
            f"subprocess `cairn memories check` on {label}"
            f" ({path.stat().st_size / MB:.1f} MB): {seconds:.2f} s, exit {done.returncode}"
        )

        if not args.no_play:
            work = folder / "play"
            work.mkdir()
            shutil.copyfile(sections, work / "Memories.md")
            before = (work / "Memories.md").stat().st_size
            seconds, done = cairn("play", "--max-turns", "2", "--workdir", str(work))
            after = (work / "Memories.md").stat().st_size
            print(
                f"`cairn play --max-turns 2` on {args.sections:,} empty sections: {seconds:.1f} s,"
                f" exit {done.returncode}; Memories.md {before / MB:.2f} MB -> {after / MB:.2f} MB"
                f" (+{after - before:,} bytes)"
            )
            if done.returncode:
                print(done.stderr[-2000:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
