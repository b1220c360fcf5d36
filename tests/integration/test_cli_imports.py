"""The memory commands import the store they read and the memory models, not the rest of cairn
(a command's start is mostly its imports: `bench/startup_bench.py`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.adapters.storage.sqlite_store import SqliteMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope

RUN = """
import json, sys
from cairn.cli import main
main(sys.argv[1:], standalone_mode=False)
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

NOT_IMPORTED = (
    "ctypes",  # (the file swap of a fold looks libc up when it first swaps)
    "dependency_injector",
    "blinker",
    "yaml",
    "anthropic",
    "jericho",
    "cairn.agents",
    "cairn.container",
    "cairn.events",
    "cairn.memory_api",
    "cairn.models.game",
    "cairn.replay",
    "cairn.report",
    "cairn.runtime",
    "cairn.services",
)
"""Packages and modules the memory commands never need. (`cairn.play.legend`, the play
command's help text, is the one module of cairn.play the command line imports. The settings
come from pydantic-settings, which imports asyncio: STYLE's one settings model.)"""


def _stores(workdir: Path) -> None:
    entry = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=1, location_name="Hall", title="A lamp", text="."
    )
    markdown = MarkdownMemoryStore(workdir / "md" / "Memories.md", backup_count=0)
    sqlite = SqliteMemoryStore(workdir / "sqlite" / "memories.sqlite3")
    for store in (markdown, sqlite):
        with store.transaction() as tx:
            tx.add(entry)
        store.close()


@pytest.mark.parametrize(
    "args",
    [
        ["memories", "show", "--workdir", "md"],
        ["memories", "show", "--all", "--json", "--workdir", "md"],
        ["memories", "show", "--workdir", "sqlite"],
        ["memories", "export", "--workdir", "md"],
        ["memories", "export", "--format", "jsonl", "--workdir", "sqlite"],
        ["memories", "check", "md/Memories.md"],
    ],
)
def test_memory_commands_import_only_what_they_use(tmp_path: Path, args: list[str]) -> None:
    _stores(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "A lamp" in done.stdout or "OK, 1 memories" in done.stdout
    modules = json.loads(done.stderr.splitlines()[-1])
    found = [m for m in modules if any(m == n or m.startswith(f"{n}.") for n in NOT_IMPORTED)]
    assert found == []
    assert [m for m in modules if m.startswith("cairn.play")] <= ["cairn.play", "cairn.play.legend"]


FROZEN_AT_EXIT = """
import gc, sys
from cairn.cli import run
sys.argv = ["cairn", *sys.argv[1:]]
try:
    run()
except SystemExit as e:
    print(e.code, gc.get_freeze_count(), file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["memories", "show", "--workdir", "md"], 0),
        (["memories", "show", "--store", "postgres", "--workdir", "md"], 2),  # a CairnError
    ],
)
def test_the_command_line_leaves_its_objects_out_of_the_last_collection(
    tmp_path: Path, args: list[str], code: int
) -> None:
    """`run` freezes what the command made as the process ends, whichever way it ends: the
    interpreter's last garbage collection would walk all of it (~25 ms after reading 3,000
    memories) and find nothing to free."""
    _stores(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", FROZEN_AT_EXIT, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "CAIRN_DATABASE_URL": ""},
    )
    exit_code, frozen = done.stderr.splitlines()[-1].split()
    assert int(exit_code) == code, done.stderr
    assert int(frozen) > 1000  # every object the command and its imports made
