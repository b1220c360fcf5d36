"""`cairn memories ...`: show, search, check, edit, export and import the memories of a store."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cairn.cli_options import (
    format_entry,
    json_text,
    settings_for,
    space_option,
    store_option,
    workdir_option,
)
from cairn.terminal_text import printable, printable_json

if TYPE_CHECKING:
    from cairn.interfaces.store import IStoreReader
    from cairn.models.memory import MemoryEntry, MemoryScope
    from cairn.settings import CairnSettings


@click.group(context_settings={"show_default": True})
def memories() -> None:
    """Read, search, check, export and import stored memories."""


def _only_scope(location_id: int | None, npc_id: str | None, world: bool) -> MemoryScope | None:
    """The scope the --location/--npc/--world filters ask for (at most one may be given)."""
    from cairn.models.memory import MemoryScope

    if sum(x is not None and x is not False for x in (location_id, npc_id, world or None)) > 1:
        raise click.UsageError("give at most one of --location, --npc, --world")
    if location_id is not None:
        return MemoryScope.LOCATION
    if npc_id:
        return MemoryScope.NPC
    return MemoryScope.WORLD if world else None


location_filter = click.option(
    "--location", "location_id", type=int, default=None, help="Only this location id."
)
npc_filter = click.option("--npc", "npc_id", default=None, help="Only this NPC id.")
world_filter = click.option("--world", is_flag=True, help="Only world memories.")
all_filter = click.option(
    "--all", "show_all", is_flag=True, help="Include SUPERSEDED memories and the archive."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def memory_filters(command: Callable[..., None]) -> Callable[..., None]:
    """The options `show` and `search` share: scope filters, --all, --json, workdir, store,
    space."""
    command = space_option(store_option(command))
    for option in reversed(
        (location_filter, npc_filter, world_filter, all_filter, json_option, workdir_option)
    ):
        command = option(command)
    return command


@memories.command("show")
@memory_filters
def show(
    location_id: int | None,
    npc_id: str | None,
    world: bool,
    show_all: bool,
    as_json: bool,
    workdir: Path | None,
    store: str | None,
    space: str | None,
) -> None:
    """Print memories, grouped by location, NPC and world (--json: a JSON list of memories)."""
    scope = _only_scope(location_id, npc_id, world)
    from cairn.adapters.storage.memory_cache import MemoryCache
    from cairn.adapters.storage.store_opening import open_store

    mem_store = open_store(settings_for(workdir, store, space, reading=True), reading=True)
    try:
        entries = mem_store.entries(scope=scope, location_id=location_id, npc_id=npc_id)
        if not show_all:
            entries = [e for e in entries if e.visible]
        else:  # with the archive (SUPERSEDED memories moved there when their episode ended)
            archive = MemoryCache()
            archive.memories = {e.id: e for e in mem_store.archived()}
            entries = archive.select(scope=scope, location_id=location_id, npc_id=npc_id) + entries
        if as_json:
            click.echo(printable_json(json_text(entries)))
        else:
            _print_groups(entries, mem_store)
        for problem in mem_store.problems():
            click.echo(printable(f"warning: {problem}"), err=True)
    finally:
        mem_store.close()


def _print_groups(entries: list[MemoryEntry], mem_store: IStoreReader) -> None:
    records = mem_store.locations()
    from cairn.models.memory import MemoryScope

    groups: dict[str, list[MemoryEntry]] = {}
    headings: dict[tuple[int | None, str | None], str] = {}  # one per room, not per memory
    for e in entries:
        if e.scope is MemoryScope.LOCATION:
            place = (e.location_id, e.location_name)
            key = headings.get(place, "")
            if not key:
                rec = records.get(e.location_id or -1)
                key = f"Location {e.location_id}: {rec.name if rec else e.location_name or ''}"
                if rec:
                    key += f"  (visits {rec.visits}, episodes {', '.join(map(str, rec.episodes))})"
                headings[place] = key
        elif e.scope is MemoryScope.NPC:
            key = f"NPC {e.npc_ids[0]}"
        else:
            key = "World"
        groups.setdefault(key, []).append(e)
    if not groups:
        click.echo(f"No memories in {mem_store.path}.")
        return
    lines: list[str] = []  # one write for the whole listing, not one per memory
    for key, group in groups.items():
        lines.append(f"== {key}")
        lines.extend(map(format_entry, group))
        lines.append("")
    click.echo(printable("\n".join(lines)))  # a memory's escapes shown, never obeyed


@memories.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option(
    "--k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="Results to show."
)
@memory_filters
def search(
    query: tuple[str, ...],
    k: int,
    location_id: int | None,
    npc_id: str | None,
    world: bool,
    show_all: bool,
    as_json: bool,
    workdir: Path | None,
    store: str | None,
    space: str | None,
) -> None:
    """Find the memories most relevant to QUERY (plain words), ranked by BM25."""
    scope = _only_scope(location_id, npc_id, world)
    from cairn.container import build_container
    from cairn.memory_api import Memory

    text = " ".join(query)
    settings = settings_for(workdir, store, space, reading=True)
    container = build_container(settings)
    if settings.store == "sqlite":  # a reading store: no memories.sqlite3 made where there is none
        from dependency_injector import providers

        from cairn.adapters.storage.store_opening import open_store

        container.store.override(providers.Object(open_store(settings, reading=True)))
    with Memory(container, owns_store=True) as memory:
        hits = memory.search(
            text,
            k=k,
            scope=scope,
            location_id=location_id,
            npc_id=npc_id,
            include_superseded=show_all,
        )
        path = memory.store.path
    if as_json:
        payload = [{"score": h.score, "memory": h.memory.model_dump(mode="json")} for h in hits]
        click.echo(printable_json(json.dumps(payload, indent=2, ensure_ascii=False)))
        return
    if not hits:
        click.echo(printable(f"No memories in {path} match {text!r}."))
    for rank, hit in enumerate(hits, 1):
        where = f"{hit.memory.place}, score {hit.score:.3g}"
        click.echo(printable(f"{rank}. ({where}) {format_entry(hit.memory)}"))


@memories.command("check")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def check(file: Path) -> None:
    """Validate a memory file: exit 0 when cairn reads all of it, 1 listing each problem (what
    it cannot read or would lose) with its line. A person's notes (prose) are kept, not
    problems: listed with their lines."""
    notes: list[int] = []
    if file.suffix in {".sqlite3", ".sqlite", ".db"}:
        from cairn.adapters.storage.store_opening import sqlite_store

        sql = sqlite_store(file.parent, file.name)
        problems = sql.problems()
        count = len(sql.entries())
        sql.close()
    else:
        from cairn.adapters.storage.markdown_check import check_file

        # one parse, not a store: a store would log each problem a second time
        found = check_file(file)
        problems, notes, count = found.problems, found.notes, found.memories
        again = found.blocks - found.memories
        if again > 0 and not problems:
            click.echo(
                f"{file}: {found.blocks} memory blocks for {count} memories: {again} later"
                " block(s) of a memory written again (a newer version: the later is read)"
            )
    lines = [str(problem) for problem in problems]
    if notes:
        lines.append(f"{file}: kept {_notes_kept(file, notes)}")
    if lines:
        click.echo("\n".join(lines))
    if problems:
        click.echo(f"{file}: {len(problems)} problem(s); {count} memories parsed", err=True)
        sys.exit(1)
    click.echo(f"{file}: OK, {count} memories")


_NOTES_LISTED = 20


def _notes_kept(file: Path, notes: list[int]) -> str:
    """`2 hand-written notes: FILE:3, FILE:17` (the first `_NOTES_LISTED` of them)."""
    listed = ", ".join(f"{file}:{line}" for line in notes[:_NOTES_LISTED])
    more = f" and {len(notes) - _NOTES_LISTED} more" if len(notes) > _NOTES_LISTED else ""
    plural = "s" if len(notes) != 1 else ""
    return f"{len(notes)} hand-written note{plural}: {listed}{more}"


@memories.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "jsonl"]),
    default="json",
    show_default=True,
    help="jsonl: one line per location record and memory, every field, for `memories import`.",
)
@workdir_option
@store_option
@space_option
def export(fmt: str, workdir: Path | None, store: str | None, space: str | None) -> None:
    """Write every memory and location record to standard output."""
    from cairn.adapters.storage.store_opening import open_store
    from cairn.adapters.storage.transfer import export_lines

    mem_store = open_store(settings_for(workdir, store, space, reading=True), reading=True)
    try:
        if fmt == "jsonl":
            click.echo("".join(line + "\n" for line in export_lines(mem_store)), nl=False)
            return
        payload = {
            "store": str(mem_store.path),
            "locations": list(mem_store.locations().values()),
            "memories": mem_store.archived() + mem_store.entries(),
        }
    finally:
        mem_store.close()
    click.echo(json_text(payload))


@memories.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@workdir_option
@store_option
@space_option
def import_command(file: Path, workdir: Path | None, store: str | None, space: str | None) -> None:
    """Load FILE (from `memories export --format jsonl`) into an empty store."""
    from cairn.adapters.storage.transfer import read_export
    from cairn.container import build_container
    from cairn.events.commands import ImportMemories

    records, entries = read_export(file)
    settings = settings_for(workdir, store, space)
    if settings.store != "postgres":  # the postgres store writes nothing into the workdir
        from cairn.workdir import claim_workdir

        claim_workdir(settings.workdir, None, settings)
    # through the bus, as every write: one unit of work; an import asks no model, so none is
    # configured (a settings file naming one would otherwise want its API key)
    container = build_container(settings.model_copy(update={"llm": "offline"}))
    mem_store = container.store()
    try:
        command = ImportMemories(records=tuple(records), entries=tuple(entries))
        warnings: list[str] = container.bus().handle(command)
    finally:
        mem_store.close()
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"{len(entries)} memories and {len(records)} locations into {mem_store.path}")


def _missing_store(settings: CairnSettings) -> Path | None:
    """The store's file when the workdir holds none (a postgres store has no file: None)."""
    if settings.store == "postgres":
        return None
    name = settings.sqlite_file if settings.store == "sqlite" else settings.memory_file
    path = settings.workdir / name
    return None if path.exists() else path


