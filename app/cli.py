"""The `cairn` command line (also `python -m cairn`)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import click

from cairn.adapters.storage.map_repository import load_map
from cairn.errors import CairnError
from cairn.models.kinds import PromptKind
from cairn.models.memory import MemoryEntry, MemoryScope
from cairn.settings import CairnSettings, load_settings

workdir_option = click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder holding the memory store (default: [tool.cairn] workdir, else '.').",
)
store_option = click.option(
    "--store",
    type=click.Choice(["markdown", "sqlite"]),
    default=None,
    help="Memory store (default: [tool.cairn] store, else markdown).",
)


def _settings(workdir: Path | None, store: str | None) -> CairnSettings:
    return load_settings(workdir=workdir, store=store)


def format_entry(entry: MemoryEntry) -> str:
    """One memory as two lines: a header with its metadata, then its text."""
    tag = (
        entry.category.value
        if entry.status.value == "ACTIVE"
        else (f"{entry.category.value} - {entry.status.value}")
    )
    meta = entry.meta
    where = f" ({', '.join(meta)})" if meta else ""
    return (
        f"[{tag}] {entry.title}{where}  id={entry.id} importance={entry.importance}\n  {entry.text}"
    )


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log at INFO level.")
def main(verbose: bool) -> None:
    """cairn: location-keyed memory for LLM game agents and narrative engines."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


@main.group()
def memories() -> None:
    """Read, check and export stored memories."""


@memories.command("show")
@click.option("--location", "location_id", type=int, default=None, help="Only this location id.")
@click.option("--npc", "npc_id", default=None, help="Only this NPC id.")
@click.option("--world", is_flag=True, help="Only world memories.")
@click.option("--all", "show_all", is_flag=True, help="Include SUPERSEDED memories.")
@workdir_option
@store_option
def show(
    location_id: int | None,
    npc_id: str | None,
    world: bool,
    show_all: bool,
    workdir: Path | None,
    store: str | None,
) -> None:
    """Print memories, grouped by location, NPC and world."""
    if sum(x is not None and x is not False for x in (location_id, npc_id, world or None)) > 1:
        raise click.UsageError("give at most one of --location, --npc, --world")
    from cairn.container import build_container

    container = build_container(_settings(workdir, store))
    mem_store = container.store()
    entries = mem_store.entries(
        scope=(
            MemoryScope.LOCATION
            if location_id is not None
            else MemoryScope.NPC
            if npc_id
            else MemoryScope.WORLD
            if world
            else None
        ),
        location_id=location_id,
        npc_id=npc_id,
    )
    if not show_all:
        entries = [e for e in entries if e.visible]
    records = mem_store.locations()
    groups: dict[str, list[MemoryEntry]] = {}
    for e in entries:
        if e.scope is MemoryScope.LOCATION:
            rec = records.get(e.location_id or -1)
            key = f"Location {e.location_id}: {rec.name if rec else e.location_name or ''}"
            if rec:
                key += f"  (visits {rec.visits}, episodes {', '.join(map(str, rec.episodes))})"
        elif e.scope is MemoryScope.NPC:
            key = f"NPC {e.npc_ids[0]}"
        else:
            key = "World"
        groups.setdefault(key, []).append(e)
    if not groups:
        click.echo(f"No memories in {mem_store.path}.")
    for key, group in groups.items():
        click.echo(f"== {key}")
        for e in group:
            click.echo(format_entry(e))
        click.echo()
    for problem in mem_store.problems():
        click.echo(f"warning: {problem}", err=True)


@memories.command("check")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def check(file: Path) -> None:
    """Validate a memory file: exit 0 when valid, 1 listing each problem with its line."""
    if file.suffix in {".sqlite3", ".sqlite", ".db"}:
        from cairn.adapters.storage.sqlite_store import SqliteMemoryStore

        sql = SqliteMemoryStore(file)
        problems = sql.problems()
        count = len(sql.entries())
        sql.close()
    else:
        from cairn.adapters.storage.markdown_format import check_memory_file, parse, read_text

        problems = check_memory_file(file)
        # counted by the parser, not a store: a store would log each problem a second time
        text = read_text(file).removeprefix("\ufeff").replace("\r\n", "\n")
        count = len(parse(text, str(file)).cache.memories)
    for problem in problems:
        click.echo(str(problem))
    if problems:
        click.echo(f"{file}: {len(problems)} problem(s); {count} memories parsed", err=True)
        sys.exit(1)
    click.echo(f"{file}: OK, {count} memories")


@memories.command("export")
@click.option("--format", "fmt", type=click.Choice(["json"]), default="json", show_default=True)
@workdir_option
@store_option
def export(fmt: str, workdir: Path | None, store: str | None) -> None:
    """Write every memory and location record to standard output as JSON."""
    from cairn.container import build_container

    mem_store = build_container(_settings(workdir, store)).store()
    payload = {
        "store": str(mem_store.path),
        "locations": [r.model_dump(mode="json") for r in mem_store.locations().values()],
        "memories": [e.model_dump(mode="json") for e in mem_store.entries()],
    }
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))


