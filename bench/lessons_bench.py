"""Issue 29's acceptance: does memory make the offline player better, never worse?

Plays each story file in ../shared/roms (or `--games zork1,905`) for `--episodes` x `--turns`
(default 5 x 200) with memory and with the `--no-memory` baseline, and Zork I for
`--zork-episodes` x `--zork-turns` (default 20 x 300) both ways; every run offline, seed
`--seed` (1), in a fresh temporary workdir through `run_play`. Over episodes 2 to the last
(the first episode has nothing to remember yet) it prints, per game and mode:

- deaths: episodes that ended in a death;
- scoring: episodes whose best score (report.json's `best_score`, else `score`) is above 0;
- mean score: the mean of those best scores;
- rep.fail: repeated-failure rate (actions repeating a known failure that failed again, over
  all actions of those episodes).

Then the acceptance verdicts, one line each:

- Zork I (the long run): deaths with memory at most the baseline's, scoring episodes at least
  the baseline's;
- every game (the short runs): no more deaths and no lower mean score than the baseline, and
  repeated failures below 5% and below the baseline's (both 0 passes);
- "N of M games meet every point" (Zork I's game counts its long run's points too).

And per game, why the memory runs died: each death's room and the game's last lines before it
(from the transcript), and the DANGER memories the run stored.

It asserts nothing and exits 0; `--strict` exits 1 when a point is missed. `--json PATH` writes
every figure. Runs go through a pool of `--workers` processes (default 2).

    .venv/bin/python bench/lessons_bench.py [--games zork1,905] [--episodes 5] [--turns 200]
        [--zork-episodes 20] [--zork-turns 300] [--seed 1] [--workers 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from learning_bench import ROMS, story_files  # noqa: E402  (puts the project root on the path)

from cairn import Memory  # noqa: E402
from cairn.models.memory import MemoryCategory  # noqa: E402
from cairn.play.runner import run_play  # noqa: E402
from cairn.settings import load_settings  # noqa: E402

ZORK = "zork1"
REPEATED_FAILURE_LIMIT = 0.05
FIRST_COUNTED_EPISODE = 2
CAUSE_CHARS = 110


@dataclass
class EpisodeFigures:
    """One episode of a run, as report.json gives it."""

    episode: int
    turns: int
    died: bool
    best_score: int | None
    actions: int
    repeated_failed_actions: int


@dataclass
class Death:
    """One death of a run: where, by which command, and the game's last words before it."""

    episode: int
    turn: int
    room: str
    action: str
    text: str
    turn_before: str = ""
    """The last line of the previous turn's reply."""


@dataclass
class RunFigures:
    """One game played in one mode for `episodes` x `turns`."""

    game: str
    memory: bool
    episodes_asked: int
    turns_asked: int
    long: bool = False
    """Zork I's long run (`--zork-episodes` x `--zork-turns`)."""
    episodes: list[EpisodeFigures] = field(default_factory=list)
    deaths: list[Death] = field(default_factory=list)
    dangers: list[str] = field(default_factory=list)
    """The DANGER memories the run left visible: title, then the text's start."""
    seconds: float = 0.0
    error: str = ""

    @property
    def mode(self) -> str:
        return "memory" if self.memory else "baseline"


@dataclass
class Window:
    """A run's figures over episodes 2 to the last."""

    episodes: int
    deaths: int
    scoring: int
    mean_score: float
    repeated_failure_rate: float


@dataclass
class Point:
    """One acceptance point: what it checks, whether it holds, and the figures."""

    name: str
    ok: bool
    detail: str


def window(run: RunFigures, first: int = FIRST_COUNTED_EPISODE) -> Window:
    """The run's figures over episodes `first`.. (all of them when it played fewer)."""
    counted = [e for e in run.episodes if e.episode >= first] or run.episodes
    scores = [e.best_score or 0 for e in counted]
    actions = sum(e.actions for e in counted)
    return Window(
        episodes=len(counted),
        deaths=sum(e.died for e in counted),
        scoring=sum(s > 0 for s in scores),
        mean_score=statistics.fmean(scores) if scores else 0.0,
        repeated_failure_rate=(
            sum(e.repeated_failed_actions for e in counted) / actions if actions else 0.0
        ),
    )


