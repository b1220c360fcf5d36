"""Offline play pipeline speed against raw Jericho on the same action sequence, from stores
that already hold 0, 1,500 and 10,000 memories.

Replays Zork I's walkthrough (from ../shared/roms) and prints steps per second: raw
`FrotzEnv.step`, cairn's `JerichoGame` adapter alone, and the whole offline pipeline
(PlaySession: context assembly, agent, bus, triggers, rule-based synthesis, durable store
writes) on each store, preloaded with memories of the kind a long run leaves (spread over the
game's rooms, NPCs and the world), with the ratio to raw Jericho.

Targets: >= 1,000 turns/s from an empty store and >= 500 turns/s at 10,000 memories, judged
on the median of `--runs` runs of each (this VM's speed drifts by a third between minutes;
the slowest and fastest runs are printed beside the median).

    .venv/bin/python bench/play_bench.py [--rom PATH] [--repeat N] [--runs N]
                                         [--sizes 0,1500,10000]
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

from cairn.adapters.game.jericho_game import JerichoGame  # noqa: E402
from cairn.agents.scripted import ScriptedAgent  # noqa: E402
from cairn.container import build_container  # noqa: E402
from cairn.play.runner import run_play  # noqa: E402
from cairn.settings import CairnSettings, load_settings  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from store_bench import realistic_entry  # noqa: E402


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


def preload(settings: CairnSettings, size: int, rooms: dict[int, str]) -> int:
    """Fill the workdir's store with `size` memories spread over the game's rooms, as a long
    run leaves them: written, then the episode's end (the policy's caps retire the excess,
    the checkpoint archives what is SUPERSEDED). Returns how many stay loaded for play."""
    if not size:
        return 0
    rng = random.Random(size)
    ids = sorted(rooms)
    container = build_container(settings)
    store = container.store()
    try:
        with store.transaction() as tx:
            for n in range(size):
                entry = realistic_entry(rng, n)
                if entry.location_id is not None:
                    room = ids[n % len(ids)]
                    entry = entry.model_copy(
                        update={"location_id": room, "location_name": rooms[room]}
                    )
                tx.add(entry)
        container.memory_service().prune()
        store.checkpoint()
        return len(store.entries())
    finally:
        store.close()


def pipeline_turns_per_second(
    rom: Path, actions: list[str], repeat: int, store: str, size: int, rooms: dict[int, str]
) -> tuple[float, float, int]:
    """(turns/s of the whole run, turns/s of its turns alone, memories loaded for play).

    The whole run is `run_play` from its call to its return: building the container, opening
    the store, every turn, the episodes' ends (pruning, archive, folds) and the run's files
    (map, knowledge base, report.json, report.html). The story file is loaded before the clock
    starts, as it is for raw Jericho. The turns alone run from the first turn's start to the
    last turn's end (`on_turn`)."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(workdir=Path(tmp), store=store, objective_every=10_000)
        hot = preload(settings, size, rooms)
        game = JerichoGame(rom)
        turn_times: dict[int, list[float]] = {}
        start = time.perf_counter()
        result = run_play(
            settings,
            game=game,
            agent=ScriptedAgent(actions),
            episodes=repeat,
            max_turns=len(actions),
            on_turn=lambda episode, turn, obs: turn_times.setdefault(episode, []).append(
                time.perf_counter()
            ),
        )
        elapsed = time.perf_counter() - start
        turns = result.report["total"]["turns"]
    # the turns' own time: in each episode, from the end of its first turn to the end of its
    # last (the episode's start and end count as fixed costs)
    spans = [(t[-1] - t[0], len(t) - 1) for t in turn_times.values() if len(t) > 1]
    per_turn = sum(s for s, _ in spans) / max(1, sum(n for _, n in spans))
    return turns / elapsed, 1 / per_turn, hot


