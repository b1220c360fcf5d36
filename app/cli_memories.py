"""`cairn memories ...`: show, check and export the memories of a workdir."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from cairn.cli_options import format_entry, settings_for, store_option, workdir_option
from cairn.models.memory import MemoryEntry, MemoryScope


@click.group()
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

    container = build_container(settings_for(workdir, store))
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

    mem_store = build_container(settings_for(workdir, store)).store()
    payload = {
        "store": str(mem_store.path),
        "locations": [r.model_dump(mode="json") for r in mem_store.locations().values()],
        "memories": [e.model_dump(mode="json") for e in mem_store.entries()],
    }
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
