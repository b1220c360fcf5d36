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
- "N of M shared games meet every point" (Zork I's game counts its long run's points too),
  then "; K of L games nobody tuned for" (below).

Games nobody tuned for: `--textworld N` (default 12) TextWorld games generated offline by
tw-make (bench/textworld_games.py: custom worlds, a treasure hunt, a cooking game, a coin
collector, the simple house; 5-12 rooms, doors and containers that start closed or locked; the
games and their tw-make `--seed`s are drawn from `--textworld-seed`, so the same seed gives the
same games), cached in `$CAIRN_CACHE_DIR/lessons-games/` (else ~/.cache/cairn/lessons-games/)
and reused. They are played the same way (`--episodes` x `--turns`, both modes) and printed as
their own block with their own verdicts and count, and a room check: the ids and names the runs
saw against the rooms the generator made (one id under two names: rooms collapsed; one name
under two ids: a room split; a name that is no room's: unnamed or misnamed). Without TextWorld
the block says so and the shared games still run. `--textworld 0` leaves them out.

And per game, why the memory runs died: each death's room and the game's last lines before it
(from the transcript), and the DANGER memories the run stored.

It asserts nothing and exits 0; `--strict` exits 1 when a point is missed. `--json PATH` writes
every figure. Runs go through a pool of `--workers` processes (default 2).

    .venv/bin/python bench/lessons_bench.py [--games zork1,905] [--episodes 5] [--turns 200]
        [--zork-episodes 20] [--zork-turns 300] [--seed 1] [--workers 2] [--json out.json]
        [--textworld 12] [--textworld-seed 1]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import textworld_games  # noqa: E402
from learning_bench import ROMS, story_files  # noqa: E402  (puts the project root on the path)

from cairn import Memory  # noqa: E402
from cairn.models.memory import MemoryCategory  # noqa: E402
from cairn.play.runner import run_play  # noqa: E402
from cairn.settings import load_settings  # noqa: E402

ZORK = "zork1"
REPEATED_FAILURE_LIMIT = 0.05
FIRST_COUNTED_EPISODE = 2
CAUSE_CHARS = 110
SHARED = "shared"
UNTUNED = "textworld"
"""Run groups: the shared story files, and the TextWorld games nobody tuned for."""


@dataclass
class EpisodeFigures:
    """One episode of a run, as report.json gives it."""

    episode: int
    turns: int
    died: bool
    best_score: int | None
    actions: int
    repeated_failed_actions: int
    rooms: int = 0
    """Distinct rooms the episode entered alive (report.json's `locations_visited`: a room a
    death put the player in counts only once the player is alive there)."""


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
    group: str = SHARED
    rooms_seen: dict[str, list[str]] = field(default_factory=dict)
    """Every room id the run's transcript entered, with the names it was given there."""

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
    mean_rooms: float = 0.0


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
        mean_rooms=statistics.fmean(e.rooms for e in counted) if counted else 0.0,
    )


def progress(runs: list[RunFigures]) -> tuple[list[str], list[str]]:
    """(games where memory scores more or reaches more rooms than the baseline over episodes
    2-, each with its figures; the others, with theirs): progress, not only fewer repeats."""
    ahead: list[str] = []
    behind: list[str] = []
    for game, pair in sorted(pair_up(runs).items()):
        if True not in pair or False not in pair or pair[True].error or pair[False].error:
            continue
        mem, base = window(pair[True]), window(pair[False])
        figures = (
            f"{game} (score {mem.mean_score:.1f} vs {base.mean_score:.1f},"
            f" rooms {mem.mean_rooms:.1f} vs {base.mean_rooms:.1f})"
        )
        further = mem.mean_score > base.mean_score or mem.mean_rooms > base.mean_rooms
        (ahead if further else behind).append(figures)
    return ahead, behind


def print_progress(label: str, runs: list[RunFigures]) -> None:
    ahead, behind = progress(runs)
    total = len(ahead) + len(behind)
    print(
        f"\nprogress ({label}): memory scores more or reaches more rooms than the baseline"
        f" (means over episodes {FIRST_COUNTED_EPISODE}-) on {len(ahead)} of {total} games"
    )
    for line in ahead:
        print(f"  ahead   {line}")
    for line in behind:
        print(f"  not     {line}")


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


def rooms_seen(transcript: Path) -> dict[str, list[str]]:
    """Every room id a run's transcript.jsonl entered (`location_after`), with the names it
    was given there, in the order first seen (`""` for a turn that named none)."""
    seen: dict[str, list[str]] = {}
    for line in transcript.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        names = seen.setdefault(str(row.get("location_after")), [])
        name = str(row.get("location_after_name") or "")
        if name not in names:
            names.append(name)
    return seen


