"""run_play: claim the workdir, build the container, play the episodes, write the run's files.

Every part of the run comes from the container's providers (the game opener, the map files,
the circuit breaker, the agent, the memory...): the runner builds none itself. It is the play
command's entry below the command line, so it may import the composition root (the one
exception the layer contracts allow the application layer: `[tool.importlinter]` in
pyproject.toml).

Files written into the workdir: the memory store, `map.json` and `map.mmd`, `knowledgebase.md`,
`report.json`, `report.html`, `runs/<id>/transcript.jsonl` and (with an LLM) `llm.jsonl`. The
workdir is claimed first (`cairn.workdir`): new, empty, or cairn's own of the same game; then
its run lock is taken for the play's length (`cairn.adapters.run_lock`): a second play in the
folder refuses. Each run has its own id and folder (`new_run_folder`). A start that fails (a
file that is no story file, an unknown `--llm`) leaves no folder it made (`held_for_play`).
"""

from __future__ import annotations

import gc
import itertools
import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn.adapters.files import atomic_write_text, ensure_folder, remove_stale_temps
from cairn.adapters.game.story_file import check_story_file
from cairn.errors import ModelNotAnsweringError, StoreError
from cairn.interfaces.agent import IAgent
from cairn.interfaces.game import GameObservation, IGame
from cairn.interfaces.metrics import CircuitReader, SummarizerCounts
from cairn.models.episode import EpisodeStats
from cairn.play.episode_numbers import next_episode
from cairn.play.metrics import totals
from cairn.play.model_watch import ModelWatch
from cairn.play.session import PlayOptions, PlaySession, transcript_path
from cairn.settings import CairnSettings
from cairn.workdir import (
    GameIdentity,
    claim_workdir,
    demo_identity,
    game_workdir,
    held_for_play,
    named_identity,
    story_identity,
)

TurnCallback = Callable[[int, int, GameObservation], None]


log = logging.getLogger(__name__)


@dataclass
class PlayResult:
    """The report written to report.json and where the run's files are."""

    report: dict[str, Any]
    report_path: Path
    run_dir: Path
    html_path: Path | None = None


def game_identity(
    settings: CairnSettings, game_path: Path | None, game: IGame | None = None
) -> GameIdentity:
    """Which game a run plays: the story file (its stem and hash), else a given game (its
    name), else the demo world (its seed). It names the workdir's game and the memory space."""
    if game_path is not None:
        return story_identity(game_path)
    if game is not None:
        return named_identity(game.name)
    return demo_identity(settings.demo_seed)


def play_identity(
    settings: CairnSettings, game_path: Path | None, game: IGame | None = None
) -> GameIdentity:
    """`game_identity` of a game about to be played: a story file is checked first
    (GameError), so a file that is no story file names no game and makes no folder."""
    if game is None and game_path is not None:
        check_story_file(game_path)
    return game_identity(settings, game_path, game)


def default_space(settings: CairnSettings, game_path: Path | None, game: IGame | None) -> str:
    """The memory space of a game (the postgres store's default): the story file's stem and
    hash, a given game's name, or the demo world and its seed."""
    return game_identity(settings, game_path, game).key


