"""Does memory help the offline player? Every game played with memory and without, side by side.

Plays each story file in ../shared/roms (or `--games zork1,905`) for `--episodes` episodes of
`--turns` turns twice, with memory and with the `--no-memory` baseline, each run offline in a
fresh temporary workdir through `run_play`, and prints one table with, per game and mode:

- rep.fail: repeated-failure rate (actions repeating a known failure, over all actions);
- 1st score: turns to the first score in each episode (`-` when the episode never scored);
- best: best score of the run (and the game's max score);
- deaths: episodes that ended in a death;
- look/wait: `look`, `l`, `wait`, `z` actions counted in the run's transcript, in total and
  the worst episode's share of its turns;
- summ/turn: summarizer calls per turn, when report.json has a `summarizer_calls` field.

It prints; it asserts nothing. Runs go through a pool of `--workers` processes (default 2).

    .venv/bin/python bench/learning_bench.py [--games zork1,905] [--turns 150] [--episodes 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cairn.play.runner import run_play  # noqa: E402
from cairn.settings import load_settings  # noqa: E402

ROMS = ROOT.parent / "shared" / "roms"
STORY_SUFFIXES = (".z3", ".z5", ".z8")
IDLE_ACTIONS = frozenset(["look", "l", "wait", "z"])


@dataclass
class RunFigures:
    """What the table shows for one game in one mode."""

    game: str
    memory: bool
    turns: int = 0
    repeated_failure_rate: float = 0.0
    first_score: list[int | None] = field(default_factory=list)
    best_score: int | None = None
    max_score: int | None = None
    deaths: int = 0
    idle_turns: int = 0
    idle_worst_share: float = 0.0
    summarizer_per_turn: float | None = None
    seconds: float = 0.0
    error: str = ""


def story_files(games: list[str] | None) -> list[Path]:
    """The story files to play: all in ROMS, or those whose stem is listed."""
    found = sorted(p for p in ROMS.iterdir() if p.suffix in STORY_SUFFIXES)
    if not games:
        return found
    by_stem = {p.stem: p for p in found}
    missing = [g for g in games if g not in by_stem]
    if missing:
        sys.exit(f"no story file for {', '.join(missing)} in {ROMS}")
    return [by_stem[g] for g in games]


def idle_counts(transcript: Path) -> dict[int, int]:
    """Look/wait actions per episode, read from a run's transcript.jsonl."""
    counts: dict[int, int] = {}
    for line in transcript.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if " ".join(str(row.get("action", "")).lower().split()) in IDLE_ACTIONS:
            counts[row["episode"]] = counts.get(row["episode"], 0) + 1
    return counts


def summarizer_calls(report: dict[str, Any]) -> int | None:
    """`summarizer_calls` from the report's totals, else summed over its episodes, if present."""
    total = report.get("total", {})
    if "summarizer_calls" in total:
        return int(total["summarizer_calls"])
    per_episode = [e["summarizer_calls"] for e in report["episodes"] if "summarizer_calls" in e]
    return sum(per_episode) if per_episode else None


def play_one(story: Path, memory: bool, episodes: int, turns: int) -> RunFigures:
    """Play one game in one mode in a fresh temporary workdir; its figures."""
    figures = RunFigures(game=story.stem, memory=memory)
    start = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix=f"learn-{story.stem}-") as tmp:
            settings = load_settings(workdir=Path(tmp), llm="offline")
            result = run_play(
                settings,
                game_path=story,
                episodes=episodes,
                max_turns=turns,
                use_memory=memory,
                seed=0,
            )
            report = result.report
            idle = idle_counts(result.run_dir / "transcript.jsonl")
    except Exception as exc:  # a bench reports a broken run and goes on with the others
        figures.error = f"{type(exc).__name__}: {exc}"
        figures.seconds = time.perf_counter() - start
        return figures
    total = report["total"]
    figures.turns = total["turns"]
    figures.repeated_failure_rate = total["repeated_failed_action_rate"]
    figures.first_score = [e["turns_to_first_score"] for e in report["episodes"]]
    figures.best_score, figures.max_score = total["best_score"], total["max_score"]
    figures.deaths = total["died"]
    figures.idle_turns = sum(idle.values())
    figures.idle_worst_share = max(
        (idle.get(e["episode"], 0) / e["turns"] for e in report["episodes"] if e["turns"]),
        default=0.0,
    )
    calls = summarizer_calls(report)
    if calls is not None and figures.turns:
        figures.summarizer_per_turn = calls / figures.turns
    figures.seconds = time.perf_counter() - start
    return figures


