"""The tests' PostgreSQL server: started on first use (once per test process), stopped when
the session ends. Tests that need it skip, with a one-line reason, only when no PostgreSQL
binaries are found.

Store tests name a memory space by a path (the contract suite's stores are opened on a
path): a store "at" PATH is the space `str(PATH)` in the server's database, so every test
gets its own space. Writer processes find the server through TEST_DATABASE_URL.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cairn.testing.postgres_server import PostgresServer, find_bindir

URL_VARIABLE = "TEST_DATABASE_URL"
TEST_TIMEOUTS = {"statement_timeout": 20.0, "reconnect_timeout": 30.0}

_server: list[PostgresServer] = []


def server() -> PostgresServer:
    """The running test server (started now if it is not); skips when there are no binaries."""
    if not _server:
        bindir = find_bindir()
        if bindir is None:
            pytest.skip("PostgreSQL binaries not found (initdb, pg_ctl): postgres tests skipped")
        _server.append(PostgresServer.create(bindir).start())
        os.environ[URL_VARIABLE] = _server[0].url
    return _server[0]


def stop_server() -> None:
    """Stop the test server if it was started."""
    while _server:
        _server.pop().stop()
    os.environ.pop(URL_VARIABLE, None)


def open_pg_store(path: Path, *, url: str | None = None, **options: Any) -> Any:
    """A postgres store object on the space named by `path` (on the test server, else `url`)."""
    from cairn.adapters.storage.postgres_store import PostgresMemoryStore

    target = url or server().url
    return PostgresMemoryStore(target, space=str(path), **{**TEST_TIMEOUTS, **options})
