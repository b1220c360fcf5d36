"""Issue 37 item 7: `memories show` and `search` print a memory's control sequences as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cairn.cli import main
from cairn.memory_api import Memory
from cairn.terminal_text import printable

NASTY = (
    "Lamp\x1b[2J here\x1b]0;pwned\x07 see \x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"
    " bell\x07 csi\x9b31m del\x7f nul-ish\x01\tend"
)
CONTROLS = {chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}


def _memories(args: list[str], folder: Path, store: str) -> Result:
    return CliRunner().invoke(main, ["memories", *args, "--workdir", str(folder), "--store", store])


@pytest.fixture(params=["markdown", "sqlite"])
def run(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    store = str(request.param)
    with Memory.open(tmp_path, store=store) as memory:
        memory.add(NASTY, title="Lamp\x1b]0;title\x07 note")
    with Memory.open(tmp_path, store=store) as memory:  # stored as it was given
        assert [e.text for e in memory.store.entries()] == [NASTY]
    return tmp_path, store


@pytest.mark.parametrize("args", [["show"], ["show", "--all"], ["search", "lamp"]], ids=" ".join)
def test_text_output_shows_escapes_and_obeys_none(run: tuple[Path, str], args: list[str]) -> None:
    folder, store = run
    result = _memories(args, folder, store)
    assert result.exit_code == 0, result.output
    assert not CONTROLS & set(result.output), repr(result.output)
    assert "Lamp\\x1b[2J here\\x1b]0;pwned\\x07" in result.output
    assert "\\x9b31m" in result.output and "\tend" in result.output


@pytest.mark.parametrize("args", [["show", "--json"], ["search", "--json", "lamp"]], ids=" ".join)
def test_json_output_escapes_every_control_and_keeps_the_text(
    run: tuple[Path, str], args: list[str]
) -> None:
    folder, store = run
    result = _memories(args, folder, store)
    assert result.exit_code == 0, result.output
    assert not (CONTROLS - {"\n"}) & set(result.output), repr(result.output)
    found = json.loads(result.output)
    memory = found[0] if "show" in args else found[0]["memory"]
    assert memory["text"] == NASTY


def test_printable_keeps_newlines_tabs_and_other_text() -> None:
    assert printable("a\nb\tc é ☃ \u200b") == "a\nb\tc é ☃ \u200b"
    assert printable("\x1b[31mred\x1b[0m\x85") == "\\x1b[31mred\\x1b[0m\\x85"
