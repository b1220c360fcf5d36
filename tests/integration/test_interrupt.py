"""Ctrl-C during `cairn play` ends the current turn cleanly, writes report.json, the map and the
knowledge base, and exits 130 (it used to exit 1 with `Aborted!` and write none of them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SHARED_ROMS, interrupt_after_turns

ROOT = Path(__file__).resolve().parents[2]
ZORK = SHARED_ROMS / "zork1.z5"


@pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file at {ZORK}")
def test_ctrl_c_ends_the_turn_saves_the_run_and_exits_130(tmp_path: Path) -> None:
    work = tmp_path / "work"
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "cairn", "play", "--game", str(ZORK)),
            *("--workdir", str(work), "--episodes", "3", "--max-turns", "5000"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    err = interrupt_after_turns(process, work, turns=30)
    assert process.returncode == 130, err
    assert "Aborted!" not in err and "Traceback" not in err
    report = json.loads((work / "report.json").read_text())
    assert report["interrupted"] is True
    assert len(report["episodes"]) == 1 and report["episodes"][0]["turns"] < 5000
    assert (work / "map.json").is_file() and (work / "knowledgebase.md").is_file()
    assert "<!-- cairn " in (work / "Memories.md").read_text()
    assert "interrupted" in err