def run_play(
    settings: CairnSettings,
    *,
    game_path: Path | None = None,
    episodes: int | None = None,
    max_turns: int | None = None,
    use_memory: bool = True,
    seed: int = 0,
    on_turn: TurnCallback | None = None,
    game: IGame | None = None,
    agent: IAgent | None = None,
) -> PlayResult:
    """Play `episodes` episodes and write the run's files; return the report. WorkdirError
    when the workdir is not this game's, or another play is running in it.

    Episode numbers go on from those the store holds (`next_episode`). With a model, the run
    stops after the turn its circuit opened unless `llm_fallback` is "offline"; a run that
    stopped so, or whose model never gave a usable answer, raises ModelNotAnsweringError
    after its files are written (one line naming the server; the report is its `result`)."""
    # every part of the run comes from the composition root; the run's own choices (memory
    # or the baseline, the player's seed) are settings, so its Selectors see them
    identity = play_identity(settings, game_path, game)
    space = settings.memory_space or identity.key
    settings = game_workdir(settings, identity).model_copy(
        update={"use_memory": use_memory, "play_seed": seed, "memory_space": space}
    )
    folder = settings.workdir
    # claimed before anything is written; one play at a time in it; none left by a failed start
    with held_for_play(folder, lambda: claim_workdir(folder, identity, settings)):
        remove_stale_temps(folder)  # a killed run's half-written report.json, map.json, ...
        from cairn.container import build_container

        workdir = folder
        container = build_container(settings)
        game = game or container.game_opener().open(game_path)
        memory = container.memory_service()
        counts: SummarizerCounts = memory
        map_graph = container.map_graph()
        map_files = container.map_files()
        player = agent or container.agent()  # (its LLM client too) before the run's folder is made
        watch = model_watch(container, settings.llm_fallback)
        run_id, run_folder = new_run_folder(workdir, seed)
        transcript_file = transcript_path(workdir, run_id)
        options = PlayOptions(
            episodes=episodes or settings.play_episodes,
            max_turns=max_turns or settings.play_max_turns,
            use_memory=use_memory,
            objective_every=settings.objective_every,
        )
        # what exists now (the store's memories and indexes, the game, the map) lives for the
        # whole run: out of the cyclic collector's sight, full collections stop scanning it again
        # (at 10,000 memories they took a fifth of a run); back in its care when the run ends
        gc.freeze()
        store = container.store()
        try:
            stats: list[EpisodeStats] = []
            stop = _StopOnInterrupt()
            try:
                with stop, transcript_file.open("x", encoding="utf-8") as transcript:
                    session = PlaySession(
                        game=game,
                        agent=player,
                        bus=container.bus(),
                        memory=memory,
                        context=container.run_context(),
                        map_graph=map_graph,
                        objectives=container.objective_tracker(),
                        knowledge=container.knowledge_base(),
                        options=options,
                        meter=container.usage_meter(),
                        transcript=transcript,
                        summarizer_counts=lambda: dict(counts.summarizer_calls),
                        episode_map=container.episode_map(),
                        on_turn=on_turn,
                        should_stop=lambda: stop.requested() or watch.must_stop(),
                        claims=container.claim_tests(),
                    )
                    first = next_episode(store)  # numbers go on from the runs before
                    try:
                        for number in range(first, first + options.episodes):
                            container.usage_meter().start_episode(number)
                            stats.append(session.play_episode(number))
                            map_files.save(map_graph)
                            if stop.requested() or watch.stopped:
                                break
                    except KeyboardInterrupt:
                        # a second Ctrl-C: the episode in play stops where it stood (its last unit
                        # of work committed or rolled back whole); the episodes before it, the map
                        # and the memories are written as after the first
                        stop.abort()
                        map_files.save(map_graph)
                remembered = {loc for loc in session.visited_ids if memory.location_memories(loc)}
            finally:
                game.close()
            report = {
                "game": game.name,
                "fully_supported": game.fully_supported,
                "llm": settings.llm,
                "store": settings.store,
                "memory": use_memory,
                "seed": seed,
                "run_id": run_id,
                "interrupted": stop.requested(),
                "episodes": [
                    {**e.model_dump(), **container.usage_meter().episode_cost(e.episode)}
                    for e in stats
                ],
                "total": totals(stats, session.visited_ids, remembered),
                "llm_usage": {
                    **container.usage_meter().snapshot(),
                    "circuit": _circuit(container.circuit_breaker(), container.summarizer()),
                },
                "summary_failures": counts.summary_failures,
                "query_tool_failures": container.memory_query_tools().failures,
            }
            last = stats[-1] if stats else None
            failure = watch.failure(*((last.episode, last.turns) if last else ()))
            if failure is not None:
                report["model_failure"] = failure
            report_path = workdir / settings.report_file
            from cairn.report.json_text import report_json
            from cairn.report.writer import write_report

            atomic_write_text(report_path, report_json(report))

            # from the run's store, still open: it has read its memories already
            html_path = write_report(settings, store=store)
            result = PlayResult(
                report=report,
                report_path=report_path,
                run_dir=run_folder,
                html_path=html_path,
            )
            if failure is not None:  # the files are written: the run fails after them
                error = ModelNotAnsweringError(failure)
                error.result = result
                raise error
            return result
        finally:
            store.close()
            gc.unfreeze()


