"""Data safety of settings and --fresh, written as the attacks that broke them: an empty file
name that made --fresh delete the workdir, a user's backup deleted, paths as file names,
unparseable settings giving tracebacks, unknown variables ignored silently, unbounded backups."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from cairn.cli_options import settings_for
from cairn.errors import ConfigError
from cairn.play.fresh import set_aside_run_files
from cairn.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]


def cairn(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-m", "cairn", *args],
        cwd=cwd,
        env={**full, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_empty_memory_file_name_is_refused_and_fresh_deletes_nothing(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    done = cairn("play", "--fresh", "--workdir", str(work), cwd=tmp_path, CAIRN_MEMORY_FILE="")
    assert done.returncode == 2, done.stderr
    assert "memory_file" in done.stderr and "Traceback" not in done.stderr
    assert (work / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("name", ["/etc/passwd", "../outside.md", "sub/Memories.md", "..", ""])
def test_file_name_settings_are_plain_names(name: str) -> None:
    with pytest.raises(ConfigError, match="plain file name"):
        load_settings(memory_file=name) if name else load_settings(report_file="")


def test_fresh_moves_only_the_files_cairn_made_by_exact_name_into_a_dated_folder(
    tmp_path: Path,
) -> None:
    settings = load_settings(workdir=tmp_path)
    made = ["Memories.md", "Memories.md.1", "map.json", "report.json", "memories.sqlite3-wal"]
    mine = ["Memories.md.bak", "Memories.md.old", "map.json.mine", "notes.txt"]
    for name in [*made, *mine, "Memories.md.lock"]:
        (tmp_path / name).write_text(name)
    aside = set_aside_run_files(settings, now=datetime(2026, 11, 23, 14, 5, 9))
    assert aside == tmp_path / "backups" / "20261123-140509"
    assert sorted(p.name for p in aside.iterdir()) == sorted(made)  # nothing deleted
    assert all((aside / name).read_text() == name for name in made)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*mine, "Memories.md.lock", "backups"])
    again = set_aside_run_files(settings, now=datetime(2026, 11, 23, 14, 5, 9))
    assert again is None  # nothing left to move


def test_unparseable_settings_are_one_line_errors_with_exit_2(tmp_path: Path) -> None:
    bad_env = cairn(
        "memories", "show", "--workdir", str(tmp_path), cwd=tmp_path, CAIRN_MODELS="notjson"
    )
    assert bad_env.returncode == 2 and "models" in bad_env.stderr
    assert "Traceback" not in bad_env.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.cairn\nstore = 'x'\n")
    bad_toml = cairn("memories", "show", "--workdir", str(tmp_path), cwd=tmp_path)
    assert bad_toml.returncode == 2 and "pyproject.toml" in bad_toml.stderr
    (tmp_path / "pyproject.toml").write_text("[tool]\ncairn = 5\n")
    not_table = cairn("memories", "show", "--workdir", str(tmp_path), cwd=tmp_path)
    assert not_table.returncode == 2 and "[tool.cairn]" in not_table.stderr
    assert "Traceback" not in bad_toml.stderr + not_table.stderr


def test_an_unknown_cairn_variable_is_warned_about(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("CAIRN_BOGUS", "1")
    with caplog.at_level(logging.WARNING):
        load_settings()
    assert "CAIRN_BOGUS is not a cairn setting" in caplog.text


def test_a_workdir_holding_a_sqlite_store_reads_the_settings_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The store found in the workdir is taken as --store would be, without reading the
    environment again (which warned twice about an unknown variable)."""
    (tmp_path / "memories.sqlite3").touch()
    monkeypatch.delenv("CAIRN_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CAIRN_BOGUS", "1")
    with caplog.at_level(logging.WARNING):
        settings = settings_for(tmp_path, None)
    assert settings.store == "sqlite" and "store" in settings.model_fields_set
    assert caplog.text.count("CAIRN_BOGUS is not a cairn setting") == 1