@memories.command("edit")
@location_filter
@npc_filter
@world_filter
@workdir_option
@store_option
@space_option
def edit(
    location_id: int | None,
    npc_id: str | None,
    world: bool,
    workdir: Path | None,
    store: str | None,
    space: str | None,
) -> None:
    """Edit memories in $EDITOR (else $VISUAL, else vi) as Memories.md blocks; the changes are
    applied in one unit of work: a deleted block is forgotten, a block without an id added.
    Problems reopen the editor; a conflict with another writer changes nothing (exit 1)."""
    from cairn.container import build_container
    from cairn.memory_edit import EditScope, edit_memories

    kind = _only_scope(location_id, npc_id, world)
    settings = settings_for(workdir, store, space, reading=True)
    missing = _missing_store(settings)
    if missing is not None:  # edit changes a store; it makes none in a folder cairn never made
        click.echo(
            f"No memories in {missing}: nothing to edit (`cairn play` or `cairn memories "
            "import` makes a store)",
            err=True,
        )
        sys.exit(1)
    container = build_container(settings.model_copy(update={"llm": "offline"}))
    try:
        status = edit_memories(
            container,
            EditScope(kind, location_id, npc_id),
            lambda line: click.echo(line, err=True),
        )
    finally:
        container.store().close()
    sys.exit(status)
