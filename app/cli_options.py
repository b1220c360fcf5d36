"""Options and helpers shared by the `cairn` commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cairn.models.memory import MemoryEntry
    from cairn.settings import CairnSettings

workdir_option = click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder holding the memory store (default: [tool.cairn] workdir, else ./cairn-runs, or"
    " the one game's folder in it).",
)
play_workdir_option = click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for the run's files: new, empty, or one cairn made for the same game (default:"
    " [tool.cairn] workdir, else ./cairn-runs/GAME, one folder per game).",
)
store_option = click.option(
    "--store",
    type=click.Choice(["markdown", "sqlite", "postgres"]),
    default=None,
    help="Memory store (default: [tool.cairn] store or CAIRN_STORE, else the one whose file"
    " is in the workdir, else markdown). postgres: the server of CAIRN_DATABASE_URL.",
)
space_option = click.option(
    "--space",
    default=None,
    help="The postgres store's memory space (default: memory_space or CAIRN_MEMORY_SPACE;"
    " play: the game's; else 'default').",
)


def settings_for(
    workdir: Path | None, store: str | None, space: str | None = None, *, reading: bool = False
) -> CairnSettings:
    """Settings for a command's `--workdir`, `--store` and `--space`.

    `reading`: the command only reads, so the workdir must exist (nothing is created; a
    postgres store needs none); by default it is `cairn-runs` or the one game folder in it
    (see `cairn.workdir.reading_workdir`). When no `--store` was given and neither
    `CAIRN_STORE` nor `[tool.cairn] store` chose one, the store is the one whose file the
    workdir holds (see `detect_store`).
    """
    from cairn.settings import load_settings

    settings = load_settings(workdir=workdir, store=store, memory_space=space)
    if reading and settings.store != "postgres":
        from cairn.workdir import reading_workdir

        folder = reading_workdir(settings)
        if folder != settings.workdir:
            settings = settings.model_copy(update={"workdir": folder})
    if store is None and "store" not in settings.model_fields_set:
        found = detect_store(settings)
        if found is not None and found != settings.store:  # as if --store had said it
            settings = settings.model_copy(update={"store": found})
    return settings


def detect_store(settings: CairnSettings) -> str | None:
    """ "markdown" or "sqlite" when the workdir holds only that store's file, else None (no
    file, or both: the configured default stays)."""
    markdown = (settings.workdir / settings.memory_file).is_file()
    sqlite = (settings.workdir / settings.sqlite_file).is_file()
    if markdown == sqlite:
        return None
    return "markdown" if markdown else "sqlite"


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


def json_text(payload: Any) -> str:
    """`json.dumps(payload, indent=2, ensure_ascii=False)` of the payload in JSON mode (its
    pydantic models as `model_dump(mode="json")` gives them), the same text written by
    pydantic-core (~5x faster on 3,000 memories: the standard library encodes indented JSON in
    Python). For JSON-mode data (strings, integers, booleans, None, lists, string-keyed dicts and
    models of those: no floats, whose digits the two write differently); what pydantic-core does
    not write (a lone surrogate in a path) goes through json.dumps."""
    from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

    try:
        return to_json(payload, indent=2).decode()
    except PydanticSerializationError:
        return json.dumps(to_jsonable_python(payload), indent=2, ensure_ascii=False)
