"""Options and helpers shared by the `cairn` commands."""

from __future__ import annotations

from pathlib import Path

import click

from cairn.models.memory import MemoryEntry
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


def settings_for(workdir: Path | None, store: str | None) -> CairnSettings:
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
