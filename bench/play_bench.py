"""Offline play pipeline speed against raw Jericho on the same action sequence.

Replays Zork I's walkthrough (from ../shared/roms) three ways and prints steps per second:
raw `FrotzEnv.step`, cairn's `JerichoGame` adapter alone, and the whole offline pipeline
(PlaySession: context assembly, agent, bus, triggers, rule-based synthesis, markdown store),
with the pipeline/raw ratio.

    .venv/bin/python bench/play_bench.py [--rom PATH] [--repeat N] [--store markdown|sqlite]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cairn.adapters.game.jericho_game import JerichoGame  # noqa: E402
from cairn.agents.scripted import ScriptedAgent  # noqa: E402
from cairn.play.runner import run_play  # noqa: E402
from cairn.settings import load_settings  # noqa: E402


def raw_steps_per_second(rom: Path, actions: list[str], repeat: int) -> float:
    from jericho import FrotzEnv

    env = FrotzEnv(str(rom))
    start = time.perf_counter()
    for _ in range(repeat):
        env.reset()
        for action in actions:
            env.step(action)
    elapsed = time.perf_counter() - start
    env.close()
    return repeat * len(actions) / elapsed


def adapter_steps_per_second(rom: Path, actions: list[str], repeat: int) -> float:
    game = JerichoGame(rom)
    start = time.perf_counter()
    for _ in range(repeat):
        game.reset()
        for action in actions:
            game.step(action)
    elapsed = time.perf_counter() - start
    game.close()
    return repeat * len(actions) / elapsed


def pipeline_turns_per_second(rom: Path, actions: list[str], repeat: int, store: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(workdir=Path(tmp), store=store, objective_every=10_000)
        start = time.perf_counter()
        result = run_play(
            settings,
            game=JerichoGame(rom),
            agent=ScriptedAgent(actions),
            episodes=repeat,
            max_turns=len(actions),
        )
        elapsed = time.perf_counter() - start
        turns = result.report["total"]["turns"]
    return turns / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rom", type=Path, default=ROOT.parent / "shared" / "roms" / "zork1.z5")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--store", choices=["markdown", "sqlite"], default="markdown")
    args = parser.parse_args()
    if not args.rom.exists():
        sys.exit(f"no story file at {args.rom}: pass --rom PATH")
    actions = JerichoGame(args.rom).walkthrough()
    raw = raw_steps_per_second(args.rom, actions, args.repeat)
    adapter = adapter_steps_per_second(args.rom, actions, args.repeat)
    pipeline = pipeline_turns_per_second(args.rom, actions, args.repeat, args.store)
    print(f"action sequence: {args.rom.name} walkthrough, {len(actions)} steps x {args.repeat}")
    print(f"raw Jericho steps/s:        {raw:10.1f}")
    print(f"JerichoGame adapter steps/s: {adapter:9.1f}")
    print(f"offline pipeline turns/s:   {pipeline:10.1f}  ({args.store} store)")
    print(f"pipeline / raw ratio:       {pipeline / raw:10.3f}")


if __name__ == "__main__":
    main()
