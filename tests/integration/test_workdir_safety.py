"""Workdirs are safe by default, written as the steps that went wrong: `--workdir` given `/` or a
home folder was written into; a reading command given a typo made the folder and answered "No
memories"; a second game played in the default folder mixed its rooms into the first game's
store and map and overwrote its report."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cairn.cli import main
from cairn.errors import WorkdirError
from cairn.workdir import MARKER, check_ours, story_identity
from tests.conftest import SHARED_ROMS

ROOT = Path(__file__).resolve().parents[2]
ZORK = SHARED_ROMS / "zork1.z5"
TAVERN = ROOT / "scenarios" / "tavern_session.yaml"
QUICK = ("--episodes", "1", "--max-turns", "3")
needs_zork = pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file at {ZORK}")


def invoke(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def cairn(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it (a CairnError is one line and exit 2)."""
    return subprocess.run(
        [sys.executable, "-m", "cairn", *map(str, args)],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Everything under `folder`: files with their bytes, folders as None."""
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
        for p in sorted(folder.rglob("*"))
    }


def game_of(path: Path) -> object:
    return json.loads(path.read_text())["game"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A folder of someone's own files, as a home folder is."""
    home = tmp_path / "home"
    (home / "projects").mkdir(parents=True)
    (home / ".bashrc").write_text("export PS1='$ '\n")
    (home / "notes.txt").write_text("mine\n")
    return home


@pytest.fixture
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A current folder without cairn settings: the default workdir applies."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("CAIRN_WORKDIR", raising=False)
    return cwd


# -- 1: a command that writes takes a new or empty folder, or one cairn made -----------------


@pytest.mark.parametrize(
    "command",
    [
        ["play", *QUICK],
        ["play", *QUICK, "--fresh"],
        ["play", *QUICK, "--store", "sqlite"],
        ["demo"],
        ["memories", "import", "EXPORT"],
        ["replay", str(TAVERN)],
    ],
    ids=["play", "play-fresh", "play-sqlite", "demo", "import", "replay"],
)
def test_a_folder_of_someone_s_files_is_refused_and_left_as_it_was(
    home: Path, tmp_path: Path, command: list[str]
) -> None:
    export = tmp_path / "export.jsonl"
    export.write_text('{"cairn_export": 1}\n')
    before = snapshot(home)
    args = [str(export) if arg == "EXPORT" else arg for arg in command]
    result = invoke(*args, "--workdir", home)
    assert isinstance(result.exception, WorkdirError), result.output
    message = str(result.exception)
    assert message.startswith(f"{home}: not a folder cairn made (it holds .bashrc, notes.txt")
    assert "--workdir NEW_FOLDER" in message
    assert snapshot(home) == before


def test_the_refusal_is_one_line_and_exit_2(home: Path, tmp_path: Path) -> None:
    done = cairn("play", *QUICK, "--workdir", home, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {home}: not a folder cairn made")
    assert sorted(p.name for p in home.iterdir()) == [".bashrc", "notes.txt", "projects"]


def test_the_file_system_root_is_refused() -> None:
    with pytest.raises(WorkdirError, match=r"^/: not a folder cairn made"):
        check_ours(Path("/"))


def test_new_and_empty_folders_are_taken_and_marked_and_played_again(tmp_path: Path) -> None:
    new, empty = tmp_path / "new" / "deeper", tmp_path / "empty"
    empty.mkdir()
    for folder in (new, empty, new):  # the same game again in its own folder: played on
        result = invoke("play", *QUICK, "--workdir", folder)
        assert result.exit_code == 0, result.output
        marker = json.loads((folder / MARKER).read_text())
        assert marker["game"] == "demo-world-1" and marker["made_by"] == "cairn"


@pytest.mark.parametrize("fresh", [False, True], ids=["again", "fresh"])
def test_a_workdir_from_before_the_marker_is_cairn_s(tmp_path: Path, fresh: bool) -> None:
    work = tmp_path / ".cairn-demo"  # `make demo`: --workdir .cairn-demo --fresh
    assert invoke("play", *QUICK, "--workdir", work).exit_code == 0
    (work / MARKER).unlink()  # as cairn left a workdir before the marker existed
    result = invoke("play", *QUICK, "--workdir", work, *(["--fresh"] if fresh else []))
    assert result.exit_code == 0, result.output
    assert game_of(work / MARKER) == "demo-world-1"


def test_replay_folders_from_before_the_marker_are_replayed_into(tmp_path: Path) -> None:
    root = tmp_path / "replays"
    assert invoke("replay", TAVERN, "--workdir", root).exit_code == 0
    (root / MARKER).unlink()  # left: the scenario's folder with its .cairn-replay
    result = invoke("replay", TAVERN, "--workdir", root)
    assert result.exit_code == 0, result.output
    assert game_of(root / MARKER) == "replays"


def _sqlite(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (x)")


@pytest.mark.parametrize(
    ("name", "content", "ours"),
    [
        ("Memories.md", "# Location Memories\n\n## Location 1: Hall\n", True),
        ("Memories.md", "\ufeff\n## World\n", True),
        ("Memories.md", "", True),
        ("Memories.md", "# What I remember of 2019\n", False),
        ("memories.sqlite3", _sqlite, True),
        ("memories.sqlite3", "not a database", False),
        ("report.json", '{"game": "zork1", "episodes": []}', True),
        ("report.json", '{"title": "Q3 report"}', False),
        ("map.json", '{"version": 1, "rooms": []}', True),
        ("map.json", '{"type": "FeatureCollection", "features": []}', False),
        (MARKER, "my own dot file", False),
    ],
)
def test_what_counts_as_cairn_s_files_from_before_the_marker(
    tmp_path: Path, name: str, content: object, ours: bool
) -> None:
    (tmp_path / "other.txt").write_text("a file beside it")
    if callable(content):
        content(tmp_path / name)
    else:
        (tmp_path / name).write_text(str(content))
    if ours:
        assert check_ours(tmp_path) is None
    else:
        with pytest.raises(WorkdirError, match="--workdir NEW_FOLDER"):
            check_ours(tmp_path)


# -- 2: a command that reads never makes a folder -------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["memories", "show"],
        ["memories", "show", "--store", "sqlite"],
        ["memories", "search", "lamp"],
        ["memories", "export"],
        ["memories", "export", "--format", "jsonl"],
        ["map"],
        ["map", "--format", "svg"],
        ["report"],
    ],
)
def test_a_reading_command_given_a_missing_folder_names_it_and_makes_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    typo = tmp_path / "typo"
    result = invoke(*command, "--workdir", typo)
    assert isinstance(result.exception, WorkdirError), result.output
    assert str(result.exception).startswith(f"{typo}: no such folder")
    assert "No memories" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_memories_show_of_a_typo_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = cairn("memories", "show", "--workdir", "typo", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: typo: no such folder; give --workdir the folder of a run"
    ]
    assert list(tmp_path.iterdir()) == []


def test_reading_with_no_workdir_before_any_play_makes_nothing(no_config: Path) -> None:
    result = invoke("memories", "show")
    assert isinstance(result.exception, WorkdirError)
    assert str(result.exception).startswith("cairn-runs: no such folder")
    assert list(no_config.iterdir()) == []


# -- 3: one game per workdir; by default one folder per game --------------------------------


@needs_zork
def test_the_default_workdir_is_one_folder_per_game_and_readers_ask_which(
    no_config: Path,
) -> None:
    assert invoke("play", *QUICK).exit_code == 0
    shown = invoke("memories", "show")  # one game played: its folder is read
    assert shown.exit_code == 0 and "Entrance Hall" in shown.output
    assert invoke("play", "--game", ZORK, *QUICK).exit_code == 0
    runs = no_config / "cairn-runs"
    demo, zork = runs / "demo-world-1", runs / story_identity(ZORK).key
    assert sorted(runs.iterdir()) == [demo, zork]
    assert game_of(demo / "report.json") == "tw-cairn-demo-1"
    assert game_of(zork / "report.json") == "zork1"
    assert "Entrance Hall" not in (zork / "Memories.md").read_text()
    assert "Entrance Hall" not in (zork / "map.json").read_text()
    both = invoke("memories", "show")
    assert isinstance(both.exception, WorkdirError)
    assert str(both.exception) == (
        f"cairn-runs: holds the runs of 2 games ({demo.relative_to(no_config)},"
        f" {zork.relative_to(no_config)}); give --workdir the one to read"
    )


@needs_zork
def test_another_game_in_a_workdir_is_refused_naming_both_and_fresh_sets_the_run_aside(
    tmp_path: Path,
) -> None:
    work = tmp_path / "run"
    assert invoke("play", *QUICK, "--workdir", work).exit_code == 0
    before = snapshot(work)
    result = invoke("play", "--game", ZORK, *QUICK, "--workdir", work)
    assert isinstance(result.exception, WorkdirError), result.output
    message = str(result.exception)
    assert message.startswith(
        f"{work}: holds a run of the built-in demo world (seed 1), not of zork1.z5 (sha256 "
    )
    assert "--workdir NEW_FOLDER" in message and "--fresh" in message
    narrative = invoke("demo", "--workdir", work)
    assert "not of the narrative demo" in str(narrative.exception)
    assert snapshot(work) == before
    fresh = invoke("play", "--game", ZORK, *QUICK, "--workdir", work, "--fresh")
    assert fresh.exit_code == 0, fresh.output
    (aside,) = (work / "backups").iterdir()
    assert game_of(aside / "report.json") == "tw-cairn-demo-1"
    assert game_of(aside / MARKER) == "demo-world-1"  # which game the files set aside are of
    assert game_of(work / MARKER) == story_identity(ZORK).key
    assert game_of(work / "report.json") == "zork1"


@needs_zork
def test_another_game_in_a_workdir_from_before_the_marker_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "run"
    assert invoke("play", *QUICK, "--workdir", work).exit_code == 0
    (work / MARKER).unlink()
    result = invoke("play", "--game", ZORK, *QUICK, "--workdir", work)
    assert isinstance(result.exception, WorkdirError), result.output
    assert "holds a run of 'tw-cairn-demo-1' (its report.json says so)" in str(result.exception)


def test_a_game_is_its_story_file_s_bytes_not_its_path(tmp_path: Path) -> None:
    story = tmp_path / "tale.z5"
    story.write_bytes(b"story one")
    copy = tmp_path / "elsewhere" / "tale.z5"
    copy.parent.mkdir()
    copy.write_bytes(b"story one")
    assert story_identity(story) == story_identity(copy)
    copy.write_bytes(b"story two, a new release")
    assert story_identity(story).key != story_identity(copy).key
