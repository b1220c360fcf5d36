"""How deep one `cairn play` turn goes, measured: the call stack (frames in cairn's own files)
where a turn's memory writes are staged, per command the turn sends (the deepest call into a
unit of work's transaction inside `PlaySession._turn` for each handler: `tx.add`, `tx.apply`
and the like; the transaction's own methods are not counted), where
the unit of work it belongs to is made durable (the first fdatasync after it), and where the
turn's prompt reads a room's memories. Prints each stack, frame by frame, with its frame and
file counts (issue 30: a turn of at most 20 hops).

Plays the first steps of Zork I (../shared/roms) offline with a scripted player on a fresh
markdown store. It asserts nothing.

    .venv/bin/python bench/turn_hops.py [--rom PATH]
"""

from __future__ import annotations

import argparse
import itertools
import logging
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from cairn.adapters.game.jericho_game import JerichoGame  # noqa: E402
from cairn.adapters.storage import cached_store, live_file, store_ops  # noqa: E402
from cairn.agents.scripted import ScriptedAgent  # noqa: E402
from cairn.play.runner import run_play  # noqa: E402
from cairn.services.context import location_memory  # noqa: E402
from cairn.settings import load_settings  # noqa: E402

ACTIONS = ["open mailbox", "take leaflet", "read leaflet", "north", "take tree", "east"]
ACTIONS += ["open window", "enter window", "take lamp", "west", "take sword", "xyzzy", "up"]
Stack = list[traceback.FrameSummary]


TRANSACTION_FILES = {
    str(ROOT / "app" / "interfaces" / "store.py"),
    str(ROOT / "app" / "adapters" / "storage" / "store_ops.py"),
}
"""Where a transaction's own methods live (`StoreTransaction.apply`, `StagingTransaction.add`):
the stack of a staged write is counted up to its call into them."""


def ours(stack: Stack) -> Stack:
    """The frames in cairn's own files (not this script's)."""
    return [f for f in stack if f.filename.startswith(str(ROOT)) and f.filename != __file__]


def staging(stack: Stack) -> Stack:
    """`stack` up to its first frame inside the transaction (see `TRANSACTION_FILES`)."""
    for i, frame in enumerate(stack):
        if frame.filename in TRANSACTION_FILES:
            return stack[:i]
    return stack


def handler_of(stack: Stack) -> str:
    """The command a staged write belongs to: the frame the bus called (its handler)."""
    for frame, below in itertools.pairwise(stack):
        if frame.name == "handle" and frame.filename.endswith("bus.py"):
            return below.name
    return "(outside the bus)"


def watch(paths: dict[str, dict[str, Stack]], prompt: dict[str, Stack]) -> None:
    """Record the stacks (see the module docstring) by wrapping three functions: per command
    (`handler_of`), its deepest staged write inside `_turn` and the sync that made it durable."""
    real_stage = store_ops.StagingTransaction._stage
    real_sync = live_file._datasync
    real_entries = cached_store.CachedStore.entries
    real_build = location_memory.LocationMemoryBuilder.build
    waiting: list[str] = []

    def stage(self: Any, op: Any) -> None:
        stack = staging(ours(traceback.extract_stack()))
        if any(f.name == "_turn" for f in stack):
            path = paths.setdefault(handler_of(stack), {})
            if len(stack) > len(path.get("stage", [])):
                path["stage"] = stack
                path.pop("commit", None)
            waiting[:] = [handler_of(stack)]
        real_stage(self, op)

    def sync(fd: int) -> None:
        for command in waiting:
            paths[command].setdefault("commit", ours(traceback.extract_stack()))
        waiting.clear()
        real_sync(fd)

    def build(self: Any, request: Any) -> Any:
        def entries(store: Any, *args: Any, **kwargs: Any) -> Any:
            prompt.setdefault("prompt", ours(traceback.extract_stack()))
            return real_entries(store, *args, **kwargs)

        cached_store.CachedStore.entries = entries  # type: ignore[method-assign]
        try:
            return real_build(self, request)
        finally:
            cached_store.CachedStore.entries = real_entries  # type: ignore[method-assign]

    store_ops.StagingTransaction._stage = stage  # type: ignore[method-assign]
    live_file._datasync = sync
    location_memory.LocationMemoryBuilder.build = build  # type: ignore[method-assign]


def show(label: str, stack: Stack) -> None:
    files = dict.fromkeys(f.filename for f in stack)
    print(f"{label}: {len(stack)} frames in {len(files)} files")
    for frame in stack:
        print(f"    {Path(frame.filename).relative_to(ROOT)}:{frame.lineno} {frame.name}")


def write_path(stage: Stack, commit: Stack) -> tuple[int, int]:
    """(frames, files) of a write staged on `stage` and made durable on `commit` (their shared
    outer frames counted once)."""
    shared = 0
    while shared < min(len(stage), len(commit)) and stage[shared] == commit[shared]:
        shared += 1
    files = dict.fromkeys(f.filename for f in [*stage, *commit[shared:]])
    return len(stage) + len(commit) - shared, len(files)


def main() -> None:
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rom", type=Path, default=ROOT.parent / "shared" / "roms" / "zork1.z5")
    args = parser.parse_args()
    if not args.rom.exists():
        sys.exit(f"no story file at {args.rom}: pass --rom PATH")
    paths: dict[str, dict[str, Stack]] = {}
    prompt: dict[str, Stack] = {}
    watch(paths, prompt)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(workdir=Path(tmp), store="markdown")
        game = JerichoGame(args.rom)
        run_play(settings, game=game, agent=ScriptedAgent(ACTIONS), episodes=1, max_turns=13)
    summary: list[str] = []
    for command, path in sorted(paths.items()):
        print(f"== {command}")
        show("stage", path.get("stage", []))
        show("commit", path.get("commit", []))
        frames, files = write_path(path.get("stage", []), path.get("commit", []))
        summary.append(f"{command}: {frames} frames in {files} files")
    show("prompt", prompt.get("prompt", []))
    print("write paths (staged, then made durable), per command of a turn:")
    for line in summary:
        print(f"    {line}")


if __name__ == "__main__":
    main()
