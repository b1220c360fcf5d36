"""Stores open in one place: the container's `store` provider and the memory commands.

The command line's memory commands need no other part of the container: they come here too.

Each store's module is imported only when that store is chosen, so `cairn memories show` on a
markdown store loads neither SQLite's nor PostgreSQL's code, nor the rest of cairn.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn.extras import require

if TYPE_CHECKING:
    from cairn.interfaces.store import IMemoryStore
    from cairn.settings import CairnSettings

DEFAULT_SPACE = "default"
"""The postgres store's memory space when neither the settings nor a game name one."""


def markdown_store(
    workdir: str | Path, name: str, backup_count: int, lock_timeout: float, clock: Any = None
) -> Any:
    """Memories.md in the workdir (`clock`: the container's, for the archive's times)."""
    from cairn.adapters.storage.markdown_store import MarkdownMemoryStore

    return MarkdownMemoryStore(
        Path(workdir) / name, backup_count=backup_count, lock_timeout=lock_timeout, clock=clock
    )


def sqlite_store(
    workdir: str | Path, name: str, clock: Any = None, *, create: bool = True
) -> Any:
    """memories.sqlite3 in the workdir (`clock`: the container's, for the archive's times;
    `create=False`: a missing file reads as an empty store, and nothing is made on disk)."""
    from cairn.adapters.storage.sqlite_store import SqliteMemoryStore

    return SqliteMemoryStore(Path(workdir) / name, clock=clock, create=create)


def postgres_store(
    url: Any, space: str | None, statement_timeout: float, reconnect_timeout: float
) -> Any:
    """The postgres store (psycopg is imported only when it is chosen: `cairn[postgres]`)."""
    require("psycopg", "postgres", for_what="the postgres store")
    from cairn.adapters.storage.postgres_store import PostgresMemoryStore

    return PostgresMemoryStore(
        url,
        space=space or DEFAULT_SPACE,
        statement_timeout=statement_timeout,
        reconnect_timeout=reconnect_timeout,
    )


def open_store(settings: CairnSettings, *, reading: bool = False) -> IMemoryStore:
    """The store `settings.store` names, opened as the container opens it (`reading`: for a
    command that only reads, which makes no SQLite file where there is none; a missing
    Memories.md already reads as empty without being made)."""
    store: IMemoryStore
    if settings.store == "sqlite":
        store = sqlite_store(settings.workdir, settings.sqlite_file, create=not reading)
    elif settings.store == "postgres":
        store = postgres_store(
            settings.database_url,
            settings.memory_space,
            settings.statement_timeout,
            settings.reconnect_timeout,
        )
    else:
        store = markdown_store(
            settings.workdir, settings.memory_file, settings.backup_count, settings.lock_timeout
        )
    return store
