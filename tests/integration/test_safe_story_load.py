"""A story file whose load never ends is refused, not played (issue 37, item 3): its header
is sound, so only a bound on the load itself can stop it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.adapters.game import load_probe
from cairn.adapters.game.story_file import check_story_file
from cairn.errors import GameError

pytest.importorskip("jericho", reason="the load bound is Jericho's: pip install 'cairn[jericho]'")

ROOT = Path(__file__).resolve().parents[2]
JUMP_TO_ITSELF = b"\x8c\xff\xff"
QUIT = b"\xba"


def tiny_story(path: Path, first_instruction: bytes) -> Path:
    """A 1 KB version 5 story file whose code starts at 0x100 with `first_instruction`."""
    size = 1024
    data = bytearray(size)
    data[0] = 5
    for offset, value in ((0x04, 0x100), (0x06, 0x100), (0x08, 0x60), (0x0A, 0x80)):
        data[offset : offset + 2] = value.to_bytes(2, "big")  # high memory, PC, dictionary, objects
    for offset, value in ((0x0C, 0x40), (0x0E, 0x100), (0x1A, size // 4)):
        data[offset : offset + 2] = value.to_bytes(2, "big")  # globals, static memory, length
    data[0x100 : 0x100 + len(first_instruction)] = first_instruction
    path.write_bytes(bytes(data))
    return path


def test_a_story_file_that_spins_in_its_load_is_refused(tmp_path: Path) -> None:
    """`cairn play` on it ends with a clear error; before the bound it ran at 99% CPU until
    killed (here: the 120 s limit), Ctrl-C unheard."""
    story = tiny_story(tmp_path / "spin.z5", JUMP_TO_ITSELF)
    check_story_file(story)  # the header is sound: only the load shows it
    done = subprocess.run(
        [
            *(sys.executable, "-m", "cairn", "play", "--game", str(story)),
            *("--workdir", str(tmp_path / "work"), "--episodes", "1", "--max-turns", "1"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "CAIRN_STORY_LOAD_TIMEOUT": "1"},
    )
    assert done.returncode != 0
    assert "spin.z5: the interpreter did not finish loading" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_bound_is_kept_by_the_game_adapter(tmp_path: Path) -> None:
    from cairn.adapters.game.jericho_game import JerichoGame

    story = tiny_story(tmp_path / "spin.z5", JUMP_TO_ITSELF)
    with pytest.raises(GameError, match=r"within 0\.5 s"):
        JerichoGame(story, load_timeout=0.5)


def test_a_story_file_that_loads_is_probed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    story = tiny_story(tmp_path / "quits.z5", QUIT)
    load_probe.probe_load(story, None)

    def no_second_probe(*args: object, **kwargs: object) -> None:
        raise AssertionError("probed again")

    monkeypatch.setattr(load_probe.subprocess, "run", no_second_probe)
    load_probe.probe_load(story, 7)
