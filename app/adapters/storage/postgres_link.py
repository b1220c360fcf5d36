"""The connections of one PostgreSQL store object: a pool for units of work and reads, and one
connection listening for the changes other agents commit to the same memory space.

Every connection gets the space (`cairn.space`), a statement timeout and a lock timeout when it
is made. A lost connection (server restarted, network cut) is replaced and the unit of work
retried until `reconnect_timeout`; every other database error becomes one StoreError line. No
message ever holds the password.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from cairn.adapters.storage.postgres_schema import SPACE_SETTING, migrate
from cairn.errors import ConfigError, StoreError, StoreLockedError

log = logging.getLogger(__name__)

T = TypeVar("T")

NOTIFY_LIMIT = 7000
"""Bytes per NOTIFY payload (PostgreSQL's limit is 8000); more ids go in several payloads."""

# Objects inherited through fork() must never be closed or collected by the child (closing
# would end the parent's sessions); they are parked here and new ones are made.
_INHERITED: list[object] = []


def describe(url: str) -> str:
    """`user@host:port/dbname` of a connection URL, without the password; a URL that does not
    parse is a ConfigError that does not repeat it."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:
        raise ConfigError("database_url: not a valid PostgreSQL connection URL") from None
    user = parts.get("user") or "?"
    host = parts.get("host") or "localhost"
    return f"{user}@{host}:{parts.get('port') or 5432}/{parts.get('dbname') or user}"


def channel_of(space: str) -> str:
    """The LISTEN/NOTIFY channel of a memory space (a plain identifier, one per space)."""
    return "cairn_" + hashlib.sha256(space.encode()).hexdigest()[:24]


def is_disconnect(error: BaseException) -> bool:
    """Whether `error` means the connection is gone (worth reconnecting and retrying)."""
    if isinstance(error, PoolTimeout):
        return True
    if not isinstance(error, psycopg.OperationalError):
        return False
    state = error.sqlstate
    return state is None or state.startswith("08") or state in ("57P01", "57P02", "57P03")


CONFLICT_STATES = ("40P01", "40001")
"""Deadlock detected, serialization failure: the unit of work was rolled back; run it again."""
CONFLICT_RETRIES = 5


@dataclass
class Changes:
    """Memory ids and location ids other agents changed, gathered from notifications."""

    memories: set[str] = field(default_factory=set)
    locations: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.memories or self.locations)


def notify_payloads(token: str, memories: list[str], locations: list[int]) -> list[str]:
    """JSON payloads naming the changed ids, each under NOTIFY_LIMIT bytes."""
    payloads: list[str] = []
    batch: list[str] = []
    size = 0
    for memory_id in memories:
        cost = len(json.dumps(memory_id)) + 1
        if batch and size + cost > NOTIFY_LIMIT:
            payloads.append(json.dumps({"o": token, "m": batch, "l": []}))
            batch, size = [], 0
        batch.append(memory_id)
        size += cost
    payloads.append(json.dumps({"o": token, "m": batch, "l": locations}))
    return payloads


class PostgresLink:
    """A pool (one connection: a store object serves one agent) and a listening connection."""

    def __init__(
        self,
        url: str,
        space: str,
        *,
        token: str,
        statement_timeout: float,
        connect_timeout: float,
        reconnect_timeout: float,
    ) -> None:
        self.where = describe(url)
        self._url = url
        self._password = str(conninfo_to_dict(url).get("password") or "")
        self._space = space
        self.channel = channel_of(space)
        self._token = token
        self._timeout_ms = max(1, round(statement_timeout * 1000))
        self._connect_timeout = max(1, round(connect_timeout))
        self._reconnect_timeout = reconnect_timeout
        self._pid = os.getpid()
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._listener: psycopg.Connection[Any] | None = None

    # -- messages ---------------------------------------------------------------------------

    def _clean(self, error: BaseException) -> str:
        """One line of an error's message, with any copy of the password masked."""
        text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
        return text.replace(self._password, "***") if self._password else text

    @contextmanager
    def errors(self, doing: str) -> Iterator[None]:
        """Translate database errors raised in the block into StoreError lines."""
        try:
            yield
        except (pg_errors.LockNotAvailable, pg_errors.QueryCanceled) as e:
            raise StoreLockedError(
                f"{self.where}: {doing}: gave up after {self._timeout_ms} ms"
                f" (statement or lock timeout): {self._clean(e)}"
            ) from None
        except psycopg.Error as e:
            raise StoreError(f"{self.where}: {doing}: {self._clean(e)}") from None

    # -- connections -----------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(self._url, autocommit=True, connect_timeout=self._connect_timeout)
        self._configure(conn)
        return conn

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        limit = f"{self._timeout_ms}ms"
        conn.execute(
            "SELECT set_config(%s, %s, false), set_config('statement_timeout', %s, false),"
            " set_config('lock_timeout', %s, false)",
            (SPACE_SETTING, self._space, limit, limit),
        )

    def open(self) -> None:
        """Connect (a bad URL, password or host is one StoreError line), migrate the schema,
        listen to the space's channel and open the pool; on failure nothing stays open."""
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        with self.errors("connect"):
            self._listener = self._connect()
            migrate(self._listener, self.where)
            self._warn_if_privileged(self._listener)
            self._listener.execute(f"LISTEN {self.channel}")
            pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
                self._url,
                min_size=1,
                max_size=1,
                open=False,
                kwargs={"autocommit": True, "connect_timeout": self._connect_timeout},
                configure=self._configure,
                reconnect_timeout=max(self._reconnect_timeout, 1.0),
                timeout=self._connect_timeout,
                name=f"cairn-{self.channel}",
            )
            pool.open(wait=True, timeout=self._connect_timeout)
            self._pool = pool

    def _warn_if_privileged(self, conn: psycopg.Connection[Any]) -> None:
        """Row-level security does not hold a superuser or a BYPASSRLS role to its space."""
        row = conn.execute(
            "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        if row is not None and row[0]:
            log.warning(
                "%s: this role is a superuser or has BYPASSRLS: the database does not keep it"
                " to its memory space; connect as an ordinary role",
                self.where,
            )

    def forked(self) -> bool:
        """True (once) when this process is a fork of the one that opened the connections:
        they are parked, never closed, and new ones must be opened."""
        if os.getpid() == self._pid:
            return False
        _INHERITED.extend([self._pool, self._listener])
        self._pool, self._listener, self._pid = None, None, os.getpid()
        return True

    def close(self) -> None:
        """Close the pool and the listening connection (those of this process only)."""
        if os.getpid() != self._pid:
            self.forked()
            return
        pool, listener, self._pool, self._listener = self._pool, self._listener, None, None
        if pool is not None:
            pool.close()
        if listener is not None:
            listener.close()

    @property
    def closed(self) -> bool:
        return self._pool is None

    # -- work ------------------------------------------------------------------------------

    def run(self, work: Callable[[psycopg.Connection[Any], int], T], doing: str) -> T:
        """Call `work(connection, attempt)` (it opens its own transaction). When the connection
        is lost, wait for the server and call it again (attempt 1, 2, ...) until
        `reconnect_timeout`. A unit of work chosen as a deadlock's victim (agents locking the
        same rows in another order) is run again, up to CONFLICT_RETRIES times. Other database
        errors are StoreErrors. (Connections are not checked before use: a broken one fails its
        first statement, the pool drops it when it comes back, and the retry gets a new one.)"""
        if self._pool is None:
            raise StoreError(f"{self.where}: the store is closed")
        deadline = time.monotonic() + self._reconnect_timeout
        attempt = conflicts = 0
        while True:
            try:
                with self.errors(doing), self._pool.connection() as conn:
                    return work(conn, attempt)
            except StoreError as e:
                cause = e.__context__
                state = getattr(cause, "sqlstate", None)
                if state in CONFLICT_STATES and conflicts < CONFLICT_RETRIES:
                    conflicts += 1
                    attempt += 1
                    log.warning("%s; running the unit of work again", e)
                    continue
                if cause is None or not is_disconnect(cause):
                    raise
                log.warning("%s: connection lost (%s); retrying", self.where, doing)
                attempt = self._wait_for_server(deadline, attempt, doing, cause)

    def _wait_for_server(
        self, deadline: float, attempt: int, doing: str, error: BaseException
    ) -> int:
        """Sleep before the next attempt (backing off up to 1 s); past `deadline`, raise the
        StoreError saying the server could not be reached. Returns the next attempt's number."""
        if time.monotonic() >= deadline:
            raise StoreError(
                f"{self.where}: {doing}: the server could not be reached for"
                f" {self._reconnect_timeout:g} s: {self._clean(error)}"
            ) from None
        time.sleep(min(0.05 * 2 ** (attempt + 1), 1.0))
        return attempt + 1

    def poll(self, *, sync: bool = False) -> Changes | None:
        """What other store objects on this space committed since the last poll (without
        waiting). None when the listening connection had to be made again: notifications may
        have been missed, so the caller must read everything.

        A notification travels on its own after the commit that sent it returns, so without
        `sync` a commit another agent just made may not be named yet. With `sync`, one
        statement runs on the listening connection first: the server sends every notification
        signalled before that statement ahead of its reply, so every commit that returned
        before this call is named (one round trip)."""
        listener = self._listener
        changes = Changes()
        try:
            if listener is None or listener.closed:
                raise psycopg.OperationalError("the listening connection is closed")
            if sync:
                listener.execute("SELECT 1")
            for note in listener.notifies(timeout=0):
                self._gather(note.payload, changes)
        except psycopg.OperationalError:
            self._relisten()
            return None
        except psycopg.Error as e:
            raise StoreError(f"{self.where}: listen: {self._clean(e)}") from None
        return changes

    def _gather(self, payload: str, changes: Changes) -> None:
        try:
            data = json.loads(payload)
        except ValueError:
            log.warning("%s: ignored a notification that is not JSON", self.where)
            return
        if data.get("o") == self._token:  # this store object's own commit
            return
        changes.memories.update(str(i) for i in data.get("m", []))
        changes.locations.update(int(i) for i in data.get("l", []))

    def _relisten(self) -> None:
        """Make the listening connection again, waiting for the server up to the timeout."""
        if self._listener is not None:
            with suppress(psycopg.Error):
                self._listener.close()
            self._listener = None
        deadline = time.monotonic() + self._reconnect_timeout
        attempt = 0
        while True:
            try:
                listener = self._connect()
                listener.execute(f"LISTEN {self.channel}")
                self._listener = listener
                return
            except psycopg.OperationalError as e:
                attempt = self._wait_for_server(deadline, attempt, "listen", e)