def new_run_folder(workdir: Path, seed: int) -> tuple[str, Path]:
    """A run id and its folder `runs/<id>`, made here and no one else's: the start time and
    the seed (`20261128-123508-s0`), numbered (`-2`, `-3`...) when a run of the same second
    and seed has that folder already."""
    base = time.strftime("%Y%m%d-%H%M%S") + f"-s{seed}"
    runs = ensure_folder(workdir / "runs")
    for number in itertools.count(1):
        run_id = base if number == 1 else f"{base}-{number}"
        try:
            (runs / run_id).mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise StoreError(f"{runs / run_id}: cannot create: {exc.strerror or exc}") from exc
        return run_id, runs / run_id
    raise AssertionError("unreachable")  # pragma: no cover


def model_watch(container: Any, fallback: str) -> ModelWatch:
    """The watch over the run's model (`ModelWatch`), from the container's client, meter and
    circuit breaker; offline, one that never stops the run or fails it."""
    client = container.llm_client()
    meter = container.usage_meter()
    breaker = container.circuit_breaker()
    return ModelWatch(
        server=client.server() if client is not None else "(offline)",
        calls=lambda: int(meter.snapshot()["calls"]) if client is not None else 0,
        failures=lambda: int(meter.snapshot()["failures"]),
        circuit_opened=lambda: breaker.opened if breaker is not None else 0,
        last_failure=lambda: breaker.last_failure if breaker is not None else None,
        fallback=fallback,
    )


class _StopOnInterrupt:
    """While active (main thread only), the first Ctrl-C asks the run to stop after the current
    turn: the episode ends cleanly and the map, knowledge base and report are written. A second
    Ctrl-C raises KeyboardInterrupt in the turn, as usual; `run_play` then stops at once and
    still writes the report of the episodes before it (the CLI exits 130 either way)."""

    def __init__(self) -> None:
        self._stop = False
        self._previous: Any = None

    def requested(self) -> bool:
        return self._stop

    def abort(self) -> None:
        """The second Ctrl-C came: the run stops now."""
        self._stop = True

    def _handle(self, signum: int, frame: Any) -> None:
        self._stop = True
        signal.signal(signal.SIGINT, self._previous)  # a second Ctrl-C is the usual one
        log.warning("interrupted: ending after this turn (Ctrl-C again to stop at once)")

    def __enter__(self) -> _StopOnInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None


def episode_table(report: dict[str, Any]) -> str:
    """The per-episode table printed at the end of `cairn play`; with a model, a `stand-in`
    column counts the turns the offline stand-in played because the model could not."""
    with_model = report.get("llm", "offline") != "offline"
    head = (
        "ep",
        "turns",
        "score",
        "best",
        "won",
        "died",
        "visited",
        "coverage",
        "rep.fail",
        "retried",
        "summ/turn",
        "1st score",
        "ctx p50",
        "loc.mem max",
        *(("stand-in",) if with_model else ()),
    )
    rows = [head]
    for e in report["episodes"]:
        score = "?" if e["score"] is None else str(e["score"])
        if e["max_score"] is not None:
            score += f"/{e['max_score']}"
        rows.append(
            (
                str(e["episode"]),
                str(e["turns"]),
                score,
                _best(e),
                "yes" if e["won"] else "no",
                "yes" if e["died"] else "no",
                str(e["locations_visited"]),
                f"{e['coverage']:.0%}",
                f"{e['repeated_failed_action_rate']:.1%}",
                f"{e['retried_failed_action_rate']:.1%}",
                f"{e['summarizer_call_rate']:.2f}",
                "-" if e["turns_to_first_score"] is None else str(e["turns_to_first_score"]),
                str(e["context_tokens_p50"]),
                str(e["location_memory_tokens_max"]),
                *((str(e.get("stand_in_turns", 0)),) if with_model else ()),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join(
        "  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)) for r in rows
    )


def _best(episode: dict[str, Any]) -> str:
    """The table's best score: the highest the episode reached ("-" when the game cannot tell;
    a report.json from before the field has only the final score)."""
    best = episode.get("best_score", episode["score"])
    return "-" if best is None else str(best)


def _circuit(breaker: CircuitReader | None, summarizer: object) -> dict[str, object] | None:
    """The LLM circuit breaker's state for the report, with the summaries the offline
    heuristics wrote while it was open (None offline and on a replay: no breaker)."""
    if breaker is None:
        return None
    stand_in = getattr(summarizer, "stand_in_calls", {})
    return {**breaker.snapshot(), "stand_in_summaries": dict(stand_in)}
