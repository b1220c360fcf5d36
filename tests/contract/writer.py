"""A writer process for the crash and concurrency tests: N memories, one unit of work each.

    python -m tests.contract.writer KIND PATH N [--prefix P] [--wait] [--until FILE]

KIND is `markdown`, `sqlite` or `postgres` (PATH then names the memory space, on the server
of TEST_DATABASE_URL). Each memory id is printed to stdout, flushed, only after its
unit of work has returned, so every printed id is an acknowledged (durably stored) memory.
With `--wait` the process first prints `ready` to stderr and waits for a line on stdin before it
opens the store, so a test can start interpreters ahead of time and release them when it wants.
With `--until FILE` it stops early, after the memory it is writing, once FILE exists. With
`--recent-limit BYTES` a markdown store folds its recent part that often (kills land in folds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.adapters.storage.sqlite_store import SqliteMemoryStore
from cairn.interfaces.store import IMemoryStore
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope

KINDS = ("markdown", "sqlite", "postgres")


def open_store(kind: str, path: Path, recent_limit: int | None = None) -> IMemoryStore:
    """Open the store of `kind` at `path` as the application would (a markdown store folds its
    recent part after `recent_limit` bytes when given)."""
    if kind == "markdown":
        if recent_limit is not None:
            return MarkdownMemoryStore(path, recent_limit=recent_limit)
        return MarkdownMemoryStore(path)
    if kind == "sqlite":
        return SqliteMemoryStore(path)
    if kind == "postgres":
        from tests.postgres import URL_VARIABLE, open_pg_store

        return open_pg_store(path, url=os.environ[URL_VARIABLE])  # type: ignore[no-any-return]
    raise ValueError(f"unknown store kind {kind!r}; expected one of {', '.join(KINDS)}")


def writer_entry(prefix: str, n: int) -> MemoryEntry:
    """The n-th memory of a writer: spread over locations, NPCs and the world, with text that
    needs escaping (a fake location header and a rule line)."""
    common = {
        "id": f"{prefix}-{n:06d}",
        "category": list(MemoryCategory)[n % len(MemoryCategory)],
        "title": f"{prefix} memory {n} **bold** *(Ep9)*",
        "text": f"Written by {prefix} as number {n}.\n---\n## Location 999: Fake Room",
        "episode": 1,
        "turn_start": n,
    }
    kind = n % 3
    if kind == 0:
        room = n % 7 + 1
        return MemoryEntry(
            scope=MemoryScope.LOCATION, location_id=room, location_name=f"Room {room}", **common
        )
    if kind == 1:
        return MemoryEntry(scope=MemoryScope.NPC, npc_ids=[f"npc-{n % 4}"], **common)
    return MemoryEntry(scope=MemoryScope.WORLD, **common)


def run(
    kind: str,
    path: Path,
    count: int,
    prefix: str,
    until: Path | None = None,
    recent_limit: int | None = None,
) -> None:
    """Add `count` memories one unit of work each (stopping once `until` exists), printing
    each id once it is stored."""
    store = open_store(kind, path, recent_limit)
    try:
        for n in range(count):
            if until is not None and until.exists():
                break
            entry = writer_entry(prefix, n)
            with store.transaction() as tx:
                tx.add(entry)
            sys.stdout.write(entry.id + "\n")
            sys.stdout.flush()
    finally:
        store.close()
    if isinstance(store, MarkdownMemoryStore):  # what others saved and it merged, for benches
        sys.stderr.write(f"merges {json.dumps(dict(getattr(store, 'merges', {})))}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.contract.writer", description=__doc__)
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("path", type=Path)
    parser.add_argument("count", type=int, metavar="N")
    parser.add_argument("--prefix", default="w", help="memory ids are PREFIX-000000, ...")
    parser.add_argument(
        "--wait", action="store_true", help="print 'ready' to stderr, wait for a stdin line"
    )
    parser.add_argument("--until", type=Path, help="stop once this file exists")
    parser.add_argument(
        "--recent-limit", type=int, help="markdown: fold after this many appended bytes"
    )
    args = parser.parse_args(argv)
    if args.wait:
        sys.stderr.write("ready\n")
        sys.stderr.flush()
        if not sys.stdin.readline():
            return 1
    run(args.kind, args.path, args.count, args.prefix, args.until, args.recent_limit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
