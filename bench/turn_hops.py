"""How deep one `cairn play` turn goes, measured: the call stack (frames in cairn's own files)
where a turn's memory write is staged (the deepest `tx.add` inside `PlaySession._turn`), where
the unit of work it belongs to is made durable (the first fdatasync after it), and where the
turn's prompt reads a room's memories. Prints each stack, frame by frame, with its frame and
file counts (issue 30: a turn of at most 20 hops).

Plays the first steps of Zork I (../shared/roms) offline with a scripted player on a fresh
markdown store. It asserts nothing.

    .venv/bin/python bench/turn_hops.py [--rom PATH]
"""

from __future__ import annotations

import argparse
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


def ours(stack: Stack) -> Stack:
    """The frames in cairn's own files (not this script's)."""
    return [f for f in stack if f.filename.startswith(str(ROOT)) and f.filename != __file__]


def watch(stacks: dict[str, Stack]) -> None:
    """Record the stacks (see the module docstring) by wrapping three functions."""
    real_add = store_ops.StagingTransaction.add
    real_sync = live_file._datasync
    real_entries = cached_store.CachedStore.entries
    real_build = location_memory.LocationMemoryBuilder.build

    def add(self: Any, entry: Any) -> None:
        stack = ours(traceback.extract_stack())
        if any(f.name == "_turn" for f in stack) and len(stack) > len(stacks.get("stage", [])):
            stacks["stage"] = stack
            stacks.pop("commit", None)
        real_add(self, entry)

    def sync(fd: int) -> None:
        if "stage" in stacks and "commit" not in stacks:
            stacks["commit"] = ours(traceback.extract_stack())
        real_sync(fd)

    def build(self: Any, request: Any) -> Any:
        def entries(store: Any, *args: Any, **kwargs: Any) -> Any:
            stacks.setdefault("prompt", ours(traceback.extract_stack()))
            return real_entries(store, *args, **kwargs)

        cached_store.CachedStore.entries = entries  # type: ignore[method-assign]
        try:
            return real_build(self, request)
        finally:
            cached_store.CachedStore.entries = real_entries  # type: ignore[method-assign]

    store_ops.StagingTransaction.add = add  # type: ignore[method-assign]
    live_file._datasync = sync
    location_memory.LocationMemoryBuilder.build = build  # type: ignore[method-assign]


def main() -> None:
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rom", type=Path, default=ROOT.parent / "shared" / "roms" / "zork1.z5")
    args = parser.parse_args()
    if not args.rom.exists():
        sys.exit(f"no story file at {args.rom}: pass --rom PATH")
    stacks: dict[str, Stack] = {}
    watch(stacks)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(workdir=Path(tmp), store="markdown")
        game = JerichoGame(args.rom)
        run_play(settings, game=game, agent=ScriptedAgent(ACTIONS), episodes=1, max_turns=13)
    shared = 0
    for kind in ("stage", "commit", "prompt"):
        stack = stacks.get(kind, [])
        files = dict.fromkeys(f.filename for f in stack)
        print(f"{kind}: {len(stack)} frames in {len(files)} files")
        for frame in stack:
            print(f"    {Path(frame.filename).relative_to(ROOT)}:{frame.lineno} {frame.name}")
    stage, commit = stacks.get("stage", []), stacks.get("commit", [])
    while shared < min(len(stage), len(commit)) and stage[shared] == commit[shared]:
        shared += 1
    write_files = dict.fromkeys(f.filename for f in [*stage, *commit[shared:]])
    print(
        f"write path (staged, then made durable): {len(stage) + len(commit) - shared} frames"
        f" in {len(write_files)} files"
    )


if __name__ == "__main__":
    main()
