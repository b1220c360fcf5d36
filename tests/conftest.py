"""Test-wide set-up: the story files of $CAIRN_ROMS, else ../shared/roms (beside the
project), are where `cairn replay` and the scenario tests look for games; the
PostgreSQL server some tests start is stopped at the end."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.postgres import stop_server

SHARED_ROMS = Path(
    os.environ.get("CAIRN_ROMS") or Path(__file__).resolve().parents[1].parent / "shared" / "roms"
)
"""Where every test looks for story files: $CAIRN_ROMS when set, else ../shared/roms beside
the project (a test that needs one and finds none is skipped, saying which file it wanted)."""
os.environ.setdefault("CAIRN_ROMS", str(SHARED_ROMS))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the PostgreSQL server the postgres tests started, if they did."""
    stop_server()


def interrupt_after_turns(
    process: subprocess.Popen[str], work: Path, turns: int, signals: int = 1, gap: float = 0.1
) -> str:
    """Wait until `cairn play` in `process` has written `turns` transcript lines into `work`,
    send it Ctrl-C `signals` times `gap` seconds apart, and return its standard error (the
    process is killed if it does not end)."""
    try:
        deadline = time.monotonic() + 120
        transcripts: list[Path] = []
        while time.monotonic() < deadline:
            transcripts = list(work.glob("runs/*/transcript.jsonl"))
            if transcripts and transcripts[0].read_text().count("\n") >= turns:
                break
            time.sleep(0.05)
        assert transcripts, "the run never started"
        for number in range(signals):
            if number:
                time.sleep(gap)
            process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return err