@main.command("demo")
@workdir_option
@store_option
def demo(workdir: Path | None, store: str | None) -> None:
    """Replay the built-in narrative session; print the memories and the narrative prompt."""
    from cairn.container import build_container
    from cairn.runtime.demo import build_state, run_demo_session
    from cairn.services.context import ContextRequest

    settings = _settings(workdir or Path(".cairn-demo"), store)
    container = build_container(settings)
    gs = run_demo_session(container.bus(), build_state())
    mem_store = container.store()
    click.echo(f"# Memories written to {mem_store.path}\n")
    for e in mem_store.entries():
        click.echo(f"({e.place}) {format_entry(e)}")
    request = ContextRequest.from_game_state(gs)
    prompt = container.context_service().assemble(PromptKind.NARRATIVE, request)
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


@main.command("play")
@click.option(
    "--game",
    "game_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A Z-machine story file (default: the built-in demo world).",
)
@click.option("--episodes", type=click.IntRange(min=1), default=None, help="Episodes to play.")
@click.option("--max-turns", type=click.IntRange(min=1), default=None, help="Turns per episode.")
@click.option(
    "--llm",
    default=None,
    help="offline (default), anthropic (needs ANTHROPIC_API_KEY), cassette:PATH or record:PATH.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Agent and game seed.")
@click.option(
    "--no-memory", is_flag=True, help="Baseline: leave memory out of the agent's context."
)
@click.option(
    "--fresh",
    is_flag=True,
    help="Start from no memories: clear the workdir's store, map and knowledge first.",
)
@workdir_option
@store_option
def play(
    game_path: Path | None,
    episodes: int | None,
    max_turns: int | None,
    llm: str | None,
    seed: int,
    no_memory: bool,
    fresh: bool,
    workdir: Path | None,
    store: str | None,
) -> None:
    """Play episodes of a game with memory; write report.json, the store, map and transcript."""

    settings = load_settings(workdir=workdir, store=store, llm=llm)
    _play(settings, game_path, episodes, max_turns, seed, no_memory, fresh)


def _play(
    settings: CairnSettings,
    game_path: Path | None,
    episodes: int | None,
    max_turns: int | None,
    seed: int,
    no_memory: bool,
    fresh: bool,
) -> None:
    from cairn.play.runner import episode_table, run_play

    if fresh:
        _clear_run_files(settings)
    total = (episodes or settings.play_episodes) * (max_turns or settings.play_max_turns)
    with click.progressbar(
        length=total, label="playing", item_show_func=lambda s: s, file=sys.stderr
    ) as bar:
        state = {"last": 0}

        def on_turn(episode: int, turn: int, obs: Any) -> None:
            limit = max_turns or settings.play_max_turns
            done = (episode - 1) * limit + (limit if obs.done else turn)
            score = "?" if obs.score is None else obs.score
            where = obs.location_name or obs.location_id
            bar.current_item = f"ep {episode} turn {turn} score {score} at {where}"
            bar.update(done - state["last"])
            state["last"] = done

        result = run_play(
            settings,
            game_path=game_path,
            episodes=episodes,
            max_turns=max_turns,
            use_memory=not no_memory,
            seed=seed,
            on_turn=on_turn,
        )
    report = result.report
    click.echo(
        f"{report['game']} ({'memory' if report['memory'] else 'no memory'}), llm {report['llm']}"
    )
    click.echo(episode_table(report))
    click.echo(f"report: {result.report_path}  transcript: {result.run_dir / 'transcript.jsonl'}")


def _clear_run_files(settings: CairnSettings) -> None:
    workdir = settings.workdir
    names = [
        settings.memory_file,
        settings.sqlite_file,
        settings.map_file,
        "map.mmd",
        settings.knowledge_file,
        settings.report_file,
    ]
    # exact names only (and the store's own backups and lock): never a user's file like
    # Memories.md.bak, and never a pattern that an empty name would turn into "everything"
    made = [*names, *(f"{settings.memory_file}.{n}" for n in range(1, settings.backup_count + 1))]
    made += [f"{settings.memory_file}.lock", f"{settings.sqlite_file}-wal"]
    made += [f"{settings.sqlite_file}-shm"]
    for name in made:
        path = workdir / name
        if path.is_file() and not path.is_symlink():
            path.unlink()


@main.command("map")
@click.option(
    "--format", "fmt", type=click.Choice(["mermaid", "dot"]), default="mermaid", show_default=True
)
@workdir_option
def map_command(fmt: str, workdir: Path | None) -> None:
    """Print the map learned so far (Mermaid with L{id} nodes, or Graphviz dot)."""

    settings = load_settings(workdir=workdir)
    graph = load_map(settings.workdir / settings.map_file)
    click.echo(graph.render_mermaid() if fmt == "mermaid" else graph.render_dot())


def _register_replay() -> None:
    from cairn.replay.cli import replay

    main.add_command(replay)


_register_replay()