def _room_key(name: str) -> str:
    return " ".join(name.split()).casefold()


def room_problems(seen: dict[str, list[str]], rooms: Iterable[str]) -> list[str]:
    """What is wrong with the rooms runs saw (`rooms_seen`, merged), against the names of
    the rooms the game has: an id under two names (rooms collapsed into one), a name under
    two ids (a room split), an id with no name or a name that is no room's (unnamed or
    misnamed), a turn in no room. Names compare without case or extra spaces."""
    known = {_room_key(r) for r in rooms}
    problems = []
    ids_of: dict[str, list[str]] = {}
    for room_id, names in seen.items():
        where = f"L{room_id}"
        if room_id == "None":
            problems.append(f"no room id after some turns (named {names})")
            continue
        named = [n for n in names if n]
        if len(names) > len(named):
            problems.append(f"{where} unnamed on some turns")
        if len({_room_key(n) for n in named}) > 1:
            problems.append(f"{where} named {' and '.join(map(repr, named))}: rooms collapsed")
        for name in named:
            if _room_key(name) not in known:
                problems.append(f"{where} named {name!r}: no room of the game has that name")
            ids = ids_of.setdefault(_room_key(name), [])
            if where not in ids:
                ids.append(where)
    for name, ids in ids_of.items():
        if len(ids) > 1:
            problems.append(f"{name!r} under {len(ids)} ids ({', '.join(ids)}): a room split")
    return problems


def merged_rooms(runs: Iterable[RunFigures]) -> dict[str, list[str]]:
    """The rooms several runs of one game saw, names merged per id."""
    merged: dict[str, list[str]] = {}
    for run in runs:
        for room_id, names in run.rooms_seen.items():
            kept = merged.setdefault(room_id, [])
            kept.extend(n for n in names if n not in kept)
    return merged


@dataclass(frozen=True)
class Job:
    """One run to play."""

    story: Path
    memory: bool
    episodes: int
    turns: int
    long: bool = False
    name: str = ""
    """The game's name in the tables (the story file's stem when empty)."""
    group: str = SHARED