def zork_points(memory: Window, baseline: Window) -> list[Point]:
    """Zork I's long run: no more deaths, at least as many scoring episodes."""
    return [
        Point(
            "deaths",
            memory.deaths <= baseline.deaths,
            f"{memory.deaths} vs {baseline.deaths}",
        ),
        Point(
            "scoring episodes",
            memory.scoring >= baseline.scoring,
            f"{memory.scoring} vs {baseline.scoring}",
        ),
    ]


def game_points(memory: Window, baseline: Window) -> list[Point]:
    """Every game: no more deaths, no lower mean score, repeated failures below 5% and
    below the baseline's (a game at 0 in both passes)."""
    rep_mem, rep_base = memory.repeated_failure_rate, baseline.repeated_failure_rate
    below_baseline = rep_mem < rep_base or (rep_mem == 0 and rep_base == 0)
    return [
        Point(
            "deaths",
            memory.deaths <= baseline.deaths,
            f"{memory.deaths} vs {baseline.deaths}",
        ),
        Point(
            "mean score",
            memory.mean_score >= baseline.mean_score,
            f"{memory.mean_score:.1f} vs {baseline.mean_score:.1f}",
        ),
        Point(
            "rep.fail < 5%",
            rep_mem < REPEATED_FAILURE_LIMIT,
            f"{rep_mem:.1%}",
        ),
        Point(
            "rep.fail < baseline",
            below_baseline,
            f"{rep_mem:.1%} vs {rep_base:.1%}",
        ),
    ]


def verdict_line(label: str, points: list[Point]) -> str:
    """`label: ok` with every figure, or `label: MISS` naming the points missed first."""
    missed = [p for p in points if not p.ok]
    figures = "; ".join(f"{p.name} {p.detail}" for p in points)
    if not missed:
        return f"{label}: ok ({figures})"
    return f"{label}: MISS {', '.join(p.name for p in missed)} ({figures})"


def _lines(text: str) -> list[str]:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return [line for line in lines if line and not line.startswith(">")]


def _shortened(text: str) -> str:
    return text if len(text) <= CAUSE_CHARS else text[: CAUSE_CHARS - 3] + "..."


def last_lines(text: str, count: int = 3) -> str:
    """The last `count` non-empty lines of a reply, joined and shortened."""
    return _shortened(" ".join(_lines(text)[-count:]))


def death_text(response: str) -> str | None:
    """The game's last words before a death: up to three lines before the first `***`
    banner line, joined and shortened; None when the reply has no banner (some games print
    the death a turn before the score and the question that end it)."""
    lines = _lines(response)
    banner = next((i for i, line in enumerate(lines) if "***" in line), None)
    if banner is None:
        return None
    return _shortened(" ".join(lines[:banner][-3:]))


def transcript_deaths(transcript: Path) -> list[Death]:
    """Every turn of a run's transcript.jsonl that ended in a death, in the room it was
    played from (a game may move the dead player elsewhere), with the previous turn's last
    line (where a light went out or a timer ran)."""
    deaths = []
    names: dict[Any, str] = {}
    previous = ""
    for line in transcript.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("location_after_name"):
            names.setdefault(row.get("location_after"), str(row["location_after_name"]))
        response = str(row.get("response", ""))
        if row.get("died"):
            before = row.get("location_before")
            text = death_text(response)
            deaths.append(
                Death(
                    episode=int(row["episode"]),
                    turn=int(row["turn"]),
                    room=f"{names.get(before, '?')} (L{before})",
                    action=str(row.get("action", "")),
                    text=text if text is not None else f"(turn before) {last_lines(previous)}",
                    turn_before=last_lines(previous, 1),
                )
            )
        previous = response
    return deaths


def stored_dangers(workdir: Path) -> list[str]:
    """The visible DANGER memories of a run's store, newest first."""
    memory = Memory.open(workdir)
    try:
        entries = [e for e in memory.list() if e.category == MemoryCategory.DANGER]
    finally:
        memory.close()
    entries.sort(key=lambda e: ((e.episode or 0), (e.turn_end or e.turn_start or 0)), reverse=True)
    shown = []
    for e in entries:
        where = f" @L{e.location_id}" if e.location_id is not None else ""
        text = " ".join(e.text.split())
        shown.append(f"{e.title}{where}: {text[:CAUSE_CHARS]}")
    return shown


@dataclass(frozen=True)
class Job:
    """One run to play."""

    story: Path
    memory: bool
    episodes: int
    turns: int
    long: bool = False