def table(results: list[RunFigures]) -> str:
    """One row per game and mode, memory first."""
    show_summ = any(r.summarizer_per_turn is not None for r in results)
    head = ["game", "mode", "turns", "rep.fail", "1st score", "best", "deaths", "look/wait"]
    head += ["summ/turn"] if show_summ else []
    head += ["secs"]
    rows = [head]
    for r in sorted(results, key=lambda r: (r.game, not r.memory)):
        mode = "memory" if r.memory else "baseline"
        if r.error:
            rows.append([r.game, mode, "error", r.error[:60], *[""] * (len(head) - 4)])
            continue
        best = "?" if r.best_score is None else str(r.best_score)
        if r.max_score is not None:
            best += f"/{r.max_score}"
        row = [
            r.game,
            mode,
            str(r.turns),
            f"{r.repeated_failure_rate:.1%}",
            "/".join("-" if t is None else str(t) for t in r.first_score),
            best,
            str(r.deaths),
            f"{r.idle_turns} (max {r.idle_worst_share:.0%})",
        ]
        if show_summ:
            per = r.summarizer_per_turn
            row.append("-" if per is None else f"{per:.2f}")
        row.append(f"{r.seconds:.0f}")
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i < 2 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    )


def verdict(results: list[RunFigures]) -> list[str]:
    """Games where memory's best score is below the baseline's (when the baseline scores)."""
    by_game: dict[str, dict[bool, RunFigures]] = {}
    for r in results:
        by_game.setdefault(r.game, {})[r.memory] = r
    worse = []
    for game, modes in sorted(by_game.items()):
        mem, base = modes.get(True), modes.get(False)
        if mem is None or base is None or mem.error or base.error:
            continue
        if (base.best_score or 0) > 0 and (mem.best_score or 0) < (base.best_score or 0):
            worse.append(f"{game} (memory {mem.best_score}, baseline {base.best_score})")
    return worse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="", help="comma-separated story stems (default: all)")
    parser.add_argument("--turns", type=int, default=150, help="turns per episode")
    parser.add_argument("--episodes", type=int, default=3, help="episodes per run")
    parser.add_argument("--workers", type=int, default=2, help="processes (1: no pool)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    if not ROMS.is_dir():
        sys.exit(f"no story files: {ROMS} is absent")
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    jobs = [(story, memory) for story in story_files(games) for memory in (True, False)]
    start = time.perf_counter()
    results: list[RunFigures] = []
    if args.workers <= 1:
        for story, memory in jobs:
            results.append(play_one(story, memory, args.episodes, args.turns))
            print(f"  done {story.stem} {'memory' if memory else 'baseline'}", file=sys.stderr)
    else:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            futures = {
                pool.submit(play_one, story, memory, args.episodes, args.turns): (story, memory)
                for story, memory in jobs
            }
            for future in as_completed(futures):
                story, memory = futures[future]
                results.append(future.result())
                print(f"  done {story.stem} {'memory' if memory else 'baseline'}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    print(
        f"learning bench: {len(jobs) // 2} games x {args.episodes} episodes x {args.turns} turns,"
        f" memory vs baseline, offline, seed 0"
    )
    print(table(results))
    worse = verdict(results)
    print(f"memory below baseline on best score: {', '.join(worse) if worse else 'none'}")
    print(f"wall time: {elapsed:.0f} s with {args.workers} worker(s)")
    if args.json is not None:
        args.json.write_text(
            json.dumps([r.__dict__ for r in results], indent=2) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
