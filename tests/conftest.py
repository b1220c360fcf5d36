"""Test-wide set-up: the story files of ../shared/roms (beside the project) are where
`cairn replay` and the scenario tests look for games (CAIRN_ROMS), unless set already; the
PostgreSQL server some tests start is stopped at the end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.postgres import stop_server

SHARED_ROMS = Path(__file__).resolve().parents[1].parent / "shared" / "roms"
os.environ.setdefault("CAIRN_ROMS", str(SHARED_ROMS))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the PostgreSQL server the postgres tests started, if they did."""
    stop_server()
