"""A throwaway PostgreSQL server for tests and benches: initdb + pg_ctl in a temporary folder.

The server listens on a free loopback port (and a socket in its folder), accepts the
superuser `postgres` over the socket without a password and an application role over TCP
with a password (scram-sha-256). PostgreSQL refuses to run as root: when this process is root,
every server command runs as the `postgres` system user (`runuser`), which owns the folder.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cairn.errors import CairnError

SYSTEM_USER = "postgres"
"""The unprivileged system user the server runs as when this process is root."""


class PostgresServerError(CairnError):
    """Raised when the throwaway server cannot be found, created, started or stopped."""


def find_bindir() -> Path | None:
    """The folder holding `initdb` and `pg_ctl`: $CAIRN_PG_BINDIR, the newest
    /usr/lib/postgresql/N/bin, `pg_config --bindir`, or `initdb` on PATH; None if none."""
    candidates: list[str] = []
    if os.environ.get("CAIRN_PG_BINDIR"):
        candidates.append(os.environ["CAIRN_PG_BINDIR"])
    versions = glob.glob("/usr/lib/postgresql/*/bin")
    candidates += sorted(versions, key=lambda p: int(Path(p).parent.name), reverse=True)
    pg_config = shutil.which("pg_config")
    if pg_config:
        found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        candidates.append(found.stdout.strip())
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).parent))
    for folder in candidates:
        if folder and all((Path(folder) / tool).is_file() for tool in ("initdb", "pg_ctl")):
            return Path(folder)
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresServer:
    """One server in `root` (data in `root/data`, log in `root/server.log`) on `port`.

    `start()` creates and starts it with one application role (`role`, `password`, owner of
    the database `role`); `url` is that role's connection URL. The role is not a superuser and
    has no BYPASSRLS, so row-level security applies to it.
    """

    bindir: Path
    root: Path
    port: int
    role: str = "cairn"
    password: str = field(default_factory=lambda: secrets.token_hex(12))
    settings: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, bindir: Path | None = None, **settings: str) -> PostgresServer:
        """A server in a new temporary folder on a free port (not started yet)."""
        found = bindir or find_bindir()
        if found is None:
            raise PostgresServerError("no PostgreSQL binaries found (initdb, pg_ctl)")
        root = Path(tempfile.mkdtemp(prefix="cairn-pg-"))
        return cls(bindir=found, root=root, port=free_port(), settings=settings)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def url(self) -> str:
        """The application role's URL (TCP, password)."""
        return self.url_for(self.role)

    def url_for(self, database: str) -> str:
        """The application role's URL for another database of this server."""
        return f"postgresql://{self.role}:{self.password}@127.0.0.1:{self.port}/{database}"

    @property
    def admin_conninfo(self) -> str:
        """The superuser's connection string (the socket in `root`, no password)."""
        return f"host={self.root} port={self.port} user=postgres dbname=postgres"

    def _run(self, tool: str, *args: str, timeout: float = 120.0) -> None:
        command: list[str] = [str(self.bindir / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", SYSTEM_USER, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()
            raise PostgresServerError(
                f"{tool} {args[0] if args else ''} failed: {detail[-1] if detail else '?'}"
            )

    def start(self) -> PostgresServer:
        """initdb, start, and create the application role and its database."""
        if os.geteuid() == 0:
            shutil.chown(self.root, SYSTEM_USER, SYSTEM_USER)
        self.root.chmod(0o700)
        self._run(
            "initdb",
            "-D", str(self.data),
            "-U", "postgres",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )  # fmt: skip
        self._start()
        self.admin(
            f"CREATE ROLE {self.role} LOGIN PASSWORD '{self.password}'"
            " NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE",
        )
        self.create_database(self.role)
        return self

    def _start(self) -> None:
        options = {
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": str(self.root),
            "max_connections": "120",
            **self.settings,
        }
        flags = " ".join(f"-c {key}={value}" for key, value in options.items())
        log = self.root / "server.log"
        self._run("pg_ctl", "start", "-D", str(self.data), "-l", str(log), "-w", "-t", "60",
                  "-o", f"-p {self.port} {flags}")  # fmt: skip

    def restart(self) -> None:
        """Stop the server (fast: connections are cut) and start it again, waiting for it."""
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "fast", "-w", "-t", "60")
        self._start()

    def create_database(self, name: str) -> str:
        """A new empty database owned by the application role; returns its URL."""
        self.admin(f'CREATE DATABASE "{name}" OWNER {self.role}')
        return self.url_for(name)

    def admin(self, *statements: str, database: str = "postgres") -> None:
        """Run statements as the superuser."""
        import psycopg

        conninfo = self.admin_conninfo.replace("dbname=postgres", f"dbname={database}")
        with psycopg.connect(conninfo, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement.encode())

    def stop(self) -> None:
        """Stop the server at once and delete its folder."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