def claim_test_cost(rom: Path, actions: list[str], repeat: int) -> str:
    """What asking the game about lessons' claims costs (`ClaimTester.test` and `.blame`,
    issue 36): one markdown run from an empty store with the tester's answers timed."""
    from cairn.lessons import tester

    spent: list[float] = []
    probes = [0]
    originals = {name: getattr(tester.ClaimTester, name) for name in ("test", "blame")}

    def timed(name: str) -> object:
        def call(self: tester.ClaimTester, *args: object) -> object:
            before = self.probes
            start = time.perf_counter()
            found = originals[name](self, *args)
            spent.append(time.perf_counter() - start)
            probes[0] += self.probes - before
            return found

        return call

    for name in originals:
        setattr(tester.ClaimTester, name, timed(name))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            settings = load_settings(workdir=Path(tmp), objective_every=10_000)
            start = time.perf_counter()
            result = run_play(
                settings,
                game=JerichoGame(rom),
                agent=ScriptedAgent(actions),
                episodes=repeat,
                max_turns=len(actions),
            )
            elapsed = time.perf_counter() - start
    finally:
        for name, original in originals.items():
            setattr(tester.ClaimTester, name, original)
    turns = int(result.report["total"]["turns"])
    total = sum(spent)
    return (
        f"claim tests (issue 36): {len(spent)} questions, {probes[0]} probes over {turns} turns;"
        f" {total * 1000:.1f} ms in all, {total / max(1, turns) * 1e6:.0f} us a turn"
        f" ({total / elapsed:.1%} of the run)"
    )


def walkthrough_rooms(rom: Path, actions: list[str]) -> dict[int, str]:
    """The rooms the walkthrough visits, by id, with their names (so preloaded memories are
    where play reads them, under the names play gives them)."""
    game = JerichoGame(rom)
    rooms: dict[int, str] = {}
    for obs in [game.reset(), *(game.step(action) for action in actions)]:
        if obs.location_id is not None and obs.location_name:
            rooms[obs.location_id] = obs.location_name
    game.close()
    return rooms


def main() -> None:
    logging.disable(logging.WARNING)  # the rule-based synthesizer's notes on preloaded rooms
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rom", type=Path, default=ROOT.parent / "shared" / "roms" / "zork1.z5")
    parser.add_argument("--repeat", type=int, default=2, help="episodes per run")
    parser.add_argument("--runs", type=int, default=3, help="runs per store and size")
    parser.add_argument("--sizes", default="0,1500,10000", help="preloaded memories")
    parser.add_argument("--stores", default="markdown,sqlite")
    args = parser.parse_args()
    if not args.rom.exists():
        sys.exit(f"no story file at {args.rom}: pass --rom PATH")
    actions = JerichoGame(args.rom).walkthrough()
    rooms = walkthrough_rooms(args.rom, actions)
    raw = raw_steps_per_second(args.rom, actions, args.repeat)
    adapter = adapter_steps_per_second(args.rom, actions, args.repeat)
    print(f"action sequence: {args.rom.name} walkthrough, {len(actions)} steps x {args.repeat}")
    print(f"raw Jericho steps/s:         {raw:9.1f}")
    print(f"JerichoGame adapter steps/s: {adapter:9.1f}")
    print(claim_test_cost(args.rom, actions, args.repeat))
    print("turns/s: the whole run (start-up, turns, episode ends, the run's files), median of")
    print(f"{args.runs} runs (slowest-fastest); turns alone in brackets (median). Targets are")
    print("judged on the whole run's median.")
    print(
        "store     preloaded  loaded   turns/s  (slowest-fastest)  (turns alone)  ratio to raw"
        "   target"
    )
    for store in args.stores.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            runs = [
                pipeline_turns_per_second(args.rom, actions, args.repeat, store, size, rooms)
                for _ in range(args.runs)
            ]
            rates = [rate for rate, _, _ in runs]
            rate = statistics.median(rates)
            loop = statistics.median(loop for _, loop, _ in runs)
            hot = runs[0][2]
            target = 1000 if size == 0 else 500 if size >= 10_000 else None
            met = target is not None and rate >= target
            verdict = "" if target is None else f">= {target}: {'OK' if met else 'MISSED'}"
            print(
                f"{store:<9} {size:>9} {hot:>7} {rate:9.1f}  ({min(rates):6.0f}-{max(rates):6.0f})"
                f"     ({loop:9.1f}) {rate / raw:13.3f}   {verdict}",
                flush=True,
            )


if __name__ == "__main__":
    main()
