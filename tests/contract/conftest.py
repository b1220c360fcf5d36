"""Fixtures of the store contract suite: a factory per store kind, opening store objects on one
file, what a store gives back for an entry, and a way to count the durable writes (commits) a
store makes."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.adapters.storage.markdown_parse import ParsedFile
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.adapters.storage.sqlite_store import SqliteMemoryStore
from cairn.interfaces.store import IMemoryStore
from cairn.models.memory import MemoryEntry
from tests.postgres import open_pg_store, server

DURABLE_KINDS = ("markdown", "sqlite", "postgres")
FILE_KINDS = ("markdown", "sqlite")
ALL_KINDS = (*DURABLE_KINDS, "inmemory")
FILE_NAMES = {
    "markdown": "Memories.md",
    "sqlite": "memories.sqlite3",
    "postgres": "space",  # names the test's memory space (see tests/postgres.py)
    "inmemory": "",
}


def as_stored(kind: str, entry: MemoryEntry) -> MemoryEntry:
    """What a store of `kind` gives back for `entry`, before and after a reload: the markdown
    store keeps timestamps to the second (see `markdown_layout`), the others keep them exactly.
    Every other field, and the order of memories, is kept by every store."""
    if kind != "markdown":
        return entry
    since = entry.since_timestamp
    return entry.model_copy(
        update={
            "created_at": entry.created_at.replace(microsecond=0),
            "since_timestamp": since.replace(microsecond=0) if since is not None else None,
        }
    )


def open_store(kind: str, path: Path, **options: Any) -> IMemoryStore:
    """A new store object of `kind` on `path` (options go to the store's constructor)."""
    if kind == "markdown":
        return MarkdownMemoryStore(path, **options)
    if kind == "sqlite":
        return SqliteMemoryStore(path, **options)
    if kind == "postgres":
        return open_pg_store(path, **options)
    raise ValueError(f"{kind!r} is not a durable store kind")


@dataclass
class StoreFactory:
    """Opens store objects of one kind on one file; every object it opened is closed at the end.

    For `inmemory` there is no file: `open()` always returns the one shared store, so tests that
    only need "the same data seen again" run on it too.
    """

    kind: str
    path: Path
    _opened: list[IMemoryStore] = field(default_factory=list)
    _shared: InMemoryStore | None = None

    @property
    def durable(self) -> bool:
        return self.kind in DURABLE_KINDS

    def stored(self, entry: MemoryEntry) -> MemoryEntry:
        """What a store of this kind gives back for `entry` (see `as_stored`)."""
        return as_stored(self.kind, entry)

    def open(self, **options: Any) -> IMemoryStore:
        if self.kind == "inmemory":
            if self._shared is None:
                self._shared = InMemoryStore()
            return self._shared
        store = open_store(self.kind, self.path, **options)
        self._opened.append(store)
        return store

    def close_all(self) -> None:
        for store in self._opened:
            store.close()
        self._opened.clear()


def _factory(kind: str, tmp_path: Path) -> Iterator[StoreFactory]:
    if kind == "postgres":
        server()  # running before any writer process starts (they inherit its URL)
    factory = StoreFactory(kind, tmp_path / (FILE_NAMES[kind] or "unused"))
    yield factory
    factory.close_all()


@pytest.fixture(params=ALL_KINDS)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Every store kind: markdown, sqlite and inmemory."""
    yield from _factory(str(request.param), tmp_path)


@pytest.fixture(params=DURABLE_KINDS)
def durable_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """The stores that write to disk: markdown, sqlite and postgres."""
    yield from _factory(str(request.param), tmp_path)


@pytest.fixture(params=FILE_KINDS)
def file_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """The stores in a file of the workdir: markdown and sqlite."""
    yield from _factory(str(request.param), tmp_path)


@pytest.fixture
def markdown_factory(tmp_path: Path) -> Iterator[StoreFactory]:
    """The markdown store only."""
    yield from _factory("markdown", tmp_path)


@pytest.fixture
def postgres_factory(tmp_path: Path) -> Iterator[StoreFactory]:
    """The PostgreSQL store only (its own memory space on the tests' server)."""
    yield from _factory("postgres", tmp_path)


@pytest.fixture
def sqlite_factory(tmp_path: Path) -> Iterator[StoreFactory]:
    """The SQLite store only."""
    yield from _factory("sqlite", tmp_path)


@contextmanager
def counting_commits(store: IMemoryStore) -> Iterator[Callable[[], int]]:
    """Count the durable writes `store` makes inside the block; yields a function giving it.

    markdown: its whole-file writes (folds) and appends; sqlite: COMMITs of write (BEGIN IMMEDIATE)
    transactions on its connection;
    inmemory and postgres: their `commits` counter.
    """
    if isinstance(store, InMemoryStore) or type(store).__name__ == "PostgresMemoryStore":
        start = store.commits  # type: ignore[attr-defined]
        yield lambda: store.commits - start  # type: ignore[attr-defined]
    elif isinstance(store, MarkdownMemoryStore):
        writes: list[str] = []
        original, appender = store._replace, store._appender
        original_append = appender.append

        def write(text: str) -> tuple[ParsedFile | None, str] | None:
            writes.append(text)
            return original(text)

        def append(cache: Any, ids: list[str | int], **options: bool) -> Any:
            writes.append("append")
            return original_append(cache, ids, **options)

        store._replace = write  # type: ignore[method-assign]
        appender.append = append  # type: ignore[method-assign]
        try:
            yield lambda: len(writes)
        finally:
            del store._replace
            del appender.append
    elif isinstance(store, SqliteMemoryStore):
        statements: list[str] = []
        conn = store._connection()
        conn.set_trace_callback(statements.append)
        try:
            yield lambda: _write_commits(statements)
        finally:
            conn.set_trace_callback(None)
    else:
        raise TypeError(f"no commit counter for {type(store).__name__}")


def _write_commits(statements: list[str]) -> int:
    count, writing = 0, False
    for statement in (s.strip().upper() for s in statements):
        if statement == "BEGIN IMMEDIATE":
            writing = True
        elif statement in ("COMMIT", "ROLLBACK"):
            count += writing and statement == "COMMIT"
            writing = False
    return count


def sqlite_pragma(path: Path, name: str) -> Any:
    """Read one PRAGMA of the SQLite file at `path` through a separate connection."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        conn.close()
