"""Report benchmark: how long rendering the HTML report of a 3,000-memory, Zork-sized run takes.

Run as `.venv/bin/python bench/report_bench.py [--memories 3000] [--repeat 5]`.
The map is Zork I's full walkthrough map (replayed from $CAIRN_ROMS or ../shared/roms; without
the story file, an 84-room compass grid stands in). The memories (a tenth of them superseded,
linked to their successors; some NPC and world ones) go into a Markdown store; report.json
holds 10 episodes and a baseline run beside it. Timed, best of `--repeat`:
- render: gather the run from the open store and render the page (the target: under 1 s);
- write: `cairn report` end to end (build the container, load the store, render, write).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cairn.adapters.storage.map_repository import save_map
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
)
from cairn.report.data import gather
from cairn.report.page import render_page
from cairn.report.writer import write_report
from cairn.services.map import MapGraph
from cairn.settings import load_settings
from tests.report_maps import ZORK, walkthrough_map

TARGET_S = 1.0
_WORDS = (
    "troll", "lamp", "grating", "egg", "thief", "sword", "rope", "coffin", "torch", "maze",
    "canary", "dam", "bolt",
)  # fmt: skip


def grid_map(rooms: int = 84) -> MapGraph:
    """A stand-in map: `rooms` rooms on a 12-wide compass grid."""
    g = MapGraph()
    for room in range(1, rooms + 1):
        g.set_name(room, f"Room {room}")
        if room % 12 != 1:
            g.add_connection(room - 1, room, action="east")
            g.add_connection(room, room - 1, action="west")
        if room > 12:
            g.add_connection(room - 12, room, action="south")
    return g


def fill_store(store: MarkdownMemoryStore, rooms: list[int], count: int) -> None:
    rng = random.Random(0)
    categories = list(MemoryCategory)
    entries: list[MemoryEntry] = []
    for i in range(count):
        words = " ".join(rng.choice(_WORDS) for _ in range(12))
        kind = i % 20
        scope = (
            MemoryScope.WORLD
            if kind == 0
            else MemoryScope.NPC
            if kind == 1
            else MemoryScope.LOCATION
        )
        entries.append(
            MemoryEntry(
                scope=scope,
                location_id=rng.choice(rooms) if scope is MemoryScope.LOCATION else None,
                npc_ids=["troll"] if scope is MemoryScope.NPC else [],
                category=rng.choice(categories),
                title=f"Memory {i}: {words[:40]}",
                text=words,
                episode=1 + i % 10,
                turn_start=i % 200,
            )
        )
    with store.transaction() as tx:
        for entry in entries:
            tx.add(entry)
        for old, new in zip(entries[2::10], entries[3::10], strict=False):
            if old.scope is new.scope is MemoryScope.LOCATION:
                tx.supersede(old.id, new.id)


def report_json(memory: bool) -> str:
    episodes = [
        {
            "episode": n,
            "turns": 200,
            "score": 10 * n if memory else 5 * n,
            "max_score": 350,
            "turns_to_first_score": 40 - n,
            "repeated_failed_action_rate": 0.05 / n,
            "summarizer_call_rate": 0.15 / n,
            "context_tokens_p50": 900 + 20 * n,
        }
        for n in range(1, 11)
    ]
    usage = {"calls": 0, "failures": 0, "input_tokens": 0, "output_tokens": 0, "by_role": {}}
    return json.dumps(
        {
            "game": "zork1",
            "llm": "offline",
            "store": "markdown",
            "memory": memory,
            "run_id": "bench",
            "episodes": episodes,
            "total": {"turns": 2000},
            "llm_usage": usage,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work, base = root / "run", root / "baseline"
        for folder, memory in ((work, True), (base, False)):
            folder.mkdir()
            (folder / "report.json").write_text(report_json(memory))
        source = "Zork I walkthrough map" if ZORK.is_file() else "84-room grid (no zork1.z5)"
        graph = walkthrough_map(ZORK, root / "replay") if ZORK.is_file() else grid_map()
        save_map(graph, work / "map.json")
        store = MarkdownMemoryStore(work / "Memories.md")
        fill_store(store, graph.location_ids(), args.memories)
        render, size = [], 0
        for _ in range(args.repeat):
            started = time.perf_counter()
            page = render_page(gather(work, store, baseline=base))
            render.append(time.perf_counter() - started)
            size = len(page.encode())
        store.close()
        settings = load_settings(workdir=work)
        written = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            write_report(settings, baseline=base)
            written.append(time.perf_counter() - started)
    best = min(render)
    print(
        f"report of {args.memories} memories, {len(graph.location_ids())} rooms ({source}), "
        f"10 episodes + baseline: page {size / 1e6:.1f} MB"
    )
    print(f"render (gather from the open store + HTML): best {best:.3f} s (target < {TARGET_S} s)")
    print(f"cairn report end to end (container, store load, render, write): {min(written):.3f} s")
    print("PASS" if best < TARGET_S else "FAIL")


if __name__ == "__main__":
    main()
