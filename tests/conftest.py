"""Test-wide set-up: the story files of ../shared/roms (beside the project) are where
`cairn replay` and the scenario tests look for games (CAIRN_ROMS), unless set already."""

from __future__ import annotations

import os
from pathlib import Path

SHARED_ROMS = Path(__file__).resolve().parents[1].parent / "shared" / "roms"
os.environ.setdefault("CAIRN_ROMS", str(SHARED_ROMS))
