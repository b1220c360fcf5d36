"""A 10-turn play run against a model API that hangs: how long it takes with the default
timeout and retries (the circuit breaker should end the wait after the first call).

`--mode slow` (the default): the server answers after `--delay` seconds. `--mode drip`: it
sends the answer's last `--tail` bytes one every `--interval` seconds (one byte a second
by default), so no single read waits long: only the call's total budget (`llm_timeout`) ends
it (issue 37, item 3). `--api anthropic` (Messages API, the default) or `openai` (chat
completions).

    .venv/bin/python bench/hanging_api_bench.py [--turns 10] [--mode slow|drip] [--delay 600]
        [--interval 1.0] [--tail 400] [--api anthropic|openai]

Prints the wall time, the floor (turns x the budget would be the most a run could wait with
the breaker never opening) and the circuit's figures; asserts nothing.
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

from cairn.errors import ModelNotAnsweringError  # noqa: E402
from cairn.play.runner import run_play  # noqa: E402
from cairn.settings import load_settings  # noqa: E402
from cairn.testing import FakeMessagesServer  # noqa: E402
from cairn.testing.chat_server import FakeChatServer  # noqa: E402
from cairn.testing.fake_game import FakeGame  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--delay", type=float, default=600.0, help="how long the API hangs")
    parser.add_argument("--mode", choices=("slow", "drip"), default="slow")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between bytes")
    parser.add_argument("--tail", type=int, default=400, help="bytes dripped one at a time")
    parser.add_argument("--api", choices=("anthropic", "openai"), default="anthropic")
    args = parser.parse_args()
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
    os.environ["OPENAI_API_KEY"] = "sk-bench"
    roles = ("adventurer", "synthesis", "summary", "objective", "query")
    server_type = FakeMessagesServer if args.api == "anthropic" else FakeChatServer
    with server_type() as server, tempfile.TemporaryDirectory() as work:
        for _ in range(200):
            if args.mode == "slow":
                server.queue_fault(server.SLOW_FAULT, delay=args.delay)
            else:
                server.queue_fault("drip", interval=args.interval, tail=args.tail)
        where = {"llm_base_url": server.base_url}
        if args.api == "openai":  # a local server: its base URL and its own model names
            where = {
                "openai_base_url": server.base_url,
                "openai_models": {role: "bench-model" for role in roles},
            }
        # the offline player plays every turn the API hangs (`--llm-fallback offline`)
        settings = load_settings(workdir=Path(work), llm=args.api, llm_fallback="offline", **where)
        started = time.perf_counter()
        try:
            report = run_play(settings, game=FakeGame(), episodes=1, max_turns=args.turns).report
        except ModelNotAnsweringError as exc:  # it never answered: the run fails, as it should
            report = exc.result.report
            print(f"the run failed, as it should: {exc}")
        seconds = time.perf_counter() - started
    hang = args.delay if args.mode == "slow" else args.interval * args.tail
    print(
        f"{args.turns} turns against an {args.api} API {args.mode} ({hang:.0f} s per answer):"
        f" {seconds:.1f} s (budget {settings.llm_timeout:.0f} s per call in all,"
        f" {settings.llm_max_retries} retry); requests sent {len(server.requests)};"
        f" circuit {report['llm_usage']['circuit']}"
    )


if __name__ == "__main__":
    main()