def play_one(job: Job, seed: int) -> RunFigures:
    """Play one game in one mode in a fresh temporary workdir; its figures."""
    story, memory, episodes, turns = job.story, job.memory, job.episodes, job.turns
    run = RunFigures(
        game=story.stem,
        memory=memory,
        episodes_asked=episodes,
        turns_asked=turns,
        long=job.long,
    )
    start = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix=f"lessons-{story.stem}-") as tmp:
            workdir = Path(tmp)
            settings = load_settings(workdir=workdir, llm="offline")
            result = run_play(
                settings,
                game_path=story,
                episodes=episodes,
                max_turns=turns,
                use_memory=memory,
                seed=seed,
            )
            run.deaths = transcript_deaths(result.run_dir / "transcript.jsonl")
            if memory:
                run.dangers = stored_dangers(result.report_path.parent)
    except Exception as exc:  # a bench reports a broken run and goes on with the others
        run.error = f"{type(exc).__name__}: {exc}"
        run.seconds = time.perf_counter() - start
        return run
    for e in result.report["episodes"]:
        best = e.get("best_score")
        run.episodes.append(
            EpisodeFigures(
                episode=e["episode"],
                turns=e["turns"],
                died=bool(e["died"]),
                best_score=best if best is not None else e.get("score"),
                actions=e["actions"],
                repeated_failed_actions=e["repeated_failed_actions"],
            )
        )
    run.seconds = time.perf_counter() - start
    return run


