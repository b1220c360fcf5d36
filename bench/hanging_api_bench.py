"""A 10-turn play run against a Messages API that hangs: how long it takes with the default
timeout and retries (the circuit breaker should end the wait after the first call).

    .venv/bin/python bench/hanging_api_bench.py [--turns 10] [--delay 600]

Prints the wall time and the circuit's figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cairn.play.runner import run_play  # noqa: E402
from cairn.settings import load_settings  # noqa: E402
from cairn.testing import FakeMessagesServer  # noqa: E402
from cairn.testing.fake_game import FakeGame  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--delay", type=float, default=600.0, help="how long the API hangs")
    args = parser.parse_args()
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
    with FakeMessagesServer() as server, tempfile.TemporaryDirectory() as work:
        for _ in range(200):
            server.queue_fault("slow", delay=args.delay)
        settings = load_settings(workdir=Path(work), llm="anthropic", llm_base_url=server.base_url)
        started = time.perf_counter()
        report = run_play(settings, game=FakeGame(), episodes=1, max_turns=args.turns).report
        seconds = time.perf_counter() - started
    print(
        f"{args.turns} turns against an API hanging {args.delay:.0f} s: {seconds:.1f} s "
        f"(timeout {settings.llm_timeout:.0f} s, {settings.llm_max_retries} retry); "
        f"requests sent {len(server.requests)}; circuit {report['llm_usage']['circuit']}"
    )


if __name__ == "__main__":
    main()