def play_one(job: Job, seed: int) -> RunFigures:
    """Play one game in one mode in a fresh temporary workdir; its figures."""
    story, memory, episodes, turns = job.story, job.memory, job.episodes, job.turns
    run = RunFigures(
        game=job.name or story.stem,
        memory=memory,
        episodes_asked=episodes,
        turns_asked=turns,
        long=job.long,
        group=job.group,
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
            run.rooms_seen = rooms_seen(result.run_dir / "transcript.jsonl")
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
                rooms=int(e.get("locations_visited") or 0),
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


@dataclass
class Untuned:
    """The TextWorld games made for this run, or why there are none."""

    games: list[tuple[textworld_games.GameSpec, Path, textworld_games.GameTruth]] = field(
        default_factory=list
    )
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def untuned_games(count: int, seed: int) -> Untuned:
    """`count` TextWorld games from `seed`, generated into the cache or found there."""
    made = Untuned()
    if count <= 0:
        return made
    reason = textworld_games.missing()
    if reason is not None:
        made.notes.append(f"skipped: {reason}")
        return made
    start = time.perf_counter()
    folder = textworld_games.cache_folder()
    for game in textworld_games.specs(count, seed):
        try:
            story = textworld_games.generate(game, folder)
            made.games.append((game, story, textworld_games.truth(story)))
        except Exception as exc:  # one game that cannot be made is a note; the rest play
            made.notes.append(f"{game.label}: not generated: {type(exc).__name__}: {exc}")
    made.seconds = time.perf_counter() - start
    return made


def print_verdicts(
    short: dict[str, list[Point]],
    long: dict[str, list[Point]],
    size: str,
    long_size: str,
) -> None:
    for game, points in long.items():
        print(verdict_line(f"{game} {long_size}", points))
    for game, points in short.items():
        print(verdict_line(f"{game} {size}", points))


def print_untuned(
    untuned: Untuned, runs: list[RunFigures], verdicts: dict[str, list[Point]], args: Any
) -> None:
    """The block of games nobody tuned for: what each game holds, the table, verdicts and
    the room check."""
    print(
        f"\ngames nobody tuned for: {len(untuned.games)} TextWorld games generated offline"
        f" (--textworld-seed {args.textworld_seed}), {args.episodes} x {args.turns},"
        f" memory vs baseline"
    )
    for note in untuned.notes:
        print(f"  {note}")
    if not untuned.games:
        return
    print(f"  story files in {untuned.games[0][1].parent}")
    for game, _, truth in untuned.games:
        print(f"  {game.label}: {truth.describe()}")
        print(f"      tw-make {' '.join(game.args)}")
    print(table(runs))
    print("\nverdicts (games nobody tuned for)")
    print_verdicts(verdicts, {}, f"{args.episodes}x{args.turns}", "")
    print("\nrooms (both runs of each game against the rooms the generator made)")
    by_game = pair_up(runs)
    for game, _, truth in untuned.games:
        played = [r for r in by_game.get(game.label, {}).values() if not r.error]
        if not played:
            print(f"{game.label}: not played")
            continue
        seen = merged_rooms(played)
        problems = room_problems(seen, truth.rooms)
        visited = len([k for k in seen if k != "None"])
        head = f"{game.label}: {visited} of {len(truth.rooms)} rooms entered"
        if not problems:
            print(f"{head}, each under one id and its own name")
            continue
        print(f"{head}; PROBLEM:")
        for problem in problems:
            print(f"  {problem}")


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
    parser.add_argument(
        "--textworld", type=int, default=12, help="TextWorld games nobody tuned for (0: none)"
    )
    parser.add_argument(
        "--textworld-seed", type=int, default=1, help="picks the TextWorld games and their seeds"
    )
    args = parser.parse_args()
    if not ROMS.is_dir():
        sys.exit(f"no story files: {ROMS} is absent")
    start = time.perf_counter()
    stories = story_files([g.strip() for g in args.games.split(",") if g.strip()])
    jobs = [Job(s, m, args.episodes, args.turns) for s in stories for m in (True, False)]
    jobs += [
        Job(s, m, args.zork_episodes, args.zork_turns, long=True)
        for s in stories
        if s.stem == ZORK and args.zork_episodes > 0
        for m in (True, False)
    ]
    untuned = untuned_games(args.textworld, args.textworld_seed)
    jobs += [
        Job(story, m, args.episodes, args.turns, name=game.label, group=UNTUNED)
        for game, story, _ in untuned.games
        for m in (True, False)
    ]
    runs = run_jobs(jobs, args.seed, args.workers)
    elapsed = time.perf_counter() - start
    short_runs = [r for r in runs if not r.long and r.group == SHARED]
    long_runs = [r for r in runs if r.long]
    untuned_runs = [r for r in runs if r.group == UNTUNED]

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
    untuned_verdicts = judged(pair_up(untuned_runs), game_points)
    size = f"{args.episodes}x{args.turns}"
    print("\nverdicts")
    print_verdicts(short, long, size, f"{args.zork_episodes}x{args.zork_turns}")
    if args.textworld > 0:
        print_untuned(untuned, untuned_runs, untuned_verdicts, args)

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

    print_progress("shared games", short_runs)
    if args.textworld > 0:
        print_progress("games nobody tuned for", untuned_runs)

    met, total = summary(short, long)
    untuned_met, untuned_total = summary(untuned_verdicts, {})
    line = f"\n{met} of {total} shared games meet every point"
    if args.textworld > 0:
        line += f"; {untuned_met} of {untuned_total} games nobody tuned for"
        if untuned.notes and not untuned.games:
            line += f" ({untuned.notes[0]})"
    print(line)
    print(
        f"wall time: {elapsed:.0f} s with {args.workers} worker(s)"
        + (
            f" (generating or finding the TextWorld games: {untuned.seconds:.0f} s)"
            if untuned.games
            else ""
        )
    )

    if args.json is not None:
        dump = {
            "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "runs": [{**asdict(r), "window": asdict(window(r))} for r in runs if not r.error]
            + [asdict(r) for r in runs if r.error],
            "textworld_games": [
                {"label": g.label, "tw_make": list(g.args), "story": str(p), **asdict(t)}
                for g, p, t in untuned.games
            ],
            "textworld_notes": untuned.notes,
            "verdicts": {
                "long": {g: [asdict(p) for p in ps] for g, ps in long.items()},
                "short": {g: [asdict(p) for p in ps] for g, ps in short.items()},
                "untuned": {g: [asdict(p) for p in ps] for g, ps in untuned_verdicts.items()},
                "met": met,
                "games": total,
                "untuned_met": untuned_met,
                "untuned_games": untuned_total,
            },
            "wall_seconds": round(elapsed, 1),
        }
        args.json.write_text(json.dumps(dump, indent=2) + "\n", encoding="utf-8")
    if args.strict and (met < total or untuned_met < untuned_total):
        sys.exit(1)


if __name__ == "__main__":
    main()
