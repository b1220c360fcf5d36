"""How long a scenario takes to be refused or loaded: a 200,000-step narrative scenario (past
MAX_ITEMS steps: refused), one of exactly MAX_ITEMS turn steps (the largest legal one: loaded
and validated), and a file just past MAX_SCENARIO_BYTES (refused before it is parsed).

Each is timed through `load_scenario` (read, YAML, pydantic, references), N rounds; prints the
best and the median in seconds, and the refusal's message. Prints, asserts nothing.

    .venv/bin/python bench/scenario_refusal_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cairn.errors import ScenarioError  # noqa: E402
from cairn.replay import load_scenario  # noqa: E402
from cairn.replay.limits import MAX_ITEMS, MAX_SCENARIO_BYTES  # noqa: E402

HEAD = "kind: narrative\nname: bench\nlocations:\n" + "".join(
    f"  - {{id: {i}, name: Room {i}}}\n" for i in range(1, 51)
)


def says(steps: int) -> str:
    """A narrative scenario of `steps` one-line `say` steps."""
    return HEAD + "steps:\n" + "  - say: The wind howls.\n" * steps


def turns(steps: int) -> str:
    """A narrative scenario of `steps` turn steps walking round 50 rooms (about 15 YAML values
    each: the shape of a recorded play session)."""
    body = "".join(
        f"  - turn: go to room {i % 50 + 1}\n"
        f"    response: You walk on. Room {i % 50 + 1} is quiet; a lamp burns on the table.\n"
        f"    location_after: {i % 50 + 1}\n"
        f"    score_before: {i}\n"
        f"    score_after: {i + 1}\n"
        f"    inventory_after: [lamp, key]\n"
        for i in range(steps)
    )
    return HEAD + "steps:\n" + body


def timed(path: Path, runs: int) -> tuple[float, float, str]:
    """(best, median) seconds of `load_scenario(path)`, and its outcome."""
    times: list[float] = []
    outcome = ""
    for _ in range(runs):
        start = time.perf_counter()
        try:
            document = load_scenario(path)
            outcome = f"loaded: {len(getattr(document.scenario, 'steps', []))} steps"
        except ScenarioError as exc:
            outcome = f"refused: {exc}"
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as tmp:
        cases = {
            "200,000 say steps": says(200_000),
            f"{MAX_ITEMS:,} turn steps (legal)": turns(MAX_ITEMS),
            f"{MAX_SCENARIO_BYTES + 1:,} bytes": HEAD + "#" * MAX_SCENARIO_BYTES,
        }
        print(f"{'scenario':<28} {'bytes':>12} {'best s':>8} {'median s':>9}  outcome")
        for name, text in cases.items():
            path = Path(tmp) / "bench.yaml"
            path.write_text(text, encoding="utf-8")
            best, median, outcome = timed(path, args.runs)
            size = path.stat().st_size
            print(f"{name:<28} {size:>12,} {best:>8.2f} {median:>9.2f}  {outcome}")


if __name__ == "__main__":
    main()