def table(runs: list[RunFigures]) -> str:
    """One row per game and mode, memory first, figures over episodes 2 to the last."""
    head = ["game", "mode", "eps", "deaths", "scoring", "mean score", "rep.fail", "secs"]
    rows = [head]
    for r in sorted(runs, key=lambda r: (r.game, not r.memory)):
        if r.error:
            rows.append([r.game, r.mode, "error", r.error[:60], "", "", "", f"{r.seconds:.0f}"])
            continue
        w = window(r)
        rows.append(
            [
                r.game,
                r.mode,
                str(w.episodes),
                str(w.deaths),
                str(w.scoring),
                f"{w.mean_score:.1f}",
                f"{w.repeated_failure_rate:.1%}",
                f"{r.seconds:.0f}",
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i < 2 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    )


def death_causes(run: RunFigures, top: int = 3) -> list[tuple[str, str]]:
    """The most frequent deaths of a run from episode 2 on, by room and last words: (`Nx
    room: words`, the command and previous turn's last line of its first occurrence)."""
    counted = [d for d in run.deaths if d.episode >= FIRST_COUNTED_EPISODE] or run.deaths
    groups: dict[str, list[Death]] = {}
    for d in counted:
        groups.setdefault(f"{d.room}: {d.text}", []).append(d)
    ranked = sorted(groups.items(), key=lambda item: -len(item[1]))[:top]
    out = []
    for cause, deaths in ranked:
        first = deaths[0]
        context = f"'{first.action}' after: {first.turn_before}"
        out.append((f"{len(deaths)}x {cause}", context))
    return out


def pair_up(runs: list[RunFigures]) -> dict[str, dict[bool, RunFigures]]:
    """Runs by game, then by memory (True) or baseline (False)."""
    by_game: dict[str, dict[bool, RunFigures]] = {}
    for r in runs:
        by_game.setdefault(r.game, {})[r.memory] = r
    return by_game


def judged(
    pairs: dict[str, dict[bool, RunFigures]], judge: Callable[[Window, Window], list[Point]]
) -> dict[str, list[Point]]:
    """Each game's points by `judge(memory, baseline)`; a missing or broken run misses."""
    out = {}
    for game, modes in sorted(pairs.items()):
        mem, base = modes.get(True), modes.get(False)
        if mem is None or base is None or mem.error or base.error:
            broken = mem.error if mem and mem.error else base.error if base else "missing run"
            out[game] = [Point("run", False, broken or "missing run")]
            continue
        out[game] = judge(window(mem), window(base))
    return out


def summary(short: dict[str, list[Point]], long: dict[str, list[Point]]) -> tuple[int, int]:
    """(games meeting every point, games judged); a game with a long run needs its points
    too."""
    met = sum(
        all(p.ok for p in points) and all(p.ok for p in long.get(game, []))
        for game, points in short.items()
    )
    return met, len(short)


def run_jobs(jobs: list[Job], seed: int, workers: int) -> list[RunFigures]:
    """Every job played, the longest first (so the pool ends together)."""
    jobs = sorted(jobs, key=lambda j: -j.episodes * j.turns)
    runs: list[RunFigures] = []

    def done(run: RunFigures) -> None:
        runs.append(run)
        size = f"{run.episodes_asked}x{run.turns_asked}"
        print(f"  done {run.game} {size} {run.mode} ({run.seconds:.0f} s)", file=sys.stderr)

    if workers <= 1:
        for job in jobs:
            done(play_one(job, seed))
        return runs
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(play_one, job, seed) for job in jobs]
        for future in as_completed(futures):
            done(future.result())
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="", help="comma-separated story stems (default: all)")
    parser.add_argument("--episodes", type=int, default=5, help="episodes per game")
    parser.add_argument("--turns", type=int, default=200, help="turns per episode")
    parser.add_argument("--zork-episodes", type=int, default=20, help="Zork I's long run")
    parser.add_argument("--zork-turns", type=int, default=300, help="Zork I's long run")
    parser.add_argument("--seed", type=int, default=1, help="the player's seed")
    parser.add_argument("--workers", type=int, default=2, help="processes (1: no pool)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a point is missed")
    args = parser.parse_args()
    if not ROMS.is_dir():
        sys.exit(f"no story files: {ROMS} is absent")
    stories = story_files([g.strip() for g in args.games.split(",") if g.strip()])
    jobs = [Job(s, m, args.episodes, args.turns) for s in stories for m in (True, False)]
    jobs += [
        Job(s, m, args.zork_episodes, args.zork_turns, long=True)
        for s in stories
        if s.stem == ZORK and args.zork_episodes > 0
        for m in (True, False)
    ]
    start = time.perf_counter()
    runs = run_jobs(jobs, args.seed, args.workers)
    elapsed = time.perf_counter() - start
    short_runs = [r for r in runs if not r.long]
    long_runs = [r for r in runs if r.long]

    print(
        f"lessons bench: {len(stories)} games x {args.episodes} episodes x {args.turns} turns"
        f" and {ZORK} {args.zork_episodes} x {args.zork_turns}, memory vs baseline, offline,"
        f" seed {args.seed}; figures over episodes {FIRST_COUNTED_EPISODE} to the last"
    )
    print(table(short_runs))
    if long_runs:
        print(f"\n{ZORK} {args.zork_episodes} x {args.zork_turns}")
        print(table(long_runs))

    short = judged(pair_up(short_runs), game_points)
    long = judged(pair_up(long_runs), zork_points) if long_runs else {}
    print("\nverdicts")
    for game, points in long.items():
        print(verdict_line(f"{game} {args.zork_episodes}x{args.zork_turns}", points))
    for game, points in short.items():
        print(verdict_line(f"{game} {args.episodes}x{args.turns}", points))
    met, total = summary(short, long)
    print(f"{met} of {total} games meet every point")

    print("\nwhy memory runs died (episodes 2-), and the DANGER memories they kept")
    for run in sorted((r for r in runs if r.memory and not r.error), key=lambda r: r.game):
        causes = death_causes(run)
        if not causes and not run.dangers:
            continue
        print(f"{run.game} {run.episodes_asked}x{run.turns_asked}:")
        for cause, context in causes:
            print(f"  died  {cause}")
            print(f"          by {context}")
        for danger in run.dangers[:2]:
            print(f"  kept  {danger}")
        if len(run.dangers) > 2:
            print(f"  kept  (+{len(run.dangers) - 2} more DANGER memories)")
    print(f"\nwall time: {elapsed:.0f} s with {args.workers} worker(s)")

    if args.json is not None:
        dump = {
            "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "runs": [{**asdict(r), "window": asdict(window(r))} for r in runs if not r.error]
            + [asdict(r) for r in runs if r.error],
            "verdicts": {
                "long": {g: [asdict(p) for p in ps] for g, ps in long.items()},
                "short": {g: [asdict(p) for p in ps] for g, ps in short.items()},
                "met": met,
                "games": total,
            },
            "wall_seconds": round(elapsed, 1),
        }
        args.json.write_text(json.dumps(dump, indent=2) + "\n", encoding="utf-8")
    if args.strict and met < total:
        sys.exit(1)


if __name__ == "__main__":
    main()
