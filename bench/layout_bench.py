"""How long the report's map layout takes: `layout_map` on every shared game's walkthrough map.

The layout runs once at the end of every `cairn play` run (the report's map), so on a short
benchmark run it is a large share of the whole. This replays each story file's walkthrough in
../shared/roms (or $CAIRN_ROMS; or the games named) through Jericho, as the report's tests do
(`tests.report_maps.walkthrough_map`), then times `layout_map` alone on the map learned (start:
West of House on Zork I, else the lowest room id), and prints per game the rooms, connections
and the median milliseconds of `--runs` layouts, then the total of the medians. The replays are
not timed.

    .venv/bin/python bench/layout_bench.py [--runs N] [GAME ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cairn.report.layout import layout_map
from cairn.services.map import MapGraph, connections
from tests.report_maps import ROMS, walkthrough_map


def median_ms(graph: MapGraph, start: int | None, runs: int) -> float:
    """The median time of `runs` layouts of `graph`, in milliseconds."""
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        layout_map(graph, start=start)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help="story file names (default: all in the roms)")
    parser.add_argument("--runs", type=int, default=7, help="layouts timed per game (median)")
    args = parser.parse_args()
    if not ROMS.is_dir():
        sys.exit(f"no story files: {ROMS} is absent (set CAIRN_ROMS)")
    names = args.games or sorted(p.name for p in ROMS.iterdir() if p.suffix[:2] == ".z")
    print(f"{'game':<18}{'rooms':>6}{'links':>7}{'layout ms':>11}")
    total = 0.0
    for name in names:
        with tempfile.TemporaryDirectory() as workdir, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = walkthrough_map(ROMS / name, Path(workdir))
        start = 180 if name.startswith("zork1.") else min(graph.location_ids(), default=None)
        ms = median_ms(graph, start, args.runs)
        total += ms
        rooms, links = len(graph.location_ids()), len(connections(graph))
        print(f"{name:<18}{rooms:>6}{links:>7}{ms:>11.1f}", flush=True)
    print(f"{'total':<31}{total:>11.1f}")


if __name__ == "__main__":
    main()
