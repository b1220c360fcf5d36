"""Prompt assembly and routes as the store grows: the reads of one turn cost the same at 10,000
memories as at 100.

For each size, a store (markdown, in a temporary folder) holds that many memories, grown as a
long run leaves them (written, then the policy's caps retire the excess, the episode's end
archives it), spread over 100 rooms joined in a grid, with NPCs and world memories. Then the
adventurer prompt is assembled for 2,000 turns, each in a random room (every room's memory
changes now and then, as play adds memories), and a route and the nearest unexplored exit
are asked for from that room. Prints microseconds per prompt and per route (median and p95).
Prints, asserts nothing.

    .venv/bin/python bench/prompt_bench.py [--sizes 100,1000,10000] [--turns 2000]
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from store_bench import realistic_entry  # noqa: E402

from cairn.container import build_container  # noqa: E402
from cairn.models.game import GameState  # noqa: E402
from cairn.models.memory import MemoryScope  # noqa: E402
from cairn.services.context import ContextRequest  # noqa: E402
from cairn.settings import load_settings  # noqa: E402

ROOMS = 100
SIDE = 10


def _grid(container: object) -> None:
    """100 rooms in a 10 x 10 grid, every exit mentioned, some refused."""
    graph = container.map_graph()  # type: ignore[attr-defined]
    for room in range(1, ROOMS + 1):
        x, y = (room - 1) % SIDE, (room - 1) // SIDE
        graph.set_name(room, f"Room {room}")
        graph.note_exits(room, ["north", "south", "east", "west"])
        if x + 1 < SIDE:
            graph.add_connection(room, room + 1, action="east")
        if y + 1 < SIDE and room % 3:
            graph.add_connection(room, room + SIDE, action="south")


def _ms_stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e6, ordered[int(0.95 * (len(ordered) - 1))] * 1e6


def measure(size: int, turns: int) -> tuple[int, tuple[float, float], tuple[float, float]]:
    rng = random.Random(size)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(workdir=Path(tmp))
        container = build_container(settings)
        store = container.store()
        with store.transaction() as tx:
            for room in range(1, ROOMS + 1):
                tx.record_visit(room, f"Room {room}", 1)
            for n in range(size):
                entry = realistic_entry(rng, n)
                if entry.scope is MemoryScope.LOCATION:
                    room = rng.randrange(1, ROOMS + 1)
                    entry = entry.model_copy(
                        update={"location_id": room, "location_name": f"Room {room}"}
                    )
                tx.add(entry)
        container.memory_service().prune()
        store.checkpoint()
        loaded = len(store.entries())
        _grid(container)
        context = container.context_service()
        graph = container.map_graph()
        gs = GameState()
        prompts: list[float] = []
        routes: list[float] = []
        for turn in range(turns):
            room = rng.randrange(1, ROOMS + 1)
            if turn % 4 == 0:  # play adds a memory now and then
                entry = realistic_entry(rng, size + turn).model_copy(
                    update={
                        "scope": MemoryScope.LOCATION,
                        "location_id": room,
                        "location_name": f"Room {room}",
                        "npc_ids": [],
                    }
                )
                with store.transaction() as tx:
                    tx.add(entry)
            request = ContextRequest(game_state=gs, location_id=room, location_name=f"Room {room}")
            start = time.perf_counter()
            context.assemble("adventurer", request)
            prompts.append(time.perf_counter() - start)
            start = time.perf_counter()
            graph.route(room, rng.randrange(1, ROOMS + 1))
            graph.nearest_unexplored(room)
            routes.append(time.perf_counter() - start)
        store.close()
    return loaded, _ms_stats(prompts), _ms_stats(routes)


def main(argv: list[str] | None = None) -> int:
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args(argv)
    print("memories written, loaded for play: prompt (µs median / p95), route (µs median / p95)")
    for size in (int(s) for s in args.sizes.split(",")):
        loaded, prompt, route = measure(size, args.turns)
        print(
            f"{size:>7} {loaded:>7}   prompt {prompt[0]:8.1f} / {prompt[1]:8.1f}"
            f"   route {route[0]:7.1f} / {route[1]:7.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
