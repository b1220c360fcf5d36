"""Start-up of the command line: `cairn --help`, and `cairn memories show` (markdown, --all,
sqlite) and `cairn memories export` on 3,000 memories; beside them, the interpreter alone and
the third-party floor under `show` (`FLOOR`: the libraries it cannot do without, and one model
and one settings model validated).

Each command runs in a fresh interpreter (as a user runs it), the commands in turn, N rounds;
prints the best and the median of each in milliseconds. cairn's modules are compiled first
(`compileall`, as an install does), so a run that sets PYTHONDONTWRITEBYTECODE does not time
the compiler. Prints, asserts nothing.

    .venv/bin/python bench/startup_bench.py [--runs N] [--memories M]
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore  # noqa: E402
from cairn.adapters.storage.sqlite_store import SqliteMemoryStore  # noqa: E402
from cairn.models.memory import MemoryEntry, MemoryScope  # noqa: E402

FLOOR = """
import click, filelock, orjson
from pydantic import BaseModel
from pydantic_settings import BaseSettings

class Entry(BaseModel):
    title: str

class Settings(BaseSettings):
    store: str = "markdown"

Entry.model_validate({"title": "t"}), Settings()
"""
"""The third-party work `cairn memories show` needs before any of cairn's own: the command
line (click), a validated model (pydantic: its import, its first schema and its plugin
loader's `importlib.metadata`), the settings model (pydantic-settings, which imports asyncio
and its sources), the lock and JSON libraries. The row shows how much of the 200 ms target
this stack leaves to cairn."""


def timed(commands: list[list[str]], runs: int) -> list[tuple[float, float]]:
    """(best, median) of each command in milliseconds. The commands take turns, one run each
    per round, so each row samples the same moments of a machine whose speed drifts (the floor
    and `show` side by side, not minutes apart)."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for command, row in zip(commands, times, strict=True):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            row.append((time.perf_counter() - start) * 1000)
    return [(min(row), statistics.median(row)) for row in times]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--memories", type=int, default=3000)
    args = parser.parse_args(argv)
    compileall.compile_dir(ROOT / "app", quiet=1)  # what `pip install` does
    cairn = [sys.executable, "-m", "cairn"]
    with tempfile.TemporaryDirectory() as folder:
        markdown, sqlite = Path(folder) / "markdown", Path(folder) / "sqlite"
        stores = (
            MarkdownMemoryStore(markdown / "Memories.md", backup_count=0),
            SqliteMemoryStore(sqlite / "memories.sqlite3"),
        )
        for store in stores:
            with store.transaction() as tx:
                for n in range(args.memories):
                    tx.add(
                        MemoryEntry(
                            scope=MemoryScope.LOCATION,
                            location_id=n % 84,
                            location_name=f"Room {n % 84}",
                            title=f"Memory {n}",
                            text=f"Something learned in room {n % 84}, number {n}.",
                        )
                    )
            store.close()
        m = args.memories
        rows = [
            ("python alone", [sys.executable, "-c", "pass"]),
            ("  + what `show` cannot do without", [sys.executable, "-c", FLOOR]),
            ("cairn --help", [*cairn, "--help"]),
            (
                f"cairn memories show ({m} memories)",
                [*cairn, "memories", "show", "--workdir", str(markdown)],
            ),
            (
                f"  show --all ({m})",
                [*cairn, "memories", "show", "--all", "--workdir", str(markdown)],
            ),
            (
                f"  show, sqlite ({m})",
                [*cairn, "memories", "show", "--store", "sqlite", "--workdir", str(sqlite)],
            ),
            (
                f"cairn memories export ({m})",
                [*cairn, "memories", "export", "--workdir", str(markdown)],
            ),
            (
                f"  export, sqlite ({m})",
                [*cairn, "memories", "export", "--store", "sqlite", "--workdir", str(sqlite)],
            ),
        ]
        figures = timed([command for _, command in rows], args.runs)
        for (label, _), (best, median) in zip(rows, figures, strict=True):
            print(f"{label:40} best {best:6.0f} ms   median {median:6.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