def test_backup_count_has_an_upper_bound() -> None:
    with pytest.raises(ConfigError, match="backup_count"):
        load_settings(backup_count=1_000_000)


def test_check_prints_each_problem_once(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    path.write_text(
        "# Location Memories\n\n## Location 1: Hall\n\n### Memories\n\n"
        "**[NOPE] A broken block** *(Ep1, T1)*\nText.\n"
    )
    done = cairn("memories", "check", str(path), cwd=tmp_path)
    assert done.returncode == 1
    out = done.stdout + done.stderr
    line = next(ln for ln in done.stdout.splitlines() if "Memories.md:" in ln)
    problem = line.split(": ", 1)[1]
    assert out.count(problem) == 1, out


@pytest.mark.parametrize("store", ["markdown", "sqlite"])
@pytest.mark.parametrize(
    "command", [["play", "--episodes", "1", "--max-turns", "1"], ["memories", "show"]]
)
def test_an_impossible_workdir_is_a_one_line_error(
    tmp_path: Path, store: str, command: list[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = cairn(*command, "--store", store, "--workdir", str(blocker / "sub"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    # play makes its workdir; a command that reads makes none (test_workdir_safety.py)
    expected = "no such folder" if command[0] == "memories" else "cannot create the folder"
    assert expected in done.stderr and "Traceback" not in done.stderr
    assert blocker.read_text() == "not a folder"


@pytest.fixture
def read_only_workdir(tmp_path: Path) -> Iterator[Path]:
    """A workdir holding both stores' files, on a read-only (bind-mounted) file system."""
    from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
    from cairn.adapters.storage.sqlite_store import SqliteMemoryStore
    from cairn.models.memory import MemoryEntry, MemoryScope

    mount = tmp_path / "ro"
    work = mount / "work"
    for store in (
        MarkdownMemoryStore(work / "Memories.md"),
        SqliteMemoryStore(work / "memories.sqlite3"),
    ):
        with store.transaction() as tx:
            tx.add(MemoryEntry(scope=MemoryScope.WORLD, title="Kept safe", text="Written."))
        store.close()
    bound = subprocess.run(["mount", "--bind", str(mount), str(mount)], capture_output=True)
    if bound.returncode != 0:
        pytest.skip(f"cannot bind-mount a folder read-only here: {bound.stderr.strip()!r}")
    try:
        subprocess.run(
            ["mount", "-o", "remount,ro,bind", str(mount)], check=True, capture_output=True
        )
        yield work
    finally:
        subprocess.run(["umount", str(mount)], check=True)


@pytest.mark.parametrize("store", ["markdown", "sqlite"])
def test_play_on_a_read_only_file_system_is_a_one_line_error(
    read_only_workdir: Path, store: str
) -> None:
    before = {p.name: p.read_bytes() for p in read_only_workdir.iterdir()}
    done = cairn(
        "play",
        "--episodes",
        "1",
        "--max-turns",
        "1",
        "--store",
        store,
        "--workdir",
        str(read_only_workdir),
        cwd=read_only_workdir.parent.parent,
    )
    assert done.returncode == 2, done.stderr
    assert "Read-only file system" in done.stderr or "read-only file system" in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert "Traceback" not in done.stderr and len(errors) == 1
    assert {p.name: p.read_bytes() for p in read_only_workdir.iterdir()} == before


def test_memories_show_reads_a_markdown_store_on_a_read_only_file_system(
    read_only_workdir: Path,
) -> None:
    done = cairn("memories", "show", "--workdir", str(read_only_workdir), cwd=read_only_workdir)
    assert done.returncode == 0, done.stderr
    assert "Kept safe" in done.stdout


def test_memories_show_names_the_read_only_file_system_for_sqlite(
    read_only_workdir: Path,
) -> None:
    done = cairn(
        "memories",
        "show",
        "--store",
        "sqlite",
        "--workdir",
        str(read_only_workdir),
        cwd=read_only_workdir,
    )
    assert done.returncode == 2, done.stderr
    assert "read-only file system" in done.stderr and "Traceback" not in done.stderr
