"""The `cairn` command line (also `python -m cairn`)."""

from __future__ import annotations

import gc
import importlib
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cairn import defaults
from cairn.cli_memories import memories
from cairn.cli_options import (
    format_entry,
    play_workdir_option,
    settings_for,
    space_option,
    store_option,
    workdir_option,
)
from cairn.cli_report import compare, report
from cairn.errors import CairnError, MapFileError, ModelNotAnsweringError
from cairn.play.legend import TABLE_LEGEND

if TYPE_CHECKING:
    from cairn.interfaces.agent import IAgent
    from cairn.settings import CairnSettings


def _log_level(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """-v / -q, before or after the subcommand: the last one given wins."""
    if not value or ctx.resilient_parsing:
        return
    level = logging.INFO if param.name == "verbose" else logging.ERROR
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", force=True)


_VERBOSITY = (
    click.Option(
        ["-v", "--verbose"],
        is_flag=True,
        expose_value=False,
        callback=_log_level,
        help="Log at INFO level.",
    ),
    click.Option(
        ["-q", "--quiet"],
        is_flag=True,
        expose_value=False,
        callback=_log_level,
        help="Log errors only.",
    ),
)


def _with_verbosity(command: click.Command) -> None:
    """Give `command` and every command under it the -v/-q options."""
    command.params.extend(_VERBOSITY)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _with_verbosity(sub)


class _LazyGroup(click.Group):
    """A group some of whose commands are imported only when one of them is run or listed
    (`--help`): `cairn memories show` does not import `cairn replay`'s modules."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})
        """Command name -> "module:attribute" of the command."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        home = self.lazy.pop(cmd_name, None)
        if home is not None:
            module, attribute = home.split(":")
            command = getattr(importlib.import_module(module), attribute)
            _with_verbosity(command)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(
    cls=_LazyGroup,
    lazy={"replay": "cairn.replay.cli:replay"},
    context_settings={"show_default": True},
)
@click.version_option(package_name="cairn", prog_name="cairn")
def main() -> None:
    """cairn: location-keyed memory for LLM game agents and narrative engines."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")


DEMO_WORKDIR = Path(defaults.WORKDIR) / "narrative-demo"


@main.command("demo")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for the demo's memories: new, empty, or the demo's own"
    f" (default: {DEMO_WORKDIR}).",
)
@store_option
def demo(workdir: Path | None, store: str | None) -> None:
    """Replay the built-in narrative session; print the memories and the narrative prompt.

    Each run starts from the demo's own fresh state and shows the same: memories already the
    demo's are left as they are, anything else in the store is first set aside into
    WORKDIR/backups/DATE-TIME/."""
    from cairn.runtime.demo import play_demo

    settings = settings_for(workdir or DEMO_WORKDIR, store)
    if settings.store != "postgres":  # the postgres store writes nothing into the workdir
        from cairn.workdir import NARRATIVE_DEMO, claim_workdir

        claim_workdir(settings.workdir, NARRATIVE_DEMO, settings)
    result = play_demo(settings)
    if result.set_aside is not None:
        click.echo(f"demo: the store's previous memories are in {result.set_aside}", err=True)
    gs, prompt = result.state, result.prompt
    click.echo(f"# Memories written to {result.store_path}\n")
    for e in result.memories:
        click.echo(f"({e.place}) {format_entry(e)}")
    click.echo("\n# Narrative prompt\n")
    click.echo(prompt.text)
    click.echo(
        f"\n({prompt.total_tokens} tokens estimated; dropped: {prompt.dropped or 'nothing'})"
    )
    s = gs.scenario
    click.echo(
        f"cursors: world={s.last_world_message_index} "
        f"locations={s.last_location_message_index} npcs={s.last_npc_message_index}"
    )


def run() -> None:
    """Entry point that turns CairnError into a one-line message and exit code 2."""
    try:
        main(standalone_mode=True)
    except CairnError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    finally:
        # The process ends next. Its last garbage collection would walk every object the
        # command made (~25 ms of `memories show` on 3,000 memories) and find nothing to do:
        # each command closes what it opened (stores, locks, files) itself, and exit handlers
        # still run. Frozen objects are left out of that collection.
        gc.freeze()


@main.command("play", epilog="The table printed at the end: " + TABLE_LEGEND)
@click.option(
    "--game",
    "game_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A Z-machine story file (default: the built-in demo world).",
)
@click.option(
    "--episodes",
    type=click.IntRange(min=1),
    default=None,
    help=f"Episodes to play (default: play_episodes, {defaults.PLAY_EPISODES}).",
)
@click.option(
    "--max-turns",
    type=click.IntRange(min=1),
    default=None,
    help=f"Turns per episode (default: play_max_turns, {defaults.PLAY_MAX_TURNS}).",
)
@click.option(
    "--llm",
    default=None,
    help="offline (default), anthropic (needs ANTHROPIC_API_KEY), openai (OPENAI_API_KEY, or"
    " OPENAI_BASE_URL for a local server), cassette:PATH or record:PATH.",
)
@click.option(
    "--llm-fallback",
    type=click.Choice(["none", "offline"]),
    default=None,
    help="When the model stops answering (its circuit opens): none (default, the llm_fallback"
    " setting) stops the run there with exit 2; offline lets the offline player play on. A"
    " model that never answered fails the run either way.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Agent and game seed.")
@click.option(
    "--no-memory", is_flag=True, help="Baseline: leave memory out of the agent's context."
)
@click.option(
    "--fresh",
    is_flag=True,
    help="Start from no memories: the workdir's store, map, knowledge base and report move"
    " into WORKDIR/backups/DATE-TIME/ first.",
)
@click.option(
    "--agent",
    "agent_spec",
    default=None,
    metavar="MODULE:CLASS",
    help="Play with your own agent: a class with decide(view) (default: the built-in agent).",
)
@play_workdir_option
@store_option
@space_option
def play(
    game_path: Path | None,
    episodes: int | None,
    max_turns: int | None,
    llm: str | None,
    llm_fallback: str | None,
    seed: int,
    no_memory: bool,
    fresh: bool,
    agent_spec: str | None,
    workdir: Path | None,
    store: str | None,
    space: str | None,
) -> None:
    """Play episodes of a game with memory; write report.json, the store, map and transcript."""

    from cairn.settings import load_settings

    settings = load_settings(
        workdir=workdir, store=store, llm=llm, memory_space=space, llm_fallback=llm_fallback
    )
    _play(settings, game_path, episodes, max_turns, seed, no_memory, fresh, agent_spec)


def _play(
    settings: CairnSettings,
    game_path: Path | None,
    episodes: int | None,
    max_turns: int | None,
    seed: int,
    no_memory: bool,
    fresh: bool,
    agent_spec: str | None = None,
) -> None:
    from cairn.adapters.files import ensure_folder
    from cairn.play.agent_loader import load_agent
    from cairn.play.fresh import set_aside_run_files
    from cairn.play.runner import play_identity
    from cairn.workdir import (
        check_ours,
        claim_workdir,
        game_workdir,
        held_for_play,
        mark_workdir,
    )

    agent = load_agent(agent_spec) if agent_spec else None
    if fresh and settings.store == "postgres":
        raise click.UsageError(
            "--fresh cannot set aside a postgres memory space (other agents may share it);"
            " give --space a new name to start from no memories"
        )
    identity = play_identity(settings, game_path)
    settings = game_workdir(settings, identity)  # the default: one folder per game
    folder = settings.workdir

    def claim() -> None:  # refused before the progress bar starts (run_play claims it too)
        if fresh:  # a folder cairn did not make is refused before anything moves
            check_ours(folder, settings)
            ensure_folder(folder)
        else:
            claim_workdir(folder, identity, settings)

    # nothing moves while another play runs here; a start that fails leaves no folder
    with held_for_play(folder, claim):
        if fresh:
            aside = set_aside_run_files(settings)
            mark_workdir(settings.workdir, identity)  # run_play then finds its game's folder
            if aside is not None:
                click.echo(f"--fresh: the previous run's files are in {aside}", err=True)
        _play_with_progress(settings, game_path, episodes, max_turns, seed, no_memory, agent)


def _play_with_progress(
    settings: CairnSettings,
    game_path: Path | None,
    episodes: int | None,
    max_turns: int | None,
    seed: int,
    no_memory: bool,
    agent: IAgent | None,
) -> None:
    """Run the play behind a progress bar, then print its table."""
    from cairn.play.runner import episode_table, run_play

    total = (episodes or settings.play_episodes) * (max_turns or settings.play_max_turns)
    with click.progressbar(
        length=total, label="playing", item_show_func=lambda s: s, file=sys.stderr
    ) as bar:
        state = {"last": 0}

        def on_turn(episode: int, turn: int, obs: Any) -> None:
            limit = max_turns or settings.play_max_turns
            first = state.setdefault("first", episode)  # numbers go on from earlier runs
            done = (episode - first) * limit + (limit if obs.done else turn)
            score = "?" if obs.score is None else obs.score
            where = obs.location_name or obs.location_id
            bar.current_item = f"ep {episode} turn {turn} score {score} at {where}"
            bar.update(done - state["last"])
            state["last"] = done

        failure: ModelNotAnsweringError | None = None
        try:
            result = run_play(
                settings,
                game_path=game_path,
                episodes=episodes,
                max_turns=max_turns,
                use_memory=not no_memory,
                seed=seed,
                on_turn=on_turn,
                agent=agent,
            )
        except KeyboardInterrupt:  # a third Ctrl-C, while the run's files were being written
            click.echo("\ninterrupted: stopped at once; the memories stored are kept", err=True)
            sys.exit(130)
        except ModelNotAnsweringError as exc:  # the run's files are written: show them first
            failure, result = exc, exc.result
    report = result.report
    click.echo(
        f"{report['game']} ({'memory' if report['memory'] else 'no memory'}), llm {report['llm']}"
    )
    click.echo(episode_table(report))
    click.echo(TABLE_LEGEND)
    click.echo(f"report: {result.report_path}  transcript: {result.run_dir / 'transcript.jsonl'}")
    click.echo(f"html report: {result.html_path}")
    if report.get("interrupted"):
        click.echo("interrupted: the run ended early (Ctrl-C); everything above is saved", err=True)
        sys.exit(130)
    if failure is not None:
        click.echo(f"error: {failure}", err=True)
        sys.exit(2)


@main.command("map")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["mermaid", "dot", "svg"]),
    default="mermaid",
    show_default=True,
)
@workdir_option
def map_command(fmt: str, workdir: Path | None) -> None:
    """Print the map learned so far (Mermaid or Graphviz dot with L{id} nodes, or the report's
    SVG drawing: redirect it into a .svg file)."""

    from cairn.adapters.storage.map_repository import load_map
    from cairn.services.map import MapGraph

    settings = settings_for(workdir, None, reading=True)
    path = settings.workdir / settings.map_file
    graph = MapGraph.from_snapshot(load_map(path))
    if not graph.location_ids():
        raise MapFileError(path, "no map here: nothing was played in this workdir yet")
    if fmt == "svg":
        from cairn.report.writer import workdir_map_svg

        click.echo(workdir_map_svg(settings, graph))
        return
    click.echo(graph.render_mermaid() if fmt == "mermaid" else graph.render_dot())


main.add_command(memories)
main.add_command(report)
main.add_command(compare)

for _command in main.commands.values():
    _with_verbosity(_command)
main.params.extend(_VERBOSITY)
